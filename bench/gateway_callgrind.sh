#!/usr/bin/env bash
# Instructions the live gateway spends per cold Recommend: the four real
# services (deploy/local/stack.sh) on ephemeral ports, the gateway under
# valgrind's callgrind with instrumentation off until it serves and every
# request of the mix was answered once; then each request of the mix is sent
# CG_N times (h2load, one connection, CG_M streams) and the count is dumped.
# Unlike gateway_bench this counts everything the process does for a call:
# the gRPC transport and adapter, the pipeline, the encoding, the call's
# destruction on gRPC's threads, the allocator. Unlike CPU time it hardly
# moves when other work shares the machine (this VM has no hardware counters
# for `perf stat -e instructions`).
#
# Usage: bench/gateway_callgrind.sh BUILD_DIR OFFERS_FILE [OUT_PREFIX]
#   OFFERS_FILE  an offers file made by bench/make_catalog.py (replaces
#                data/catalog/offers.textproto in a copy of data/)
# Environment: CG_N (20 calls per request), CG_M (4 streams), CG_REQUESTS
#   (bench/requests.txtpb), CG_ARGS (more valgrind options, e.g.
#   --cache-sim=yes). Prints the total and the count per Recommend; keeps
#   OUT_PREFIX.<pid>.cg.1 (default /tmp/gateway-callgrind) for
#   callgrind_annotate.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR OFFERS_FILE [OUT_PREFIX]}" && pwd)
OFFERS_FILE=${2:?usage: $0 BUILD_DIR OFFERS_FILE [OUT_PREFIX]}
OUT=${3:-/tmp/gateway-callgrind}
N=${CG_N:-20}
M=${CG_M:-4}
REQUESTS=${CG_REQUESTS:-$ROOT/bench/requests.txtpb}
PY=/usr/bin/python3
RECOMMEND=/gpuadvisor.gateway.v1.GatewayService/Recommend
for tool in valgrind callgrind_control callgrind_annotate h2load protoc "$PY"; do
  command -v "$tool" >/dev/null || { echo "gateway_callgrind: missing $tool" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/gateway-callgrind.XXXXXX)
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
trap 'stack_stop; rm -rf "$TMP"' EXIT

# A build tree whose gateway_server starts the real one under callgrind.
FAKE=$TMP/build
mkdir -p "$FAKE/services/gateway"
for s in catalog sizing pricing cli; do ln -s "$BUILD_DIR/services/$s" "$FAKE/services/$s"; done
cat >"$FAKE/services/gateway/gateway_server" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind ${CG_ARGS:-} --instr-atstart=no \
  --callgrind-out-file=$OUT.%p.cg "$BUILD_DIR/services/gateway/gateway_server" "\$@"
EOF
chmod +x "$FAKE/services/gateway/gateway_server"
cp -r "$ROOT/data" "$TMP/data"
cp "$OFFERS_FILE" "$TMP/data/catalog/offers.textproto"

# shellcheck disable=SC2034  # read by stack_start
STACK_GATEWAY_ARGS=(--rate_limit_per_second=0 --response_cache_entries=0)
export STACK_WAIT_SECONDS=${STACK_WAIT_SECONDS:-600}
stack_start "$FAKE" "$TMP/data" ephemeral "$TMP/logs"
GATEWAY_PID=${STACK_PIDS[3]}

"$PY" - "$REQUESTS" "$TMP" <<'PY'
import re, struct, sys
text = open(sys.argv[1], encoding="utf-8").read()
parts = [p for p in re.split(r"^---\s*$", text, flags=re.M) if re.sub(r"#.*", "", p).strip()]
for i, p in enumerate(parts):
    open("%s/req-%02d.txtpb" % (sys.argv[2], i), "w").write(p)
PY
REQS=()
for txt in "$TMP"/req-*.txtpb; do
  protoc --encode=gpuadvisor.gateway.v1.RecommendRequest -I "$ROOT/proto" \
    "$ROOT/proto/gpuadvisor/gateway/v1/gateway.proto" <"$txt" >"${txt%.txtpb}.msg"
  "$PY" -c 'import struct, sys
m = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b"\x00" + struct.pack(">I", len(m)) + m)' "${txt%.txtpb}.msg" "${txt%.txtpb}.bin"
  REQS+=("${txt%.txtpb}.bin")
done

send() {  # n streams body
  h2load -n "$1" -c 1 -m "$2" -t 1 -H 'content-type: application/grpc' -H 'te: trailers' \
    -d "$3" "http://$GATEWAY_ADDR$RECOMMEND" >"$TMP/h2load.out" 2>&1 ||
    { cat "$TMP/h2load.out" >&2; exit 1; }
  grep -q "$1 succeeded" "$TMP/h2load.out" || { cat "$TMP/h2load.out" >&2; exit 1; }
}
for body in "${REQS[@]}"; do send 1 1 "$body"; done  # warm: not counted
callgrind_control -i on "$GATEWAY_PID" >/dev/null 2>&1
for body in "${REQS[@]}"; do send "$N" "$M" "$body"; done
callgrind_control -d "$GATEWAY_PID" >/dev/null 2>&1
callgrind_control -i off "$GATEWAY_PID" >/dev/null 2>&1
dump=$OUT.$GATEWAY_PID.cg.1
calls=$((N * ${#REQS[@]}))
total=$(callgrind_annotate "$dump" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "gateway: $total instructions for $calls cold Recommend calls ($((total / calls / 1000))k per call); $dump"
