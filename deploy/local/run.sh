#!/usr/bin/env bash
# One command to run GPU Advisor on this machine (Debian 12, as root):
# installs what is missing, builds (Release), starts the four services on
# localhost with the embedded data, waits until they are ready, prints where
# they listen and a sample recommendation, then runs until Ctrl-C (or
# SIGTERM) and stops all four cleanly, leaving no process behind; if a service
# dies on its own it says which and stops the rest. Safe to run again: the
# build is incremental.
#
# Environment: BUILD_DIR (default build), PORTS=default|ephemeral.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
PORTS=${PORTS:-default}

bash deploy/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target \
  catalog_server sizing_server pricing_server gateway_server gpu-advisor

# shellcheck source=deploy/local/stack.sh
source deploy/local/stack.sh
LOG_DIR=$(mktemp -d /tmp/gpu-advisor.XXXXXX)
trap 'echo; echo "stopping..."; stack_stop; echo "stopped"' EXIT
trap 'exit 0' INT TERM

stack_start "$BUILD_DIR" "$ROOT/data" "$PORTS" "$LOG_DIR"

cat <<MSG

GPU Advisor is running (logs in $LOG_DIR):
  gateway  grpc $GATEWAY_ADDR   metrics http://$GATEWAY_METRICS/metrics
           web page and HTTP/JSON API http://$GATEWAY_HTTP/  (OpenAPI: http://$GATEWAY_HTTP/v1/openapi.json)
  catalog  grpc $CATALOG_ADDR   metrics http://$CATALOG_METRICS/metrics
  sizing   grpc $SIZING_ADDR   metrics http://$SIZING_METRICS/metrics
  pricing  grpc $PRICING_ADDR   metrics http://$PRICING_METRICS/metrics

Try it (every command talks to the gateway; GPUADVISOR_GATEWAY names it):
  export GPUADVISOR_GATEWAY=$GATEWAY_ADDR
  $BUILD_DIR/services/cli/gpu-advisor recommend --model=llama-3.1-70b --task=qlora \\
      --train_tokens=50M --seq_len=2048 --max_results=5
  $BUILD_DIR/services/cli/gpu-advisor --help

MSG
"$BUILD_DIR/services/cli/gpu-advisor" recommend --gateway="$GATEWAY_ADDR" \
  --model=llama-3.1-70b --task=qlora --train_tokens=50M --seq_len=2048 --max_results=5 ||
  echo "(the sample recommendation failed: exit $?)"

echo
echo "Press Ctrl-C to stop."
# Wait on the services themselves (no helper process to leave behind): a
# signal interrupts `wait` and the traps above stop the stack.
wait -n "${STACK_PIDS[@]}" || true
echo "a service exited on its own; logs in $LOG_DIR" >&2
exit 1
