#!/usr/bin/env bash
# The gpu-advisor CLI against the four real services on ephemeral ports, with
# only the gateway's address given (GPUADVISOR_GATEWAY):
#   - every example in the CLI's help and in README.md runs, exits 0 and
#     prints something sane (JSON where it asks for --json);
#   - tables by default, JSON with --json, errors as one line (or JSON under
#     --json) with exit 2 for bad input, 1 for an unreachable server, 3 when
#     nothing matches;
#   - subcommands have their own flags: a flag of another command is an error;
#   - offers and gpus keep answering from the gateway's replica when the
#     catalog service is gone.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
CLI=$BUILD_DIR/services/cli/gpu-advisor
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
LOG_DIR=$(mktemp -d /tmp/gpu-advisor-cli.XXXXXX)
trap 'stack_stop; rm -rf "$LOG_DIR"' EXIT
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$LOG_DIR" || exit 1
export GPUADVISOR_GATEWAY=$GATEWAY_ADDR
cd "$ROOT"  # examples name files relative to the repository root

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

# ---------------------------------------------------------------------------
# Every example of the help and of the README.
help_examples() {  # lines "  gpu-advisor ..." of the top-level and per-command help
  { "$CLI" --help; for c in recommend estimate offers gpus models sources health; do "$CLI" "$c" --help; done; } |
    sed -n 's/^  \(gpu-advisor .*\)$/\1/p' | sort -u
}
readme_examples() {  # gpu-advisor command lines inside ``` blocks, continuations joined
  /usr/bin/python3 - "$ROOT/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S):
    for line in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+", " ", line.strip())
        line = re.sub(r"^\$ ", "", line)
        if re.match(r"^(build/services/cli/)?gpu-advisor ", line):
            print(re.sub(r"\s+#.*$", "", line))
PY
}
mapfile -t HELP_EXAMPLES < <(help_examples)
mapfile -t README_EXAMPLES < <(readme_examples)
check "the help has examples (${#HELP_EXAMPLES[@]})" test "${#HELP_EXAMPLES[@]}" -ge 10
check "the README has examples (${#README_EXAMPLES[@]})" test "${#README_EXAMPLES[@]}" -ge 3
run_example() {  # one example line: exit 0, output, JSON if asked
  local line=$1 out code
  line=${line#build/services/cli/}
  line=${line#gpu-advisor }
  out=$(eval "\"\$CLI\" $line" 2>&1); code=$?
  if [[ $code != 0 ]]; then echo "  exit $code: $out" | head -5; return 1; fi
  if [[ -z "$out" ]]; then echo "  no output"; return 1; fi
  if [[ "$line" == *--json* ]]; then json 'True' <<<"$out" || { echo "  not JSON"; return 1; }; fi
  if grep -q "No flags matched" <<<"$out"; then echo "  absl's help"; return 1; fi
  return 0
}
for e in "${HELP_EXAMPLES[@]}"; do check "help example: $e" run_example "$e"; done
for e in "${README_EXAMPLES[@]}"; do check "README example: $e" run_example "$e"; done

# ---------------------------------------------------------------------------
# Output.
out=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --max_results=4)
echo "$out" | head -6
check "recommend prints the table header, P10-P90 beside hours and total" grep -Eq "^RANK  PROVIDER  INSTANCE .*BUY +PRICED +USD/H  HOURS  P10-P90 +TOTAL USD  P10-P90 +MEM FREE  TOP WARNING" <<<"$out"
check "recommend: #1 names the cheapest, the fastest and the best cost x time" grep -q "^  - cheapest: .*; fastest: .*; best cost x time: " <<<"$out"
check "every row names its price's source and age" bash -c '[[ $(grep -cE "^[0-9]+ .* (on-demand|spot|reserved) +[A-Za-z][A-Za-z0-9-]* [0-9]+[smhd]!? " <<<"$1") == 4 ]]' _ "$out"
check "recommend ranks 1..4" bash -c '[[ "$(awk "/^[0-9]+ /{print \$1}" <<<"$1" | tr "\n" " ")" == "1 2 3 4 " ]]' _ "$out"
check "recommend explains #1" grep -q "^#1 because:" <<<"$out"
check "recommend names the versions it used" grep -q "^Catalog .* price book " <<<"$out"
check "the footer states the oldest and newest price used" grep -qE "^Prices used: oldest 20[0-9-]+ \([0-9]+[smhd] old\), newest 20[0-9-]+" <<<"$out"
check "#1's notes name its price's source and date" grep -qE "^  - price: [A-Za-z0-9-]+, as of 20" <<<"$out"

# Price sources: the catalog's data files (and the refresher's sources when
# one runs), each with its age against its budget.
src=$("$CLI" sources)
echo "$src" | head -4
check "sources prints the table header" grep -qE "^SOURCE +KIND +RESULT +AGE +BUDGET +STALE +LAST SUCCESS +LAST ATTEMPT +OFFERS +PRICES +ROWS READ/KEPT +REJECTED" <<<"$src"
check "sources lists the AWS catalog snapshot, not stale" grep -qE "^C-AWS +file +ok +[0-9]+d +90d +20" <<<"$src"
check "sources shows the 2024 TPU prices as stale" grep -qE "^C-TPU +file +ok +[0-9]+d +90d +STALE +2024-12-23" <<<"$src"
srcj=$("$CLI" sources --json)
check "sources --json: every source has a name, kind, offers and an age" json \
  'len(d["sources"]) > 5 and all(s["name"] and s["kind"] in ("file", "refresh") and s["offers"] > 0 and int(s["age_seconds"]) >= 0 for s in d["sources"])' <<<"$srcj"

# Prices the load guards flag never rank: AWS p3.2xlarge's spot (88% below
# on-demand) is left out with a reason of its own, and `offers` marks it.
flag=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --providers=aws --regions=us-east-1 --gpu=V100 --purchase=spot --json)
check "a flagged spot price is excluded as suspect-price, never ranked" json \
  'all(r["purchase_option"] != "PURCHASE_OPTION_SPOT" or r["offer"]["id"] not in ("aws/p3.2xlarge/us-east-1", "aws/p3.16xlarge/us-east-1") for r in d.get("recommendations", [])) and any(e["reason"] == "EXCLUSION_REASON_SUSPECT_PRICE" and "likely stale" in e["detail"] for e in d["excluded"])' <<<"$flag"
offs=$("$CLI" offers --providers=aws --gpu=V100)
check "offers marks the flagged spot price and says why" grep -qE "p3.2xlarge .* [0-9.]+! .*likely stale" <<<"$offs"

# --tie_band=0: strict cost order (by default totals within the estimate's
# own uncertainty are a tie ranked by time, then risk).
js=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=5e7 --seq_len=2048 --tie_band=0 --json)
check "recommend --json --tie_band=0 is the RecommendResponse, sorted by total cost" json \
  'len(d["recommendations"]) > 1 and d["tie_band_fraction"] == 0 and all(a["cost"]["total_usd"] <= b["cost"]["total_usd"] for a, b in zip(d["recommendations"], d["recommendations"][1:]))' <<<"$js"
js=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=5e7 --seq_len=2048 --deadline_hours=100 --json)
check "recommend --json: intervals, the head, checks at P80 and the default tie band" json \
  'd["tie_band_fraction"] > 0 and d["head"]["cheapest"]["offer_id"] and all(r["estimated_hours_interval"]["p10"] < r["estimated_hours_interval"]["p90"] and r["total_usd_interval"]["p10"] < r["total_usd_interval"]["p90"] and "with 80% confidence (P80" in r["checks"][0]["text"] for r in d["recommendations"])' <<<"$js"

est=$("$CLI" estimate --model=llama-3.1-8b --task=full_finetune --train_tokens=1B --seq_len=4096 --gpu=H100-SXM --gpus=8)
echo "$est" | head -3
check "estimate prints the memory breakdown" grep -q "^optimizer" <<<"$est"
check "estimate prints plan, throughput and hours" bash -c 'grep -q "^plan: " <<<"$1" && grep -q "^throughput: " <<<"$1" && grep -q "^estimated hours: " <<<"$1"' _ "$est"
check "estimate states what it assumed" grep -q "^assumed: --link=nvlink" <<<"$est"
check "estimate prints the runner-up plan and why it lost" grep -q "^runner-up: .*(lost: " <<<"$est"

# Without --link, estimate sizes a GPU with the topology its catalog offers
# have, as recommend does: a PCIe card (A100 80GB PCIe) is not taken as NVLink,
# and the numbers equal recommend's for the same offer shape.
W=(--model=llama-3.1-8b --task=full_finetune --train_tokens=1B --seq_len=4096)
# Strict cost order (--tie_band=0): the cheapest multi-GPU shape is one the
# catalog sells with PCIe only; under the default tie band a faster 8x shape,
# also sold with an NVLink bridge, can come first.
rec=$("$CLI" recommend "${W[@]}" --gpu=A100-80GB-PCIE --tie_band=0 --json)
n=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["recommendations"][0]["offer"]["gpus_per_node"])' <<<"$rec")
tps=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["recommendations"][0]["tokens_per_second"])' <<<"$rec")
check "recommend ranks a multi-GPU A100-80GB-PCIE offer first (${n}x, $tps tokens/s)" test "${n:-0}" -gt 1
pcie=$("$CLI" estimate "${W[@]}" --gpu=A100-80GB-PCIE --gpus="$n")
grep "^assumed: " <<<"$pcie"
check "estimate of a PCIe card states it assumed PCIe, from the catalog's offers" \
  grep -Eq "^assumed: --link=pcie \(scale-up pcie-p2p.*as [0-9]+ of [0-9]+ catalog offers of ${n}x A100-80GB-PCIE" <<<"$pcie"
js=$("$CLI" estimate "${W[@]}" --gpu=A100-80GB-PCIE --gpus="$n" --json)
check "estimate of ${n}x A100-80GB-PCIE gives recommend's tokens/s ($tps)" json \
  "d['estimates'][0]['configuration']['scale_up']['kind'] == 'SCALE_UP_KIND_PCIE_P2P' and abs(d['estimates'][0]['tokens_per_second'] - $tps) <= 1e-6 * $tps" <<<"$js"
# An explicit --link is kept. The link matters when every step all-reduces: one
# sequence per GPU per optimizer step (the recipes' default batch of 64 spreads
# each all-reduce over 16 micro-batches, where PCIe costs only a few percent).
js=$("$CLI" estimate "${W[@]}" --global_batch="$n" --gpu=A100-80GB-PCIE --gpus="$n" --json)
tps1=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["estimates"][0]["tokens_per_second"])' <<<"$js")
js=$("$CLI" estimate "${W[@]}" --global_batch="$n" --gpu=A100-80GB-PCIE --gpus="$n" --link=nvlink --json)
check "an explicit --link is kept (NVLink sizes faster than PCIe when each step all-reduces: $tps1 tokens/s on PCIe)" json \
  "d['estimates'][0]['configuration']['link'] == 'LINK_TYPE_NVLINK' and d['estimates'][0]['tokens_per_second'] > 1.1 * $tps1" <<<"$js"

# Serving: the plan, the runner-up and the serving outputs (TTFT, ITL, tokens/s, requests/s, replicas).
srv=$("$CLI" estimate --model=llama-3.1-8b --task=inference --context=8K --concurrency=16 --gpu=H100-SXM --gpus=2)
grep -E "^(plan|runner-up|serving): " -A1 <<<"$srv"
check "estimate (serving) prints plan and runner-up" bash -c 'grep -q "^plan: " <<<"$1" && grep -q "^runner-up: " <<<"$1"' _ "$srv"
check "estimate (serving) prints TTFT, inter-token latency, tokens/s, requests/s and replicas" bash -c \
  'grep -Eq "^serving: time to first token [0-9.]+ ms, inter-token latency [0-9.]+ ms" <<<"$1" && grep -Eq "output tokens/s and [0-9.]+ requests/s over [0-9]+ replica" <<<"$1"' _ "$srv"

# Size suffixes, parallel hints, offload, epochs and global batch reach the request.
js=$("$CLI" estimate --model=llama-3.1-70b --task=full_finetune --dataset_tokens=500M --epochs=2 --seq_len=4K \
       --global_batch=64 --gpu=H100-SXM --gpus=8 --nodes=2 --tp=8 --zero=3 --offload=optimizer_cpu --json)
check "suffixes, epochs and hints: tokens = 500M x 2, plan TP8 ZeRO-3 with CPU offload" json \
  'd["totals"]["total_tokens"] == 1e9 and d["estimates"][0]["plan"]["tensor_parallel"] == 8 and d["estimates"][0]["plan"]["zero_stage"] == 3 and d["estimates"][0]["plan"]["offload"] == "OFFLOAD_OPTIMIZER_CPU"' <<<"$js"

# --egress (a size) reaches workload.egress_gb and is priced with the provider's
# rule from data/pricing/billing.textproto; --min_user_tps=0 lifts the floor.
AWS_EGRESS=$(/usr/bin/python3 - "$ROOT/data/pricing/billing.textproto" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rule = re.search(r'billing \{[^}]*provider: "aws"[^}]*\}', text).group(0)
rate = float(re.search(r"egress_usd_per_gb: ([0-9.]+)", rule).group(1))
free = float(re.search(r"egress_free_gb: ([0-9.]+)", rule).group(1))
print((2000 - free) * rate)
PY
)
js=$("$CLI" recommend --model=llama-3.1-8b --task=full_finetune --train_tokens=200M --egress=2TB --providers=aws --json)
check "--egress=2TB: every AWS answer charges (2000 GB - free) x rate = \$$AWS_EGRESS" json \
  "len(d['recommendations']) > 0 and all(abs(r['cost']['egress_usd'] - $AWS_EGRESS) < 1e-6 for r in d['recommendations'])" <<<"$js"
js=$("$CLI" recommend --model=llama-3.1-8b --task=inference --min_user_tps=0 --json)
check "--min_user_tps=0: no per-user floor assumed" json \
  'len(d["recommendations"]) > 0 and not any(a["field"] == "constraints.min_user_tokens_per_second" for a in d["assumptions"])' <<<"$js"
js=$("$CLI" recommend --model=llama-3.1-8b --task=inference --json)
check "an endpoint without --min_user_tps: the 10 tokens/s floor is stated" json \
  'any(a["field"] == "constraints.min_user_tokens_per_second" and a["value"] == "10" for a in d["assumptions"])' <<<"$js"
out=$("$CLI" recommend --model=llama-3.1-8b --task=inference --concurrency=16 --max_results=3)
check "a serving table shows first token and total tokens/s with their P10-P90, per-user speed and \$ per million tokens" \
  grep -qE "MEM FREE +TTFT S +P10-P90 +TOK/S +P10-P90 +TOK/S/USER +USD/1M TOK +TOP WARNING" <<<"$out"
# Rank 1's two serving intervals in the table are the JSON answer's (three
# significant figures, as the hours' and cost's P10-P90 columns).
js=$("$CLI" recommend --model=llama-3.1-8b --task=inference --concurrency=16 --max_results=3 --json)
serving_ranges=$(/usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["recommendations"][0]
def sig3(v):
    return "%.0f" % v if v >= 100 else ("%.1f" % v if v >= 10 else "%.2f" % v)
for key in ("time_to_first_token_interval", "tokens_per_second_interval"):
    i = r[key]
    print("%s-%s" % (sig3(i["p10"]), sig3(i["p90"])))
' <<<"$js")
row1=$(grep -E "^1 " <<<"$out")
check "the table's TTFT and tokens/s P10-P90 cells are rank 1's intervals ($(tr '\n' ' ' <<<"$serving_ranges"))" \
  bash -c '[[ $(wc -l <<<"$2") == 2 ]] && while read -r range; do grep -qF -- " $range " <<<"$1" || exit 1; done <<<"$2"' \
  _ "$row1" "$serving_ranges"
# Informational notes (the framework assumed, the KV-cache capacity) are never
# the table's TOP WARNING nor a "!" line; they are listed under "Notes on #1".
table=$(sed -n '1,/^$/p' <<<"$out")
check "TOP WARNING holds no informational note" \
  bash -c '! grep -qE "Framework not given|KV cache: up to|GDDR card" <<<"$1"' _ "$table"
check "no informational note among the ! warnings" \
  bash -c '! grep -qE "^  ! (Framework not given|KV cache: up to|GDDR card)" <<<"$1"' _ "$out"
check "informational notes are listed under Notes on #1" \
  bash -c 'sed -n "/^Notes on #1:/,/^$/p" <<<"$1" | grep -q "Framework not given"' _ "$out"

# --request_file for estimate, with a flag overriding the file.
js=$("$CLI" estimate --request_file=docs/examples/request.json --gpu=A100-80GB --gpus=2 --json)
check "estimate --request_file sizes the file's workload" json \
  'd["model"]["preset"] == "llama-3.1-70b" and d["totals"]["total_tokens"] == 5e7' <<<"$js"
js=$("$CLI" estimate --request_file=docs/examples/request.json --train_tokens=1e8 --gpu=A100-80GB --json)
check "a flag overrides the request file" json 'd["totals"]["total_tokens"] == 1e8' <<<"$js"
js=$("$CLI" recommend --request_file=docs/examples/request.json --max_results=2 --json)
check "recommend --request_file with --max_results=2" json 'len(d["recommendations"]) == 2' <<<"$js"

offers=$("$CLI" offers --gpu=H100 --page_size=200)
check "offers filters by GPU alias" bash -c '[[ -n "$(awk "NR>1 && /H100/" <<<"$1")" && -z "$(awk "NR>1 && !/H100|offers/ && NF" <<<"$1")" ]]' _ "$offers"
check "gpus lists the datasheet specs" bash -c "'$CLI' gpus | grep -Eq '^H100-SXM +NVIDIA +80 GiB +HBM +3.35 +989'"
check "models lists the presets" bash -c "'$CLI' models | grep -q '^llama-3.1-70b '"
check "health reports SERVING" bash -c "'$CLI' health | grep -q SERVING"

# ---------------------------------------------------------------------------
# Daily use: version, global flags anywhere, offers sorted and grouped,
# warnings cut to the terminal, completion, JSON that always lists answers.
check "--version names the version and the commit" bash -c "'$CLI' --version | grep -Eq '^gpu-advisor [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}\)$'"
check "--gateway before the command" bash -c "GPUADVISOR_GATEWAY=127.0.0.1:1 '$CLI' --gateway=$GATEWAY_ADDR --timeout_seconds=5 health | grep -q SERVING"
check "--json before the command" bash -c "'$CLI' --json models | /usr/bin/python3 -c 'import json,sys; assert json.load(sys.stdin)[\"models\"]'"
js=$("$CLI" offers --purchase=spot --sort=price --page_size=1000 --json)
check "offers --sort=price --purchase=spot: spot prices ascending" json \
  'len(d["offers"]) > 5 and all(o["spot_usd_per_hour"] > 0 for o in d["offers"]) and [o["spot_usd_per_hour"] for o in d["offers"]] == sorted(o["spot_usd_per_hour"] for o in d["offers"])' <<<"$js"
"$CLI" offers --sort=price_per_gpu --purchase=on_demand --page_size=5 --json >"$LOG_DIR/top.json"
"$CLI" offers --purchase=on_demand --page_size=1000 --json >"$LOG_DIR/all.json"
check "offers --sort=price_per_gpu shows the 5 cheapest per GPU-hour of the whole catalog" /usr/bin/python3 -c '
import json, sys
top, every = json.load(open(sys.argv[1]))["offers"], json.load(open(sys.argv[2]))["offers"]
per = lambda o: o["on_demand_usd_per_hour"] / o["gpus_per_node"]
best = sorted(per(o) for o in every if o["on_demand_usd_per_hour"] > 0)[:5]
sys.exit(0 if len(top) == 5 and [per(o) for o in top] == best else 1)' "$LOG_DIR/top.json" "$LOG_DIR/all.json"
out=$("$CLI" offers --gpu=H100-SXM --sort=vcpus --page_size=3)
check "offers shows VCPUS, RAM and USD/GPU-H columns" \
  grep -q "^PROVIDER  INSTANCE .* VRAM .* VCPUS  RAM .* USD/GPU-H" <<<"$out"
check "offers --sort=vcpus: descending" bash -c '
col=$(head -1 <<<"$1" | awk "{for (i = 1; i <= NF; i++) if (\$i == \"VCPUS\") print i}")
[[ -n $col ]] || exit 1
v=$(awk -v c="$col" "NR > 1 && NF > 5 && !/offers/ {print \$(c + 1)}" <<<"$1")
[[ $(wc -l <<<"$v") == 3 && "$v" == "$(sort -rn <<<"$v")" ]]' _ "$out"
out=$("$CLI" offers --group_by=gpu)
check "offers --group_by=gpu: one row per GPU model with counts and lowest prices" bash -c '
grep -q "^GPU  *VRAM  *QTY PER OFFER  *PROVIDERS  *OFFERS  *ON-DEMAND USD/GPU-H" <<<"$1" &&
[[ $(grep -c "^H100-SXM " <<<"$1") == 1 ]] && grep -q "GPU models (catalog" <<<"$1"' _ "$out"
err=$("$CLI" offers --sort=cost 2>&1 >/dev/null); code=$?
check "offers --sort=cost: exit 2 listing the keys" bash -c '[[ $2 == 2 ]] && grep -q "price_per_gpu" <<<"$1"' _ "$err" "$code"
W=(--model=llama-3.1-70b --task=qlora --train_tokens=50M --seq_len=2048 --max_results=5)
# 190 columns: the P10-P90 columns of hours and total take ~22 more than before, the
# REGION column's "(+N)" of grouped regions and the PRICED column (source and age of
# each price, "C-VAST 5d") ~20; the TOP WARNING column keeps at least 24.
narrow=$(COLUMNS=190 "$CLI" recommend "${W[@]}" | sed -n '1,/^$/p')
check "recommend: the table fits COLUMNS=190, warnings cut with ..." bash -c '
[[ $(awk "{ if (length(\$0) > m) m = length(\$0) } END { print m }" <<<"$1") -le 190 ]] && grep -q "\.\.\.$" <<<"$1"' _ "$narrow"
wide=$(COLUMNS=190 "$CLI" recommend "${W[@]}" --wide | sed -n '1,/^$/p')
check "recommend --wide: warnings in full" bash -c '
[[ $(awk "{ if (length(\$0) > m) m = length(\$0) } END { print m }" <<<"$1") -gt 190 ]]' _ "$wide"
js=$("$CLI" recommend --model=llama-3.1-70b --task=full_finetune --train_tokens=1B --seq_len=4096 --max_total_usd=1 --json); code=$?
check "--json with nothing qualifying: recommendations is [], exit 3" bash -c '[[ $2 == 3 ]] && /usr/bin/python3 -c "import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d[\"recommendations\"] == [] and d[\"excluded\"] else 1)" "$1"' _ "$js" "$code"
completes() {  # shell words... -> the candidates bash completion offers for the last word
  bash -c 'source <("$0" completion bash); COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpu_advisor; printf "%s\n" "${COMPREPLY[@]}"' "$CLI" "$@"
}
check "bash completion: commands" bash -c '[[ $(sort <<<"$1" | tr "\n" " ") == "recommend " ]]' _ "$(completes gpu-advisor rec)"
check "bash completion: a command's flags, after a global flag" bash -c 'grep -qx -- --train_tokens <<<"$1" && grep -qx -- --seq_len <<<"$1"' _ "$(completes gpu-advisor --gateway = x recommend --)"
check "bash completion: flags of the command only" bash -c '! grep -qx -- --task <<<"$1" && grep -qx -- --group_by <<<"$1"' _ "$(completes gpu-advisor offers --)"
check "bash completion: enum values after --task=" bash -c '[[ $(tr "\n" " " <<<"$1") == "qlora " ]]' _ "$(completes gpu-advisor recommend --task = ql)"
err=$("$CLI" estimate --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --gpu=TPU-V5E 2>&1 >/dev/null); code=$?
check "estimate on a TPU: exit 2, says it is not modelled" bash -c '[[ $2 == 2 ]] && grep -q "TPU-V5E is a tpu accelerator; sizing models GPUs only" <<<"$1"' _ "$err" "$code"
check "gpus shows each accelerator's kind" bash -c "'$CLI' gpus | grep -Eq '^TPU-V5E .* tpu '"
# Choice: leave providers out; accelerators sizing does not model are left out
# with a reason of their own.
js=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --max_results=10 --json)
js_ex=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --max_results=10 --exclude_providers=VAST,runpod --json)
check "--exclude_providers: answers without vast or runpod, their offers counted as filtered" /usr/bin/python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
had = {r["offer"]["provider"] for r in a["recommendations"]}
got = {r["offer"]["provider"] for r in b["recommendations"]}
filtered = sum(e["count"] for e in b["excluded"] if e["reason"] == "EXCLUSION_REASON_FILTERED")
sys.exit(0 if had & {"vast", "runpod"} and got and not got & {"vast", "runpod"} and filtered > 0 else 1)' "$js" "$js_ex"
err=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --exclude_providers=vasst 2>&1 >/dev/null); code=$?
check "--exclude_providers with an unknown name: exit 2 naming the field and the closest" \
  bash -c '[[ $2 == 2 ]] && grep -q "constraints.exclude_providers\[0\]: unknown provider \"vasst\".*vast" <<<"$1"' _ "$err" "$code"
# Hosts (docs/gateway.md): an endpoint keeps to datacenter hosts by default
# and says so; --host_tier=any lifts it; --min_host_reliability keeps offers
# without a figure and says so; --group_regions=false lists every region.
js_dc=$("$CLI" recommend --model=llama-3.1-8b --task=inference --concurrency=16 --max_results=10 --json)
js_any=$("$CLI" recommend --model=llama-3.1-8b --task=inference --concurrency=16 --max_results=10 --host_tier=any --json)
check "endpoint: datacenter hosts by default (stated under Assumed); --host_tier=any ranks marketplace hosts too" /usr/bin/python3 -c '
import json, sys
dc, any_ = json.loads(sys.argv[1]), json.loads(sys.argv[2])
tiers = lambda d: {r["offer"]["host_tier"] for r in d["recommendations"]}
stated = any(a["field"] == "constraints.host_tier" and a["value"] == "datacenter" for a in dc["assumptions"])
filtered = [e for e in dc["excluded"] if e["reason"] == "EXCLUSION_REASON_FILTERED"]
sys.exit(0 if dc["recommendations"] and "HOST_TIER_COMMUNITY" not in tiers(dc) and stated
         and filtered and "community (marketplace) host" in filtered[0]["detail"]
         and "HOST_TIER_COMMUNITY" in tiers(any_) else 1)' "$js_dc" "$js_any"
table=$("$CLI" recommend --model=llama-3.1-8b --task=inference --concurrency=16 --max_results=3)
check "endpoint table: the host-tier default under Assumed" grep -q "constraints.host_tier.*datacenter" <<<"$table"
js_rel=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --max_results=5 --host_tier=community --min_host_reliability=0.98 --json)
check "--host_tier=community --min_host_reliability: marketplace hosts only, unknown figures kept and noted" /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
rs = d["recommendations"]
sys.exit(0 if rs and all(r["offer"]["host_tier"] == "HOST_TIER_COMMUNITY" for r in rs)
         and all(any("host reliability unknown" in n for n in r["notes"]) for r in rs if "host_reliability" not in r["offer"]) else 1)' "$js_rel"
err=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --min_host_reliability=98 2>&1 >/dev/null); code=$?
check "--min_host_reliability=98: exit 2 naming the field" \
  bash -c '[[ $2 == 2 ]] && grep -q "constraints.min_host_reliability" <<<"$1"' _ "$err" "$code"
js_g=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --providers=lambda --max_results=10 --json)
js_all=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --providers=lambda --max_results=10 --group_regions=false --json)
check "one row per instance type, the other regions named; --group_regions=false: a row per region" /usr/bin/python3 -c '
import json, sys
g, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
key = lambda r: (r["offer"]["instance_type"], r["purchase_option"], r["offer"]["nodes"])
grouped = [r for r in g["recommendations"] if r.get("also_in_regions")]
keys = [key(r) for r in g["recommendations"]]
sys.exit(0 if grouped and not any(r.get("also_in_regions") for r in a["recommendations"])
         and any(len([k for k in map(key, a["recommendations"]) if k == key(r)]) > 1 for r in grouped) else 1)' "$js_g" "$js_all"
table=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --providers=lambda --max_results=5)
check "the table shows a grouped row's other regions as (+N)" grep -Eq " \(\+[0-9]+\)" <<<"$table"
js=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --json)
check "TPUs, Trainium and Gaudi are left out as not-modelled, never as does-not-fit" /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
nm = [e for e in d["excluded"] if e["reason"] == "EXCLUSION_REASON_NOT_MODELLED"]
dnf = [e for e in d["excluded"] if e["reason"] == "EXCLUSION_REASON_DOES_NOT_FIT"]
sys.exit(0 if nm and nm[0]["count"] > 0 and "not model" in nm[0]["detail"] and not any("0.0 GB" in e["detail"] for e in dnf) else 1)' "$js"
zsh_script=$("$CLI" completion zsh)
check "zsh completion: a #compdef script with the commands and their flags" bash -c '
head -1 <<<"$1" | grep -qx "#compdef gpu-advisor" && grep -q "recommend) flags=(.*--train_tokens" <<<"$1" && grep -q "compdef _gpu_advisor gpu-advisor" <<<"$1"' _ "$zsh_script"
if command -v zsh >/dev/null; then
  check "zsh completion: the script parses" zsh -n <<<"$zsh_script"
fi

# ---------------------------------------------------------------------------
# Errors and exit codes.
err=$("$CLI" recommend --task=lora --params=-1 --seq_len=2048 --train_tokens=1M 2>&1 >/dev/null); code=$?
check "bad workload: one line naming the field, exit 2" bash -c '[[ $2 == 2 && $(wc -l <<<"$1") == 1 ]] && grep -q "INVALID_ARGUMENT: workload.model.params" <<<"$1"' _ "$err" "$code"
out=$("$CLI" recommend --task=lora --params=-1 --seq_len=2048 --train_tokens=1M --json 2>/dev/null); code=$?
check "bad workload under --json: a JSON error on stdout, exit 2" json \
  'd["error"]["code"] == "INVALID_ARGUMENT" and "workload.model.params" in d["error"]["message"] and d["error"]["exit_code"] == 2' <<<"$out"
err=$("$CLI" recommend --task=lroa 2>&1 >/dev/null); code=$?
check "bad enum: the choices come from the proto, exit 2" bash -c '[[ $2 == 2 ]] && grep -q "unknown task \"lroa\"; use one of: pretrain, full_finetune, lora, qlora, inference, batch_inference" <<<"$1"' _ "$err" "$code"
out=$("$CLI" estimate --gpus=8x --json); code=$?
check "bad number under --json: exit 2" test "$code" == 2
check "bad number under --json: a JSON error naming the flag" json '"--gpus_per_node" in d["error"]["message"]' <<<"$out"
err=$("$CLI" frobnicate 2>&1 >/dev/null); code=$?
check "unknown command: one line, exit 2" bash -c '[[ $2 == 2 && $(wc -l <<<"$1") == 1 ]] && grep -q "unknown command" <<<"$1"' _ "$err" "$code"
err=$("$CLI" gpus --task=lora 2>&1 >/dev/null); code=$?
check "a flag of another command is an error, not ignored" bash -c '[[ $2 == 2 ]] && grep -q "gpus: .*--task" <<<"$1"' _ "$err" "$code"
err=$("$CLI" recommend --gateway=127.0.0.1:1 --timeout_seconds=2 --model=llama-3.1-8b --task=lora 2>&1 >/dev/null); code=$?
echo "$err"
check "unreachable gateway: exit 1" test "$code" == 1
check "unreachable gateway: UNAVAILABLE naming the address" grep -q "UNAVAILABLE: gateway 127.0.0.1:1" <<<"$err"
out=$("$CLI" models --gateway=127.0.0.1:1 --timeout_seconds=2 --json 2>/dev/null); code=$?
check "unreachable gateway under --json: a JSON error, exit 1" json 'd["error"]["code"] == "UNAVAILABLE" and d["error"]["exit_code"] == 1' <<<"$out"
check "--gateway overrides GPUADVISOR_GATEWAY" bash -c "GPUADVISOR_GATEWAY=127.0.0.1:1 '$CLI' health --gateway=$GATEWAY_ADDR | grep -q SERVING"
check "GPUADVISOR_GATEWAY is used" bash -c "! GPUADVISOR_GATEWAY=127.0.0.1:1 '$CLI' health --timeout_seconds=2 >/dev/null 2>&1"

# --hf_config: the model from its Hugging Face config.json (resolved by sizing).
HF=docs/examples/mistral-small-24b.config.json
js=$("$CLI" estimate --hf_config=$HF --task=inference --context=8K --concurrency=8 --gpu=H100-SXM --json)
check "estimate --hf_config: params computed from the config (23.57B)" \
  json 'abs(d["model"]["params"] - 23.57e9) < 0.2e9 and d["model"]["layers"] == 40' <<<"$js"
check "estimate --hf_config: the config text is not echoed back" json '"hfConfigJson" not in d["model"]' <<<"$js"
err=$("$CLI" estimate --hf_config=$HF --model=llama-3.1-8b --task=inference --gpu=H100-SXM 2>&1 >/dev/null); code=$?
check "--hf_config with a preset: exit 2 naming both" bash -c '[[ $2 == 2 ]] && grep -q -- "--hf_config: a preset is given too" <<<"$1"' _ "$err" "$code"
printf '{"model_type": "bert", "hidden_size": 768}' >"$LOG_DIR/bert.json"
err=$("$CLI" estimate --hf_config="$LOG_DIR/bert.json" --task=inference --gpu=H100-SXM 2>&1 >/dev/null); code=$?
check "--hf_config of an unsupported family: exit 2 naming model_type" \
  bash -c '[[ $2 == 2 ]] && grep -q "workload.model.hf_config_json.model_type: unsupported \"bert\"" <<<"$1"' _ "$err" "$code"

# Filters that match nothing say so and do not exit 0 (3 = nothing matched;
# 2 once the server rejects the unknown name itself).
err=$("$CLI" offers --providers=no-such-cloud 2>&1 >/dev/null); code=$?
check "offers matching nothing: exit 2 or 3 with a message naming the filter" \
  bash -c '[[ $2 == 2 || $2 == 3 ]] && grep -q "no-such-cloud" <<<"$1"' _ "$err" "$code"
out=$("$CLI" recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 --regions=no-such-region 2>&1); code=$?
check "recommend matching nothing: exit 2 or 3 with a message naming the filter" \
  bash -c '[[ $2 == 2 || $2 == 3 ]] && grep -q "no-such-region" <<<"$1"' _ "$out" "$code"

# ---------------------------------------------------------------------------
# --export: the orchestrators' YAML from the same library as HTTP ?format=,
# parsed and checked against their schemas and the JSON answer's rank order.
bash "$ROOT/tests/tools/ensure.sh" || exit 1  # cel-js for export_check.py
EXPORT_TMP=$(mktemp -d /tmp/gpu-advisor-cli-export.XXXXXX)
EXPORT_ARGS=(--model=llama-3.1-8b --task=full_finetune --train_tokens=1B --seq_len=4096 --max_results=8)
"$CLI" recommend "${EXPORT_ARGS[@]}" --json > "$EXPORT_TMP/answer.json"
for format in skypilot dstack karpenter; do
  "$CLI" recommend "${EXPORT_ARGS[@]}" --export=$format > "$EXPORT_TMP/$format.yaml"; code=$?
  check "recommend --export=$format: exit 0, YAML in the $format schema, offers in rank order" bash -c \
    '[[ $1 == 0 ]] && /usr/bin/python3 "$2/tests/http/export_check.py" "$3" "$4" "$5"' \
    _ "$code" "$ROOT" "$format" "$EXPORT_TMP/$format.yaml" "$EXPORT_TMP/answer.json"
done
err=$("$CLI" recommend "${EXPORT_ARGS[@]}" --export=terraform 2>&1 >/dev/null); code=$?
check "recommend --export=terraform: exit 2 listing the formats" \
  bash -c '[[ $2 == 2 ]] && grep -q "skypilot,dstack,karpenter" <<<"$1"' _ "$err" "$code"
rm -rf "$EXPORT_TMP"

# ---------------------------------------------------------------------------
# Help: per command, no absl "No flags matched", every field has a flag.
check "help lists the commands" bash -c "'$CLI' help | grep -q '^  recommend '"
check "help never says No flags matched" bash -c "! { '$CLI' --help; '$CLI' recommend --help; '$CLI' help offers; } | grep -q 'No flags matched'"
rhelp=$("$CLI" recommend --help)
check "recommend --help has parallel hints, offload, epochs, global batch, dataset size, egress, per-user floor" bash -c \
  'for f in --tp --pp --zero --offload --epochs --global_batch --dataset_tokens --dataset_gb --egress_gb --min_user_tps --restartable --regions; do grep -q -- "$f" <<<"$1" || { echo "missing $f"; exit 1; }; done' _ "$rhelp"
check "offers --help has no workload flags" bash -c "! '$CLI' offers --help | grep -q -- '--task'"

# ---------------------------------------------------------------------------
# The gateway alone: offers and GPUs from its replica after the catalog dies.
kill -TERM "${STACK_PIDS[0]}"; wait "${STACK_PIDS[0]}" 2>/dev/null
check "offers answer with the catalog service gone" bash -c "'$CLI' offers --gpu=H100-SXM | grep -q H100-SXM"
check "gpus answer with the catalog service gone" bash -c "'$CLI' gpus | grep -q '^H100-SXM '"

echo "cli: $passed passed, $failed failed"
[[ $failed == 0 ]]
