#!/usr/bin/env bash
# Generates the Python stubs for the GPU Advisor contracts and grpc.health.v1
# with protoc and Debian's grpc_python_plugin (grpcio-tools is not used: the
# Debian build of it is from 2018).
#   clients/python/gen_stubs.sh [OUT_DIR]     (default: clients/python/gen)
# Needs protoc, /usr/bin/grpc_python_plugin and /usr/share/grpc-proto
# (deploy/install-deps.sh installs them).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$HERE/gen}
PLUGIN=${GRPC_PYTHON_PLUGIN:-/usr/bin/grpc_python_plugin}
GRPC_PROTO=${GRPC_PROTO_DIR:-/usr/share/grpc-proto}

mkdir -p "$OUT"
# Our protos keep their package directories (gpuadvisor/gateway/v1/...), which
# Python imports as namespace packages. health.proto is generated with its own
# directory as the include root, so it becomes a top-level health_pb2 and no
# local grpc/ directory can shadow the real grpc module.
(cd "$ROOT/proto" && protoc \
  -I . -I "$GRPC_PROTO/grpc/health/v1" -I "$GRPC_PROTO/grpc/reflection/v1alpha" \
  --python_out="$OUT" --grpc_python_out="$OUT" \
  --plugin=protoc-gen-grpc_python="$PLUGIN" \
  gpuadvisor/catalog/v1/catalog.proto \
  gpuadvisor/sizing/v1/sizing.proto \
  gpuadvisor/pricing/v1/pricing.proto \
  gpuadvisor/gateway/v1/gateway.proto \
  health.proto reflection.proto)
echo "gen_stubs: Python stubs in $OUT"
