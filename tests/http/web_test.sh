#!/usr/bin/env bash
# The comparison page end to end in headless Chromium against the four real
# services on ephemeral ports (tests/http/web_test.js):
#   tests/http/web_test.sh BUILD_DIR [SCREENSHOT.png]
# Screenshots at desktop and phone width go next to SCREENSHOT.png (default
# BUILD_DIR/Testing/web/page.png, the test output).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR [SCREENSHOT.png]}
SHOT=${2:-$BUILD_DIR/Testing/web/page.png}
mkdir -p "$(dirname "$SHOT")"
command -v chromium >/dev/null || { echo "chromium is missing: run deploy/install-deps.sh"; exit 1; }
bash "$ROOT/tests/tools/ensure.sh" || exit 1
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-web.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
# Chromium writes its profile under HOME.
HOME=$TMP node "$ROOT/tests/http/web_test.js" "http://$GATEWAY_HTTP" $SHOT
