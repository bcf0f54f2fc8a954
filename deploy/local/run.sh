#!/usr/bin/env bash
# One command to run GPU Advisor on this machine (Debian 12, as root):
# installs what is missing, builds (Release), starts the four services on
# localhost with the embedded data, waits until they are ready, prints where
# they listen and a sample recommendation, then runs until Ctrl-C (or
# SIGTERM) and stops all four cleanly, leaving no process behind, says so in
# one line and exits 0; if a service dies on its own it says so, stops the
# rest and exits 1. Safe to run again: the build is incremental.
#
# Environment: BUILD_DIR (default build), PORTS=default|ephemeral.
# REFRESH=on also starts the refresher (docs/catalog.md "Refresh") with
# REFRESH_CONFIG (default data/refresher/sources.textproto; point it at a
# local replay server or any URL) and REFRESH_CA_FILE (an extra CA, optional);
# the catalog then reads what it publishes and answers show each refreshed
# offer's source and age. REFRESH=replay does the same against a local HTTPS
# replay server (tests/refresh/replay_server.py, a throwaway CA) serving the
# recorded pages of tests/data (Azure Retail Prices, OCI's price list,
# gpuhunt's catalog.zip): no network needed; the sample then shows a
# refreshed Azure price with its source and age.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
PORTS=${PORTS:-default}

bash deploy/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target \
  catalog_server sizing_server pricing_server gateway_server gpu-advisor \
  $([[ "${REFRESH:-off}" != off ]] && echo refresher)

# shellcheck source=deploy/local/stack.sh
source deploy/local/stack.sh
LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpu-advisor.XXXXXX")
# Ctrl-C or SIGTERM, whenever it comes (starting, printing the sample, or
# waiting): stop the stack, say so in one line, exit 0. The handler stops the
# services itself: a SIGTERM sent to this script alone reaches none of them,
# and one that came before the `wait` below would otherwise leave it waiting.
on_signal() {
  trap '' INT TERM
  stack_stop
  printf '\nGPU Advisor stopped (logs in %s)\n' "$LOG_DIR"
  exit 0
}
trap 'stack_stop' EXIT
trap on_signal INT TERM

# REFRESH=replay: the replay server and a sources file pointing at it.
start_replay() {
  bash "$ROOT/tests/testing/make_certs.sh" "$LOG_DIR/certs" >/dev/null
  local dir=$LOG_DIR/replay
  mkdir -p "$dir/api/retail"
  cp tests/data/azure-retail/prices.json "$dir/api/retail/prices"
  cp tests/data/azure-retail/prices.skip100.json "$dir/api/retail/prices.skip100.json"
  cp tests/data/oci-price-list/products.json "$dir/oci.json"
  cp tests/data/gpuhunt/catalog.zip "$dir/gpuhunt.zip"
  /usr/bin/python3 tests/refresh/replay_server.py "$dir" "$LOG_DIR/certs/server.pem" \
    "$LOG_DIR/certs/server.key" >"$LOG_DIR/replay.out" 2>"$LOG_DIR/replay.log" &
  STACK_PIDS+=($!)
  local port=""
  for _ in $(seq 1 50); do
    port=$(sed -nE 's/.*port=([0-9]+).*/\1/p' "$LOG_DIR/replay.out" 2>/dev/null)
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || { echo "replay server did not start: $(cat "$LOG_DIR/replay.log")" >&2; exit 1; }
  local base=https://127.0.0.1:$port
  cat >"$LOG_DIR/replay-sources.textproto" <<CONF
sources { name: "azure-retail" format: "azure-retail" max_pages: 5
  urls: "$base/api/retail/prices?\$filter=serviceName%20eq%20%27Virtual%20Machines%27"
  interval_seconds: 60 stale_after_seconds: 600 }
sources { name: "oci-price-list" format: "oci-price-list" urls: "$base/oci.json"
  interval_seconds: 60 stale_after_seconds: 600 }
sources { name: "gpuhunt-lambda" format: "gpuhunt-zip" provider: "lambdalabs" urls: "$base/gpuhunt.zip"
  interval_seconds: 60 stale_after_seconds: 600 }
CONF
  REFRESH_CONFIG=$LOG_DIR/replay-sources.textproto
  REFRESH_CA_FILE=$LOG_DIR/certs/ca.pem
  echo "replay server on $base (recorded pages of tests/data)"
}

if [[ "${REFRESH:-off}" != off ]]; then
  head -c 24 /dev/urandom | base64 >"$LOG_DIR/admin-token"
  STACK_CATALOG_ARGS=(--refreshed_offers="$LOG_DIR/refreshed.binpb"
    --admin_token_file="$LOG_DIR/admin-token")
fi
stack_start "$BUILD_DIR" "$ROOT/data" "$PORTS" "$LOG_DIR"
[[ "${REFRESH:-off}" == replay ]] && start_replay
if [[ "${REFRESH:-off}" != off ]]; then
  refresh_port=9464
  [[ "$PORTS" == ephemeral ]] && refresh_port=0
  "$BUILD_DIR/services/refresher/refresher" \
    --config="${REFRESH_CONFIG:-$ROOT/data/refresher/sources.textproto}" --data_dir="$ROOT/data" \
    --output="$LOG_DIR/refreshed.binpb" --catalog_address="$CATALOG_ADDR" \
    --admin_token_file="$LOG_DIR/admin-token" --ca_file="${REFRESH_CA_FILE:-}" \
    --metrics_port=$refresh_port >"$LOG_DIR/refresher.log" 2>&1 &
  STACK_PIDS+=($!)
  echo "refresher started (log $LOG_DIR/refresher.log, states $LOG_DIR/refreshed.binpb.sources.json)"
fi

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
if [[ "${REFRESH:-off}" == replay ]]; then
  # The first refresh reaches the answers within seconds: a refreshed Azure price.
  for _ in $(seq 1 100); do
    grep -q '"name":"azure-retail","result":"ok"' "$LOG_DIR/refreshed.binpb.sources.json" \
      2>/dev/null && break
    sleep 0.2
  done
  echo
  echo "A refreshed price (source azure-retail, replayed), with its source and age:"
  "$BUILD_DIR/services/cli/gpu-advisor" recommend --gateway="$GATEWAY_ADDR" \
    --model=llama-2-7b --task=lora --gpu=A100-80GB-PCIE --train_tokens=10M --seq_len=1024 \
    --providers=azure --max_results=1 ||
    echo "(the refreshed recommendation failed: exit $?)"
fi

echo
echo "Press Ctrl-C to stop."
# Wait on the services themselves (no helper process to leave behind): a
# signal interrupts `wait` and on_signal stops the stack.
status=0
wait -n "${STACK_PIDS[@]}" || status=$?
# The terminal sends Ctrl-C's SIGINT to the whole process group, so a service
# may exit before this script runs its handler: a moment lets the handler run.
# A service stopped by the same Ctrl-C exits 0 (graceful stop) or by
# SIGINT/SIGTERM (130/143).
sleep 0.2
if [[ $status == 0 || $status == 130 || $status == 143 ]]; then
  printf '\nGPU Advisor stopped (logs in %s)\n' "$LOG_DIR"
  exit 0
fi
echo "a service exited on its own (exit $status); stopping the rest; logs in $LOG_DIR" >&2
exit 1
