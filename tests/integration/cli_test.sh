#!/usr/bin/env bash
# The gpu-advisor CLI against the four real services on ephemeral ports:
# tables by default, JSON with --json, one-line errors with a non-zero exit.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
CLI=$BUILD_DIR/services/cli/gpu-advisor
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
LOG_DIR=$(mktemp -d /tmp/gpu-advisor-cli.XXXXXX)
trap 'stack_stop; rm -rf "$LOG_DIR"' EXIT
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$LOG_DIR" || exit 1
SERVERS=(--gateway="$GATEWAY_ADDR" --catalog="$CATALOG_ADDR" --sizing="$SIZING_ADDR")

passed=0 failed=0
check() {  # name, then a command that must succeed
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "PASS  $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"
  fi
}
json() {  # python expression over `d` (the parsed JSON on stdin) that must be true
  /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"
}

out=$("$CLI" recommend "${SERVERS[@]}" --model=llama-3.1-8b --task=lora --train_tokens=5e7 \
        --seq_len=2048 --max_results=4)
echo "$out" | head -8
check "recommend prints the table header" grep -q "^RANK  PROVIDER  INSTANCE .*USD/H  HOURS  TOTAL USD  MEM FREE  TOP WARNING" <<<"$out"
check "recommend ranks 1..4" bash -c '[[ "$(awk "/^[0-9]+ /{print \$1}" <<<"$1" | tr "\n" " ")" == "1 2 3 4 " ]]' _ "$out"
check "recommend explains #1" grep -q "^#1 because:" <<<"$out"
check "recommend names the versions it used" grep -q "^Catalog .* prices .* as of 20" <<<"$out"

js=$("$CLI" recommend "${SERVERS[@]}" --model=llama-3.1-8b --task=lora --train_tokens=5e7 --seq_len=2048 --json)
check "recommend --json is the RecommendResponse, sorted by total cost" json \
  'len(d["recommendations"]) > 1 and all(a["cost"]["total_usd"] <= b["cost"]["total_usd"] for a, b in zip(d["recommendations"], d["recommendations"][1:]))' <<<"$js"

est=$("$CLI" estimate "${SERVERS[@]}" --model=llama-3.1-8b --task=full_finetune --train_tokens=1e9 \
        --seq_len=4096 --gpu=H100-SXM --gpus=8)
echo "$est" | head -3
check "estimate prints the memory breakdown" grep -q "^optimizer" <<<"$est"
check "estimate prints plan, throughput and hours" bash -c 'grep -q "^plan: " <<<"$1" && grep -q "^throughput: " <<<"$1" && grep -q "^estimated hours: " <<<"$1"' _ "$est"

offers=$("$CLI" offers "${SERVERS[@]}" --gpu=H100 --page_size=200)
check "offers filters by GPU alias" bash -c '[[ -n "$(awk "NR>1 && /H100/" <<<"$1")" && -z "$(awk "NR>1 && !/H100|offers/ && NF" <<<"$1")" ]]' _ "$offers"
check "gpus lists the datasheet specs" bash -c "'$CLI' gpus ${SERVERS[*]} | grep -Eq '^H100-SXM +NVIDIA +80 GB +HBM +3.35 +989'"
check "models lists the presets" bash -c "'$CLI' models ${SERVERS[*]} | grep -q '^llama-3.1-70b '"
check "health reports SERVING" bash -c "'$CLI' health --target=$GATEWAY_ADDR | grep -q SERVING"

err=$("$CLI" recommend "${SERVERS[@]}" --task=lora --params=-1 --train_tokens=1e9 2>&1 >/dev/null); code=$?
check "bad workload: one line naming the field, exit 2" bash -c '[[ $2 == 2 && $(wc -l <<<"$1") == 1 ]] && grep -q "INVALID_ARGUMENT: workload.model.params" <<<"$1"' _ "$err" "$code"
err=$("$CLI" frobnicate 2>&1 >/dev/null); code=$?
check "unknown command: one line, exit 2" bash -c '[[ $2 == 2 && $(wc -l <<<"$1") == 1 ]] && grep -q "unknown command" <<<"$1"' _ "$err" "$code"
err=$("$CLI" recommend --gateway=127.0.0.1:1 --timeout_seconds=2 --model=llama-3.1-8b --task=lora 2>&1 >/dev/null); code=$?
check "unreachable gateway: UNAVAILABLE, exit 1" bash -c '[[ $2 == 1 ]] && grep -q "UNAVAILABLE" <<<"$1"' _ "$err" "$code"
check "help lists the commands" bash -c "'$CLI' help | grep -q '^  recommend '"

echo "cli: $passed passed, $failed failed"
[[ $failed == 0 ]]
