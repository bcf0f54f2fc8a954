# The 100,000-offer source behind bench/refresh_bench.sh and
# bench/refresh_cpu.sh (sourced, not run): a gpuhunt catalog CSV of OFFERS
# rows (one offer each) served over HTTPS by the local replay server
# (tests/refresh/replay_server.py), and the refresher's sources file for it.
#
#   refresh_source_start TMP   writes TMP/replay/bench.csv at prices x1.0,
#                              TMP/certs, TMP/sources.textproto; starts the
#                              server (REPLAY_PID, PORT); needs ROOT, PY, OFFERS
#   refresh_source_write F OUT the same rows at every price x F, into OUT
# The caller stops REPLAY_PID.

refresh_source_write() {
  "$PY" - "$OFFERS" "$1" "$2" <<'PY'
import sys
n, factor, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
# (gpuhunt gpu_name, GB per GPU, USD per GPU-hour): the real catalog's range
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

refresh_source_start() {
  local tmp=$1
  mkdir -p "$tmp/replay" "$tmp/out"
  refresh_source_write 1.0 "$tmp/replay/bench.csv"
  echo '{}' >"$tmp/replay/modes.json"
  bash "$ROOT/tests/testing/make_certs.sh" "$tmp/certs" >/dev/null
  "$PY" "$ROOT/tests/refresh/replay_server.py" "$tmp/replay" "$tmp/certs/server.pem" \
    "$tmp/certs/server.key" >"$tmp/replay.out" 2>"$tmp/replay.log" &
  REPLAY_PID=$!
  for _ in $(seq 1 50); do grep -q "port=" "$tmp/replay.out" 2>/dev/null && break; sleep 0.1; done
  PORT=$(sed -nE 's/.*port=([0-9]+).*/\1/p' "$tmp/replay.out")
  cat >"$tmp/sources.textproto" <<CONF
sources {
  name: "bench" format: "gpuhunt" provider: "benchmarket" urls: "https://127.0.0.1:$PORT/bench.csv"
  interval_seconds: 3600 stale_after_seconds: 7200 timeout_seconds: 60 max_bytes: 268435456
}
CONF
}
