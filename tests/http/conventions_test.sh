#!/usr/bin/env bash
# The HTTP API's conventions and limits against the four real services
# (issue 23 item 1-2, issue 24 item 1): every status path with its
# google.rpc.Status body, 405 + Allow, CORS, request ids in answers and logs,
# enum short forms, the connection limits (408, 413 chunked, 431), and the
# per-client rate limit seen through a local reverse proxy
# (tests/http/conventions_check.py does the checks).
#   tests/http/conventions_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-conventions.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
# Small limits so each path is reached in a second: 1 s header and body
# deadlines, 64 KiB bodies, 3 calls per client then 1 per second, CORS for
# one origin, and loopback's 127.0.0.1 as the trusted proxy.
STACK_GATEWAY_ARGS=(--http_header_timeout_seconds=1 --http_body_timeout_seconds=1
  --http_max_body_bytes=65536 --http_max_header_count=50 --rate_limit_per_second=1
  --rate_limit_burst=3 --http_cors_origins=https://ui.example.com --trusted_proxies=127.0.0.1/32
  --response_cache_entries=0)
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
/usr/bin/python3 "$ROOT/tests/http/conventions_check.py" "$GATEWAY_HTTP" "$GATEWAY_METRICS" \
  "$TMP/logs/gateway.log"
