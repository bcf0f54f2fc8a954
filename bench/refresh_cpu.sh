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

make_source() {  # factor out: the source of bench/refresh_bench.sh
  "$PY" - "$OFFERS" "$1" "$2" <<'PY'
import sys
n, factor, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
gpus = [("H100", 80, 2.4), ("A100", 80, 1.6), ("A100", 40, 1.2), ("L4", 24, 0.7),
        ("L40S", 48, 1.1), ("A10", 24, 0.9), ("H200", 141, 3.2), ("T4", 16, 0.4)]
with open(out, "w", newline="") as f:
    f.write("instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,"
            "disk_size,gpu_vendor,flags,cpu_arch,provider_data\r\n")
    for i in range(n):
        name, mem, usd = gpus[i % len(gpus)]
        count = (1, 2, 4, 8)[(i // len(gpus)) % 4]
        price = usd * count * (0.9 + 0.2 * ((i * 7919) % 1000) / 1000) * factor
        f.write("bench-%d,region-%d,%.4f,%d,%d.0,%d,%s,%d.0,False,100.0,nvidia,,x86,\r\n"
                % (i, i % 40, price, 8 * count, 64 * count, count, name, mem))
PY
}
mkdir -p "$TMP/replay" "$TMP/out"
make_source 1.0 "$TMP/replay/bench.csv"
echo '{}' >"$TMP/replay/modes.json"
bash "$ROOT/tests/testing/make_certs.sh" "$TMP/certs" >/dev/null
"$PY" "$ROOT/tests/refresh/replay_server.py" "$TMP/replay" "$TMP/certs/server.pem" \
  "$TMP/certs/server.key" >"$TMP/replay.out" 2>"$TMP/replay.log" &
REPLAY_PID=$!
for _ in $(seq 1 50); do grep -q "port=" "$TMP/replay.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -nE 's/.*port=([0-9]+).*/\1/p' "$TMP/replay.out")
cat >"$TMP/sources.textproto" <<CONF
sources {
  name: "bench" format: "gpuhunt" provider: "benchmarket" urls: "https://127.0.0.1:$PORT/bench.csv"
  interval_seconds: 3600 stale_after_seconds: 7200 timeout_seconds: 60 max_bytes: 268435456
}
CONF
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
  make_source "$("$PY" -c "print(1 + 0.2 * $round)")" "$TMP/replay/bench.csv"
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
