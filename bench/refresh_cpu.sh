#!/usr/bin/env bash
# CPU seconds one refresh of a 100,000-offer source costs each process, with
# no Recommend load (issue 19; the load itself is bench/refresh_bench.sh):
# the four services (deploy/local/stack.sh) on loopback, the catalog reading
# a refreshed file of REFRESH_OFFERS offers from the start; each round runs
# `refresher --once` against the local HTTPS replay server (prices x1.2,
# x1.4, ... so every round publishes new content), waits until pricing and
# the gateway serve the new version, then prints the CPU (user + system,
# /proc) each process used in the round, the refresher's own included.
# On an idle stack these are the refresh's costs alone, and they move far
# less with the machine's other load than a rate does.
#
# Usage: bench/refresh_cpu.sh BUILD_DIR
# Environment: REFRESH_OFFERS (100000), REFRESH_ROUNDS (3),
#   REFRESH_PERF=FILE (perf record --call-graph dwarf of the catalog, pricing
#   and the gateway during the last round).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
OFFERS=${REFRESH_OFFERS:-100000}
ROUNDS=${REFRESH_ROUNDS:-3}
PY=/usr/bin/python3
REFRESHER=$BUILD_DIR/services/refresher/refresher

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-refresh-cpu.XXXXXX)
REPLAY_PID=""
cleanup() {
  [[ -n "$REPLAY_PID" ]] && kill "$REPLAY_PID" 2>/dev/null && wait "$REPLAY_PID" 2>/dev/null
  stack_stop
  rm -rf "$TMP"
}
trap cleanup EXIT

# --- the source: a gpuhunt catalog CSV of OFFERS rows on the local replay server -----------
# shellcheck source=bench/refresh_source.sh
source "$ROOT/bench/refresh_source.sh"
refresh_source_start "$TMP"
echo "refresh-cpu-token" >"$TMP/token"
refresh_once() {  # -> the refresher's CPU seconds
  /usr/bin/time -f "%U %S" -o "$TMP/time" "$REFRESHER" --once --config="$TMP/sources.textproto" \
    --data_dir="$ROOT/data" --output="$TMP/out/refreshed.binpb" \
    --catalog_address="${CATALOG_ADDR:-}" --admin_token_file="$TMP/token" \
    --ca_file="$TMP/certs/ca.pem" --metrics_port=0 >/dev/null 2>>"$TMP/refresher.log"
  awk '{print $1 + $2}' "$TMP/time"
}
refresh_once >/dev/null  # the first copy, written before the catalog starts

STACK_GATEWAY_ARGS=(--rate_limit_per_second=0 --response_cache_entries=0)
STACK_CATALOG_ARGS=(--refreshed_offers="$TMP/out/refreshed.binpb" --admin_token_file="$TMP/token")
export STACK_WAIT_SECONDS=${STACK_WAIT_SECONDS:-120}
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs"
sleep 2

cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
cpu_all() { local p; for p in "${STACK_PIDS[@]}"; do cpu_of "$p"; done | tr '\n' ' '; }
served() { grep -c "catalog replica: serving v" "$TMP/logs/$1.log" || true; }
for round in $(seq 1 "$ROUNDS"); do
  refresh_source_write "$("$PY" -c "print(1 + 0.2 * $round)")" "$TMP/replay/bench.csv"
  before=$(cpu_all) gateway0=$(served gateway) pricing0=$(served pricing)
  perf_pid=""
  if [[ -n "${REFRESH_PERF:-}" && $round == "$ROUNDS" ]]; then
    perf record -F 999 --call-graph dwarf,16384 -o "$REFRESH_PERF" \
      -p "${STACK_PIDS[0]},${STACK_PIDS[2]},${STACK_PIDS[3]}" >/dev/null 2>&1 &
    perf_pid=$!
    sleep 1
  fi
  t0=$(date +%s.%N)
  refresher=$(refresh_once)
  for _ in $(seq 1 1200); do
    [[ $(served gateway) -gt $gateway0 && $(served pricing) -gt $pricing0 ]] && break
    sleep 0.1
  done
  t1=$(date +%s.%N)
  sleep 2  # the previous catalogs freed, the caches written
  [[ -n "$perf_pid" ]] && { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
  "$PY" - "$round" "$before" "$(cpu_all)" "$refresher" "$t0" "$t1" <<'PY'
import sys
r, a, b, refresher, t0, t1 = sys.argv[1], *[s.split() for s in sys.argv[2:4]], *map(float, sys.argv[4:7])
a, b = list(map(float, a)), list(map(float, b))
names = ["catalog", "sizing", "pricing", "gateway"]
used = {n: y - x for n, x, y in zip(names, a, b)}
print("round %s: followed in %.1f s; CPU s: %s, refresher %.2f; all %.2f"
      % (r, t1 - t0, ", ".join("%s %.2f" % (n, used[n]) for n in names), refresher,
         sum(used.values()) + refresher))
PY
done
for i in 0 2 3; do
  echo "$(basename "$(readlink "/proc/${STACK_PIDS[$i]}/exe")") $(grep VmRSS "/proc/${STACK_PIDS[$i]}/status")"
done
