#!/usr/bin/env bash
# bench/http_vs_grpc.sh for two builds in one sitting, alternating A B A B
# ... (HTTP_AB_PAIRS pairs), so load from elsewhere on a shared machine falls
# on both; each run compares HTTP/JSON with gRPC within itself. Prints each
# run's ratio and CPU-per-call lines, then the median of each build's ratios.
#
# Usage: bench/http_vs_grpc_ab.sh BUILD_A BUILD_B   (e.g. a build of main, then yours)
# Environment: HTTP_AB_PAIRS (3), and http_vs_grpc.sh's own (HTTP_OFFERS, ...).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: $0 BUILD_A BUILD_B}
B=${2:?usage: $0 BUILD_A BUILD_B}
PAIRS=${HTTP_AB_PAIRS:-3}
OUT=$(mktemp -d /tmp/gpu-advisor-http-ab.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$PAIRS"); do
  for side in A B; do
    build=$A
    [[ "$side" == B ]] && build=$B
    bash "$ROOT/bench/http_vs_grpc.sh" "$build" >"$OUT/$side-$i.txt" 2>&1 ||
      { cat "$OUT/$side-$i.txt" >&2; echo "http_vs_grpc_ab: run $side-$i failed" >&2; exit 1; }
    echo "$side run $i: $(grep '^gateway CPU per call' "$OUT/$side-$i.txt"); $(grep '^HTTP/JSON / gRPC' "$OUT/$side-$i.txt")"
    grep '^| [0-9]' "$OUT/$side-$i.txt"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for side in A B; do
  /usr/bin/python3 - "$side" "$OUT"/"$side"-*.txt <<'PY'
import re, statistics, sys
side, files = sys.argv[1], sys.argv[2:]
p50, mean, grpc_cpu, http_cpu = [], [], [], []
for f in files:
    text = open(f).read()
    m = re.search(r"p50 ([\d.]+)x, mean ([\d.]+)x", text)
    c = re.search(r"gRPC (\d+) us, HTTP/JSON (\d+) us", text)
    p50.append(float(m.group(1))); mean.append(float(m.group(2)))
    grpc_cpu.append(int(c.group(1))); http_cpu.append(int(c.group(2)))
print("%s: median HTTP/JSON / gRPC p50 %.2fx, mean %.2fx; gateway CPU per call gRPC %d us, "
      "HTTP/JSON %d us (%d runs)" % (side, statistics.median(p50), statistics.median(mean),
      statistics.median(grpc_cpu), statistics.median(http_cpu), len(files)))
PY
done
