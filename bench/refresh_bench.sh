#!/usr/bin/env bash
# Refresh under load (issue 19, "done when"): the four real services
# (deploy/local/stack.sh) on loopback, the refresher fetching a
# 100,000-offer source from the local HTTPS replay server
# (tests/refresh/replay_server.py), and h2load driving cold Recommend calls
# (the gateway's response cache off) through the gateway:
#
#   1. the refresher publishes the source (REFRESH_OFFERS offers of a gpuhunt
#      CSV, new ids: the catalog grows by that many), then stops;
#   2. baseline: Recommend, saturated for REFRESH_SECONDS, no refresh running;
#   3. every price of the source x1.2; a new refresher fetches, imports,
#      guards and publishes it (ReloadCatalog; the gateway follows over
#      WatchCatalog) while the same load runs: the time until an answer shows
#      the new price, and the Recommend rate during the run.
# Passes when the new price is in the answers within 30 s, no call fails
# (h2load HTTP status and the gateway's grpc_server_handled_total codes), and
# the rate during the refresh is within 10% of the baseline. Every phase also
# prints each service's CPU seconds and what moved in the gateway's counters:
# the pricing Quote calls it made (none while it quotes in process from a
# current local book) and failed Recommend calls, by code.
#
# Usage: bench/refresh_bench.sh BUILD_DIR
# Environment: REFRESH_OFFERS (100000), REFRESH_SECONDS (load per phase, 40),
#   REFRESH_C / REFRESH_M (connections, streams per connection: 2, 4),
#   REFRESH_SMOKE=1 (2,000 offers, 8 s: checks the benchmark works, not the speed),
#   REFRESH_KEEP=1 (keep the services' and the refresher's logs; the path is printed),
#   REFRESH_PERF=FILE (perf record -a of the first phase 3 into FILE),
#   REFRESH_NICE (unset: the binaries' default, 0): the refresher's --nice and the catalog's
#   --reload_nice,
#   REFRESH_ROUNDS (1): phases 2 and 3 this many times in turn, prices x1.2, x1.4, ...
#   of the first publication; the ratio is that of the summed rates.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
OFFERS=${REFRESH_OFFERS:-100000}
SECONDS_PER_PHASE=${REFRESH_SECONDS:-40}
C=${REFRESH_C:-2}
M=${REFRESH_M:-4}
if [[ "${REFRESH_SMOKE:-0}" == 1 ]]; then OFFERS=2000 SECONDS_PER_PHASE=8; fi
PY=/usr/bin/python3
CLI=$BUILD_DIR/services/cli/gpu-advisor
REFRESHER=$BUILD_DIR/services/refresher/refresher
RECOMMEND=/gpuadvisor.gateway.v1.GatewayService/Recommend
H2_HEADERS=(-H 'content-type: application/grpc' -H 'te: trailers')
for tool in h2load protoc curl openssl "$PY" "$CLI" "$REFRESHER"; do
  command -v "$tool" >/dev/null || { echo "refresh_bench: missing $tool" >&2; exit 1; }
done

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-refresh-bench.XXXXXX)
REPLAY_PID="" REFRESHER_PID=""
stop_pid() {
  [[ -n "$1" ]] || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$REFRESHER_PID"; stop_pid "$REPLAY_PID"; stack_stop
  if [[ "${REFRESH_KEEP:-0}" == 1 ]]; then echo "refresh_bench: logs kept in $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the source: a gpuhunt catalog CSV of OFFERS rows on the local replay server -----------
# shellcheck source=bench/refresh_source.sh
source "$ROOT/bench/refresh_source.sh"
refresh_source_start "$TMP"

# --- the stack: cold answers, no rate limit, the catalog reading the refresher's file ----------
echo "refresh-bench-token" >"$TMP/token"
STACK_GATEWAY_ARGS=(--rate_limit_per_second=0 --response_cache_entries=0)
NICE_ARGS=()
[[ -n "${REFRESH_NICE:-}" ]] && NICE_ARGS=(--nice="$REFRESH_NICE")
STACK_CATALOG_ARGS=(--refreshed_offers="$TMP/out/refreshed.binpb" --admin_token_file="$TMP/token")
[[ -n "${REFRESH_NICE:-}" ]] && STACK_CATALOG_ARGS+=(--reload_nice="$REFRESH_NICE")
export STACK_WAIT_SECONDS=${STACK_WAIT_SECONDS:-120}
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs"

run_refresher() {  # -> REFRESHER_PID; the states file is $TMP/out/refreshed.binpb.sources.json
  "$REFRESHER" --config="$TMP/sources.textproto" --data_dir="$ROOT/data" \
    --output="$TMP/out/refreshed.binpb" --catalog_address="$CATALOG_ADDR" \
    --admin_token_file="$TMP/token" --ca_file="$TMP/certs/ca.pem" --metrics_port=0 \
    ${NICE_ARGS[@]+"${NICE_ARGS[@]}"} \
    >>"$TMP/refresher.out" 2>>"$TMP/refresher.log" &
  REFRESHER_PID=$!
}
# The cheapest benchmarket L4 in an answer: "<id> <on-demand $/h>".
cheapest() {
  "$CLI" recommend --gateway="$GATEWAY_ADDR" --model=llama-2-7b --task=lora --gpu=L4 \
    --train_tokens=10M --seq_len=1024 --providers=benchmarket --max_results=1 --json 2>/dev/null |
    "$PY" -c 'import json,sys
o=json.load(sys.stdin)["recommendations"][0]["offer"]
print(o["id"], o.get("on_demand_usd_per_hour", o.get("onDemandUsdPerHour", 0)))' 2>/dev/null || true
}
wait_for_price() {  # predicate-on-price -> seconds waited, or "timeout"
  local t0 now got
  t0=$(date +%s.%N)
  for _ in $(seq 1 1200); do
    got=$(cheapest)
    if [[ -n "$got" ]] && "$PY" -c "import sys; p=float(sys.argv[1]); sys.exit(0 if $1 else 1)" \
         "${got#* }"; then
      now=$(date +%s.%N)
      "$PY" -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$now"
      return 0
    fi
    sleep 0.25
  done
  echo timeout
}

# 1. first publication
t=$(date +%s.%N)
run_refresher
first=$(wait_for_price "p > 0")
stop_pid "$REFRESHER_PID"; REFRESHER_PID=""
OLD=$(cheapest)
[[ -n "$OLD" ]] || { echo "refresh_bench: the source never reached the answers" >&2; tail -5 "$TMP/refresher.log" >&2; exit 1; }
echo "phase 1: $OFFERS offers published, in answers after ${first}s (cheapest L4: $OLD)"

# The request of the load: one RecommendRequest over every provider.
cat >"$TMP/req.txtpb" <<'REQ'
workload { task: TASK_LORA model { preset: "llama-3.1-8b" } precision: PRECISION_BF16 train_tokens: 5e7 sequence_length: 2048 }
max_results: 10
REQ
protoc --encode=gpuadvisor.gateway.v1.RecommendRequest -I "$ROOT/proto" \
  "$ROOT/proto/gpuadvisor/gateway/v1/gateway.proto" <"$TMP/req.txtpb" >"$TMP/req.msg"
"$PY" -c 'import struct, sys
m = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b"\x00" + struct.pack(">I", len(m)) + m)' "$TMP/req.msg" "$TMP/req.bin"
errors() {  # failed Recommend calls the gateway counted so far: neither OK nor Canceled
  # (h2load -D cancels the streams still open when its time is up: a client's
  # cancel, not a failure; printed apart by cancels)
  curl -sS --max-time 5 "http://$GATEWAY_METRICS/metrics" |
    awk '/^grpc_server_handled_total/ && /Recommend/ && !/grpc_code="(OK|Canceled)"/ {s += $NF}
         END {print s + 0}'
}
cancels() {  # Recommend calls the client cancelled so far
  curl -sS --max-time 5 "http://$GATEWAY_METRICS/metrics" |
    awk '/^grpc_server_handled_total/ && /Recommend/ && /grpc_code="Canceled"/ {s += $NF}
         END {print s + 0}'
}
load() {  # label -> "rate non200"
  timeout $((SECONDS_PER_PHASE + 120)) h2load -D "$SECONDS_PER_PHASE" -c "$C" -m "$M" -t 1 \
    "${H2_HEADERS[@]}" -d "$TMP/req.bin" "http://$GATEWAY_ADDR$RECOMMEND" >"$TMP/$1.out" 2>&1
  "$PY" - "$TMP/$1.out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
rate = float(re.search(r"finished in [\d.]+\w*, ([\d.]+) req/s", t).group(1))
m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", t)
fail = re.search(r"requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed", t)
print("%.1f %d" % (rate, int(m.group(3)) + int(m.group(4)) + int(fail.group(1))))
PY
}
counters() {  # the gateway's counters a refresh can move, "name value" per line: pricing Quote
  # calls it made by code (none while it quotes in process from a current book), Recommend
  # calls answered with an error by code
  curl -sS --max-time 5 "http://$GATEWAY_METRICS/metrics" |
    awk 'function code() { match($0, /grpc_code="[A-Za-z]+"/); return substr($0, RSTART + 11, RLENGTH - 12) }
         /^grpc_client_handled_total/ && /grpc_method="Quote"/ {s["remote Quote " code()] += $NF}
         /^grpc_server_handled_total/ && /Recommend/ && !/grpc_code="(OK|Canceled)"/ {
           s["failed Recommend " code()] += $NF}
         END {for (k in s) print k "\t" s[k]}'
}
counts_diff() {  # before-file after-file -> "remote Quote OK 3, ..." (only what moved)
  "$PY" - "$1" "$2" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        k, v = line.rstrip("\n").split("\t")
        out[k] = float(v)
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
moved = ["%s %d" % (k, b[k] - a.get(k, 0)) for k in sorted(b) if b[k] != a.get(k, 0)]
print(", ".join(moved) if moved else "none")
PY
}
cpu_of() {  # pid -> CPU seconds (user + system) it used so far, 0 when gone
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0
}
cpu_all() {  # -> "catalog sizing pricing gateway" CPU seconds
  local pid out=()
  for pid in "${STACK_PIDS[@]}"; do out+=("$(cpu_of "$pid")"); done
  echo "${out[*]}"
}
cpu_diff() {  # before after -> "catalog X s, sizing Y s, ..."
  "$PY" - "$1" "$2" <<'PY'
import sys
a, b = [list(map(float, x.split())) for x in sys.argv[1:3]]
names = ["catalog", "sizing", "pricing", "gateway"]
print(", ".join("%s %.1f s" % (n, y - x) for n, x, y in zip(names, a, b)))
PY
}
errors_before=$(errors) cancels_before=$(cancels)
# The answer probe of phase 3 (the CLI asking for the cheapest L4 every
# 0.25 s) runs in phase 2 too, so both rates pay for it alike.
probe_loop() {
  while [[ ! -e "$TMP/probe.stop" ]]; do cheapest >/dev/null; sleep 0.25; done
}
probe_start() { rm -f "$TMP/probe.stop"; probe_loop & PROBE_PID=$!; }
probe_stop() { touch "$TMP/probe.stop"; wait "$PROBE_PID"; }

baseline_phase() {  # round -> "rate failed"
  local cpu0 cpu1 rate bad
  probe_start
  cpu0=$(cpu_all)
  counters >"$TMP/counts0"
  read -r rate bad < <(load "baseline$1")
  cpu1=$(cpu_all)
  counters >"$TMP/counts1"
  probe_stop
  echo "round $1, phase 2: baseline $rate Recommend/s (cold), $bad failed" >&2
  echo "  CPU used: $(cpu_diff "$cpu0" "$cpu1")" >&2
  echo "  gateway: $(counts_diff "$TMP/counts0" "$TMP/counts1")" >&2
  echo "$rate $bad"
}

refresh_phase() {  # round factor -> "rate failed seconds"
  local cpu0 cpu1 load_pid seen rate bad refresher_cpu
  refresh_source_write "$2" "$TMP/replay/bench.csv"
  cpu0=$(cpu_all)
  counters >"$TMP/counts0"
  load "during$1" >"$TMP/during.result" &
  load_pid=$!
  if [[ -n "${REFRESH_PERF:-}" && "$1" == 1 ]]; then  # a CPU profile of the machine in phase 3
    perf record -a -F 499 -o "$REFRESH_PERF" -- sleep "$SECONDS_PER_PHASE" >/dev/null 2>&1 &
  fi
  sleep 1
  run_refresher
  seen=$(wait_for_price "abs(p - ${OLD#* } * $2) < 0.01")
  probe_start  # the probe goes on to the end of the load, as in phase 2
  wait "$load_pid"
  probe_stop
  cpu1=$(cpu_all)
  counters >"$TMP/counts1"
  refresher_cpu=$(cpu_of "$REFRESHER_PID")
  read -r rate bad <"$TMP/during.result"
  stop_pid "$REFRESHER_PID"; REFRESHER_PID=""
  echo "round $1, phase 3: new prices (x$2) in answers after ${seen}s; $rate Recommend/s during the refresh, $bad failed" >&2
  echo "  CPU used: $(cpu_diff "$cpu0" "$cpu1"), refresher $refresher_cpu s" >&2
  echo "  refresher: $(tail -1 "$TMP/refresher.log")" >&2
  echo "  gateway: $(counts_diff "$TMP/counts0" "$TMP/counts1")" >&2
  echo "$rate $bad $seen"
}

# 2 and 3, ROUNDS times in turn (baseline, refresh, baseline, ...): the load
# of a shared machine drifts, alternating puts both phases under the same.
ROUNDS=${REFRESH_ROUNDS:-1}
RESULTS=()
for round in $(seq 1 "$ROUNDS"); do
  read -r base_rate base_bad < <(baseline_phase "$round")
  factor=$("$PY" -c "print('%.1f' % (1 + 0.2 * $round))")
  read -r during_rate during_bad seen < <(refresh_phase "$round" "$factor")
  RESULTS+=("$base_rate $during_rate $seen $((base_bad + during_bad))")
done
errors_after=$(errors)
echo "calls cancelled by h2load at the end of its time (not failures): $(($(cancels) - cancels_before))"
echo "refresher: $(tr -d '\n' <"$TMP/out/refreshed.binpb.sources.json" | cut -c1-300)"
echo "load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$((errors_after - errors_before))" "$OFFERS" "${RESULTS[@]}" <<'PY'
import sys
grpc_bad, offers = int(sys.argv[1]), sys.argv[2]
rounds = [r.split() for r in sys.argv[3:]]
base = sum(float(r[0]) for r in rounds)
during = sum(float(r[1]) for r in rounds)
bad = sum(int(r[3]) for r in rounds) + grpc_bad
ratios = ["%.3f" % (float(r[1]) / float(r[0])) for r in rounds if float(r[0])]
times = [r[2] for r in rounds]
ratio = during / base if base else 0
slow = [t for t in times if t == "timeout" or float(t) > 30]
print("| offers | baseline Recommend/s | during refresh | ratio | new prices in answers | failed calls |")
for r in rounds:
    print("| %s | %s | %s | %.3f | %s s | %s |" % (offers, r[0], r[1], float(r[1]) / float(r[0]), r[2], r[3]))
print("rounds: %d; ratio of the summed rates %.3f (per round %s); new prices in answers after %s s"
      % (len(rounds), ratio, ", ".join(ratios), ", ".join(times)))
fails = []
if slow: fails.append("new prices not in answers within 30 s (%s)" % ", ".join(slow))
if bad: fails.append("%d failed calls" % bad)
if ratio < 0.9: fails.append("rate during the refreshes %.1f%% of the baselines" % (100 * ratio))
print("refresh_bench: " + ("PASS" if not fails else "FAIL: " + "; ".join(fails)))
sys.exit(1 if fails else 0)
PY
