#!/usr/bin/env bash
# Load run: h2load against the gateway's Recommend on loopback, with the four
# real services started on ephemeral ports (deploy/local/stack.sh).
#
# The request is an 8B LoRA fine-tune (llama-3.1-8b, 5e7 tokens, seq 2048,
# bf16, cheapest), the same one `gpu-advisor recommend --model=llama-3.1-8b
# --task=lora --train_tokens=5e7 --seq_len=2048` sends. It is encoded with
# protoc from text format and framed with the 5-byte gRPC prefix.
#
# h2load counts HTTP 200 as success even when grpc-status != 0 (TOOLCHAIN
# pitfall 11), so OK vs errors and the latency quantiles come from the
# gateway's own /metrics: grpc_server_handled_total by grpc_code and the
# grpc_server_handling_seconds histogram, as the difference between a
# snapshot before and after the run. Quantiles are interpolated inside the
# histogram buckets (as histogram_quantile does), so they are approximate.
#
# Usage: bench/load_test.sh BUILD_DIR
#   env LOAD_N (5000 requests), LOAD_C (4 connections), LOAD_M (8 streams per
#   connection), LOAD_T (1 h2load thread). Exit 1 if any call was not OK.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
N=${LOAD_N:-5000}
C=${LOAD_C:-4}
M=${LOAD_M:-8}
T=${LOAD_T:-1}
PY=/usr/bin/python3
METHOD=/gpuadvisor.gateway.v1.GatewayService/Recommend

for tool in h2load protoc curl "$PY"; do
  command -v "$tool" >/dev/null || { echo "load_test: missing $tool" >&2; exit 1; }
done

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-load.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- request body ---------------------------------------------------------------
cat >"$TMP/request.txtpb" <<'EOF'
workload {
  task: TASK_LORA
  model { preset: "llama-3.1-8b" }
  precision: PRECISION_BF16
  train_tokens: 5e7
  sequence_length: 2048
}
constraints { objective: OBJECTIVE_CHEAPEST }
max_results: 10
EOF
protoc --encode=gpuadvisor.gateway.v1.RecommendRequest -I "$ROOT/proto" \
  "$ROOT/proto/gpuadvisor/gateway/v1/gateway.proto" <"$TMP/request.txtpb" >"$TMP/msg.bin"
"$PY" -c 'import struct, sys
m = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b"\x00" + struct.pack(">I", len(m)) + m)' "$TMP/msg.bin" "$TMP/body.bin"

# --- stack ------------------------------------------------------------------------
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs"
echo "stack: gateway grpc=$GATEWAY_ADDR metrics=$GATEWAY_METRICS"

# One call first: it must end with grpc-status 0 and decode to recommendations.
curl -sS --max-time 10 --http2-prior-knowledge -H 'content-type: application/grpc' -H 'te: trailers' \
  --data-binary @"$TMP/body.bin" -D "$TMP/headers.txt" -o "$TMP/resp.bin" "http://$GATEWAY_ADDR$METHOD"
status=$(tr -d '\r' <"$TMP/headers.txt" | sed -n 's/^grpc-status: //p' | tail -n 1)
if [[ "$status" != 0 ]]; then
  echo "load_test: the check call failed: grpc-status=${status:-none}" >&2
  tr -d '\r' <"$TMP/headers.txt" >&2
  exit 1
fi
recs=$(tail -c +6 "$TMP/resp.bin" | protoc --decode=gpuadvisor.gateway.v1.RecommendResponse -I "$ROOT/proto" \
  "$ROOT/proto/gpuadvisor/gateway/v1/gateway.proto" | grep -c '^recommendations {' || true)
echo "check call: grpc-status 0, $recs recommendations, response $(($(stat -c %s "$TMP/resp.bin") - 5)) bytes," \
  "request $(stat -c %s "$TMP/msg.bin") bytes"

# --- load ---------------------------------------------------------------------------
curl -sS --max-time 5 "http://$GATEWAY_METRICS/metrics" >"$TMP/before.prom"
cmd=(h2load -n "$N" -c "$C" -m "$M" -t "$T" -H 'content-type: application/grpc' -H 'te: trailers'
     -d "$TMP/body.bin" "http://$GATEWAY_ADDR$METHOD")
echo "load: h2load -n $N -c $C -m $M -t $T -H 'content-type: application/grpc' -H 'te: trailers' -d body.bin http://GATEWAY$METHOD"
timeout 120 "${cmd[@]}" >"$TMP/h2load.txt" 2>&1 || { cat "$TMP/h2load.txt"; echo "load_test: h2load failed" >&2; exit 1; }
curl -sS --max-time 5 "http://$GATEWAY_METRICS/metrics" >"$TMP/after.prom"
grep -E '^(finished in|requests:|status codes:|time for request:|  *min  *max)' "$TMP/h2load.txt" \
  | sed 's/^/  h2load| /'

# --- server-side numbers --------------------------------------------------------------
"$PY" - "$TMP/before.prom" "$TMP/after.prom" "$TMP/h2load.txt" "$N" <<'PY'
import re, sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

def parse(path):
    out = {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        labels = tuple(sorted(LABEL.findall(m.group(3) or "")))
        out[(m.group(1), labels)] = float(m.group(4))
    return out

before, after = parse(sys.argv[1]), parse(sys.argv[2])
requested = int(sys.argv[4])

def delta(name, **match):
    """Sum of after-before over the series of `name` whose labels contain `match`, by the rest."""
    res = {}
    for (n, labels), v in after.items():
        d = dict(labels)
        if n != name or any(d.get(k) != val for k, val in match.items()):
            continue
        res[labels] = v - before.get((n, labels), 0.0)
    return res

def quantile(q, buckets):
    """histogram_quantile over cumulative {le: count}, linear inside the bucket."""
    items = sorted((float(le), c) for le, c in buckets.items())
    total = items[-1][1]
    if total <= 0:
        return float("nan")
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in items:
        if c >= rank:
            if le == float("inf"):
                return prev_le          # like Prometheus: the highest finite bound
            return prev_le + (le - prev_le) * (rank - prev_c) / max(c - prev_c, 1e-12)
        prev_le, prev_c = le, c
    return prev_le

def hist(name, **match):
    b = {}
    for labels, v in delta(name + "_bucket", **match).items():
        le = dict(labels)["le"]
        b[le] = b.get(le, 0.0) + v
    s = sum(delta(name + "_sum", **match).values())
    n = sum(delta(name + "_count", **match).values())
    return b, s, n

def ms(x):
    return "%.2f ms" % (x * 1000)

# h2load's own view.
h2 = open(sys.argv[3]).read()
rps = re.search(r'finished in ([\d.]+)(m?s), ([\d.]+) req/s', h2)
lat = re.search(r'time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)', h2)
print("h2load: %s req/s over %s%s; time for request min %s max %s mean %s sd %s"
      % (rps.group(3), rps.group(1), rps.group(2), *lat.groups()))

# Server side: the gateway's Recommend.
codes = {}
for labels, v in delta("grpc_server_handled_total", grpc_method="Recommend").items():
    code = dict(labels)["grpc_code"]
    codes[code] = codes.get(code, 0) + v
ok = int(codes.get("OK", 0))
errors = int(sum(v for c, v in codes.items() if c != "OK"))
print("gateway Recommend (server counters): %d OK, %d errors%s; %d requested"
      % (ok, errors, "" if not errors else " " + str({c: int(v) for c, v in codes.items() if c != "OK"}),
         requested))
b, s, n = hist("grpc_server_handling_seconds", grpc_method="Recommend")
if n:
    print("gateway Recommend latency (server histogram, bucket-interpolated): p50 %s  p90 %s  p99 %s  mean %s"
          % (ms(quantile(0.5, b)), ms(quantile(0.9, b)), ms(quantile(0.99, b)), ms(s / n)))

# Where the time goes: the gateway's calls to its backends.
services = sorted({dict(l)["grpc_service"] for l in delta("grpc_client_handled_total")})
for svc in services:
    calls = delta("grpc_client_handled_total", grpc_service=svc)
    methods = sorted({dict(l)["grpc_method"] for l in calls})
    for meth in methods:
        per = {dict(l)["grpc_code"]: v for l, v in calls.items() if dict(l)["grpc_method"] == meth}
        total = int(sum(per.values()))
        if not total:
            continue
        b, s, n = hist("grpc_client_handling_seconds", grpc_service=svc, grpc_method=meth)
        print("  backend %s/%s: %d calls (%d not OK), p50 %s p99 %s mean %s"
              % (svc.split(".")[1], meth, total, total - int(per.get("OK", 0)),
                 ms(quantile(0.5, b)), ms(quantile(0.99, b)), ms(s / n) if n else "-"))

sys.exit(0 if errors == 0 and ok == requested else 1)
PY
