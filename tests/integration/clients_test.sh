#!/usr/bin/env bash
# Runs the Python and Node clients (clients/) against the four real services
# started on ephemeral loopback ports.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
LOG_DIR=$(mktemp -d /tmp/gpu-advisor-clients.XXXXXX)
trap 'stack_stop; rm -rf "$LOG_DIR"' EXIT
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$LOG_DIR"
bash "$ROOT/tests/clients/run_clients.sh" "$GATEWAY_ADDR"
