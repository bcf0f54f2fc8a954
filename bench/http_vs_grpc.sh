#!/usr/bin/env bash
# Recommend over HTTP/JSON against Recommend over gRPC, same requests, same
# stack (deploy/local/stack.sh, ephemeral ports, response cache off, rate
# limit lifted), on a catalog of HTTP_OFFERS offers made by make_catalog.py.
# Closed loop: HTTP_CLIENTS clients, one request in flight each; h2load's
# HTTP/2 for gRPC (5-byte frames), its --h1 for HTTP/JSON (the gateway's
# HTTP port speaks HTTP/1.1). The two transports alternate request by
# request, HTTP_ROUNDS times, so load from elsewhere on the machine falls on
# both alike. Percentiles are exact, from h2load's --log-file; every body is
# first checked once (gRPC status 0, HTTP 200 with recommendations).
#
# Usage: bench/http_vs_grpc.sh BUILD_DIR
# Environment:
#   HTTP_OFFERS    offers in the generated catalog (10000), or "embedded"
#   HTTP_REQUESTS  RecommendRequests in text format, "---" separated
#                  (bench/requests.txtpb)
#   HTTP_N         calls per request and transport per round (60)
#   HTTP_CLIENTS   closed-loop clients (2)
#   HTTP_ROUNDS    alternations (3)
#   HTTP_SMOKE=1   a tiny run that checks the benchmark works, not the speed
# Prints a Markdown table (docs/performance.md has it) and the ratio of the
# HTTP/JSON p50 and mean to gRPC's. Exit 1 on a failed call.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
OFFERS=${HTTP_OFFERS:-10000}
REQUESTS=${HTTP_REQUESTS:-$ROOT/bench/requests.txtpb}
N=${HTTP_N:-60}
CLIENTS=${HTTP_CLIENTS:-2}
ROUNDS=${HTTP_ROUNDS:-3}
if [[ "${HTTP_SMOKE:-0}" == 1 ]]; then OFFERS=embedded N=2 CLIENTS=1 ROUNDS=1; fi
PY=/usr/bin/python3
RECOMMEND=/gpuadvisor.gateway.v1.GatewayService/Recommend
for tool in h2load protoc curl "$PY"; do
  command -v "$tool" >/dev/null || { echo "http_vs_grpc: missing $tool" >&2; exit 1; }
done

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-http-grpc.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT

# Each request as a gRPC frame and as the JSON body HTTP takes (protobuf's
# JSON mapping, proto field names), from one text-format source.
protoc --include_imports --descriptor_set_out="$TMP/gateway.pb" -I "$ROOT/proto" \
  "$ROOT/proto/gpuadvisor/gateway/v1/gateway.proto"
"$PY" - "$REQUESTS" "$TMP" <<'PY'
import re, struct, sys
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory, text_format
requests, tmp = sys.argv[1:3]
fds = descriptor_pb2.FileDescriptorSet.FromString(open(tmp + "/gateway.pb", "rb").read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
Request = message_factory.MessageFactory(pool).GetPrototype(
    pool.FindMessageTypeByName("gpuadvisor.gateway.v1.RecommendRequest"))
parts = [p for p in re.split(r"^---\s*$", open(requests).read(), flags=re.M) if re.sub(r"#.*", "", p).strip()]
if not parts:
    sys.exit("http_vs_grpc: no requests in " + requests)
for i, p in enumerate(parts):
    m = text_format.Parse(p, Request())
    wire = m.SerializeToString()
    open("%s/req-%02d.bin" % (tmp, i), "wb").write(b"\x00" + struct.pack(">I", len(wire)) + wire)
    open("%s/req-%02d.json" % (tmp, i), "w").write(json_format.MessageToJson(m, preserving_proto_field_name=True))
PY

DATA=$ROOT/data
if [[ "$OFFERS" != embedded ]]; then
  DATA=$TMP/data
  cp -r "$ROOT/data" "$DATA"
  "$PY" "$ROOT/bench/make_catalog.py" "$OFFERS" "$ROOT/data/catalog/offers.textproto" \
    >"$DATA/catalog/offers.textproto"
fi
offers=$(grep -c '^offers {' "$DATA/catalog/offers.textproto")
STACK_GATEWAY_ARGS=(--rate_limit_per_second=0 --response_cache_entries=0)
export STACK_WAIT_SECONDS=${STACK_WAIT_SECONDS:-$((30 + offers / 2000))}
stack_start "$BUILD_DIR" "$DATA" ephemeral "$TMP/logs"
[[ -n "$GATEWAY_HTTP" ]] || { echo "http_vs_grpc: the gateway announced no http= port" >&2; exit 1; }
echo "stack: $offers offers; gateway grpc=$GATEWAY_ADDR http=$GATEWAY_HTTP; load average $(cut -d' ' -f1-3 /proc/loadavg)"

for bin in "$TMP"/req-*.bin; do
  curl -sS --max-time 60 --http2-prior-knowledge -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$bin" -D "$TMP/h.txt" -o /dev/null "http://$GATEWAY_ADDR$RECOMMEND"
  grep -qi '^grpc-status: 0' "$TMP/h.txt" || { echo "http_vs_grpc: gRPC $(basename "$bin") failed" >&2; cat "$TMP/h.txt" >&2; exit 1; }
  code=$(curl -sS --max-time 60 -o "$TMP/r.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"${bin%.bin}.json" "http://$GATEWAY_HTTP/v1/recommend")
  [[ "$code" == 200 ]] && grep -q '"recommendations"' "$TMP/r.json" ||
    { echo "http_vs_grpc: HTTP $(basename "${bin%.bin}.json") answered $code" >&2; head -c 400 "$TMP/r.json" >&2; exit 1; }
done
echo "check: every request answers over both transports"

run() {  # log n c args...
  local log=$1 n=$2 c=$3
  shift 3
  timeout 600 h2load -n "$n" -c "$c" -m 1 -t 1 --log-file="$log" "$@" >"$log.out" 2>&1 ||
    { cat "$log.out" >&2; echo "http_vs_grpc: h2load failed" >&2; exit 1; }
}
# The gateway's CPU time (user + system, clock ticks) around each transport's
# runs: its cost per call, apart from waiting for a core.
GATEWAY_PID=${STACK_PIDS[-1]}  # stack_start launches the gateway last
grep -q gateway_server "/proc/$GATEWAY_PID/cmdline" 2>/dev/null ||
  { echo "http_vs_grpc: the stack's last process is not the gateway" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$GATEWAY_PID/stat"; }
grpc_ticks=0 http_ticks=0
calls=$((N < CLIENTS ? CLIENTS : N))
for round in $(seq 1 "$ROUNDS"); do
  for bin in "$TMP"/req-*.bin; do
    base=$(basename "${bin%.bin}")
    t0=$(ticks)
    run "$TMP/grpc-$round-$base.log" "$calls" "$CLIENTS" -H 'content-type: application/grpc' \
      -H 'te: trailers' -d "$bin" "http://$GATEWAY_ADDR$RECOMMEND"
    t1=$(ticks)
    run "$TMP/http-$round-$base.log" "$calls" "$CLIENTS" --h1 -H 'content-type: application/json' \
      -d "${bin%.bin}.json" "http://$GATEWAY_HTTP/v1/recommend"
    t2=$(ticks)
    grpc_ticks=$((grpc_ticks + t1 - t0)) http_ticks=$((http_ticks + t2 - t1))
  done
done
per_call() { echo $(($1 * 1000000 / $(getconf CLK_TCK) / (calls * ROUNDS * ${#requests[@]}))); }
requests=("$TMP"/req-*.bin)
echo "gateway CPU per call: gRPC $(per_call "$grpc_ticks") us, HTTP/JSON $(per_call "$http_ticks") us"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$TMP" "$offers" "$CLIENTS" <<'PY'
import glob, statistics, sys
tmp, offers, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def durations(kind):
    out = []
    for path in sorted(glob.glob("%s/%s-*.log" % (tmp, kind))):
        rows = [l.split("\t") for l in open(path) if l.strip()]
        bad = [r for r in rows if r[1] != "200"]
        if not rows or bad:
            sys.exit("http_vs_grpc: %s: %d rows, %d not 200" % (path, len(rows), len(bad)))
        out += [int(r[2]) / 1000.0 for r in rows]  # ms
    return sorted(out)
g, h = durations("grpc"), durations("http")
pct = lambda v, q: v[min(len(v) - 1, int(q * len(v)))]
print("| offers | clients | transport | calls | p50 | p90 | p99 | mean |")
print("|---|---|---|---|---|---|---|---|")
for name, v in (("gRPC", g), ("HTTP/JSON", h)):
    print("| %d | %d | %s | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms |"
          % (offers, clients, name, len(v), pct(v, .5), pct(v, .9), pct(v, .99), statistics.mean(v)))
print("HTTP/JSON / gRPC: p50 %.2fx, mean %.2fx, p99 %.2fx (target: within 1.5x)"
      % (pct(h, .5) / pct(g, .5), statistics.mean(h) / statistics.mean(g), pct(h, .99) / pct(g, .99)))
PY
