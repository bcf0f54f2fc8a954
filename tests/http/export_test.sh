#!/usr/bin/env bash
# Every export of a varied request set (tests/http/export_requests.json)
# against the four real services, checked with each orchestrator's own rules
# by export_check.py: its published schema, its names, and its selection rule
# (SkyPilot's ordered fallback, dstack's cheapest matching offer, Karpenter's
# weights). Every alternative file of an answer is checked; the CLI's
# --export gives the same bytes as ?format=.
#   tests/http/export_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
PY=/usr/bin/python3
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-export.XXXXXX)
trap 'stack_stop; [[ -n ${KEEP_TMP:-} ]] || rm -rf "$TMP"' EXIT
bash "$ROOT/tests/tools/ensure.sh" || exit 1
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
BASE=http://$GATEWAY_HTTP

passed=0 failed=0 files=0
check() {  # name, then a command that must succeed
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
}
names=$($PY -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["requests"]))' "$ROOT/tests/http/export_requests.json")
[[ -n "$names" ]] || { echo "no requests"; exit 1; }
for name in $names; do
  $PY -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["requests"][sys.argv[2]]))' \
    "$ROOT/tests/http/export_requests.json" "$name" > "$TMP/$name.req.json"
  code=$(curl -s -o "$TMP/$name.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary @"$TMP/$name.req.json" "$BASE/v1/recommend")
  check "$name: answered" test "$code" = 200
  for format in skypilot dstack karpenter; do
    alt=1 alts=1
    while (( alt <= alts )); do
      out="$TMP/$name.$format.$alt.yaml"
      code=$(curl -s -D "$out.headers" -o "$out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary @"$TMP/$name.req.json" "$BASE/v1/recommend?format=$format&alternative=$alt")
      if [[ $code == 404 ]]; then
        # Nothing this orchestrator can run as planned: the error names every left-out offer.
        check "$name $format: 404 names what was left out" grep -q 'none that' "$out"
        break
      fi
      alts=$(sed -n 's/^[Xx]-[Ee]xport-[Aa]lternatives: *\([0-9]*\).*/\1/p' "$out.headers")
      check "$name $format $alt/$alts: schema, names and selection" \
        $PY "$ROOT/tests/http/export_check.py" "$format" "$out" "$TMP/$name.json" "$out.headers" "$alt"
      files=$((files + 1))
      alt=$((alt + 1))
    done
  done
done
# The CLI writes the same files from the same library.
# (finetune-8b-clouds: clouds every orchestrator runs on; the cheapest LoRA
# answers are marketplaces since flagged spot prices no longer rank.)
cli_args=(--model=llama-3.1-8b --task=full_finetune --train_tokens=1B --seq_len=4096
          --providers=aws,gcp,azure,lambda,nebius,runpod --max_results=8)
for format in skypilot dstack karpenter; do
  "$BUILD_DIR/services/cli/gpu-advisor" recommend --gateway="$GATEWAY_ADDR" "${cli_args[@]}" \
    --export="$format" > "$TMP/cli.$format.yaml" 2> "$TMP/cli.$format.err"
  check "CLI --export=$format: exit 0" test -s "$TMP/cli.$format.yaml"
  check "CLI --export=$format == ?format=$format" cmp -s "$TMP/cli.$format.yaml" "$TMP/finetune-8b-clouds.$format.1.yaml"
done
echo "export_test: $files files checked; $passed passed, $failed failed"
(( files >= 20 )) || { echo "export_test: expected at least 20 export files"; exit 1; }
[[ $failed == 0 ]]
