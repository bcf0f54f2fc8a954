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
HOME=$TMP TMPDIR=$TMP GPUADVISOR_CLI="$BUILD_DIR/services/cli/gpu-advisor" \
  node "$ROOT/tests/http/web_test.js" "http://$GATEWAY_HTTP" $SHOT
rc=$?
stack_stop

# The page over HTTPS: a TLS stack (the gateway's HTTP port then serves
# HTTPS with the services' certificate), the test CA trusted in Chromium's
# NSS database under HOME, nothing ignored.
command -v certutil >/dev/null || { echo "certutil is missing: run deploy/install-deps.sh"; exit 1; }
bash "$ROOT/tests/testing/make_certs.sh" "$TMP/tls" || exit 1
mkdir -p "$TMP/home/.pki/nssdb"
certutil -d "sql:$TMP/home/.pki/nssdb" -N --empty-password || exit 1
certutil -d "sql:$TMP/home/.pki/nssdb" -A -t "C,," -n gpu-advisor-test-ca -i "$TMP/tls/ca.pem" || exit 1
STACK_TLS_DIR="$TMP/tls" stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs-tls" || exit 1
HOME=$TMP/home WEB_TEST_HTTPS=1 node "$ROOT/tests/http/web_test.js" "https://$GATEWAY_HTTP" || rc=1
exit $rc
