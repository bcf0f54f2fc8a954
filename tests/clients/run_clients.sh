#!/usr/bin/env bash
# Runs the Python and Node sample clients against a live gateway:
#   tests/clients/run_clients.sh 127.0.0.1:50050
# Python: stubs generated into a temp dir (nothing written to the tree), run
# with Debian's /usr/bin/python3. Node: `npm ci` from the committed lock file
# (needs the npm registry, or an npm cache that has the packages), then node.
# Exits non-zero if either client fails or cannot run.
set -uo pipefail

ADDRESS=${1:?usage: $0 GATEWAY_ADDRESS (host:port)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0

echo "== python client -> $ADDRESS"
if "$ROOT/clients/python/gen_stubs.sh" "$TMP/py" \
   && GPUADVISOR_PY_STUBS="$TMP/py" /usr/bin/python3 "$ROOT/clients/python/recommend.py" "$ADDRESS"; then
  python_result=ok
else
  python_result=FAILED; status=1
fi

echo "== node client -> $ADDRESS"
cd "$ROOT/clients/node" || exit 1
if [[ -f package-lock.json ]]; then
  install=(npm ci --no-audit --no-fund --loglevel=error)
else
  install=(npm install --no-audit --no-fund --loglevel=error)
fi
if "${install[@]}" && node recommend.js "$ADDRESS"; then
  node_result=ok
else
  node_result=FAILED; status=1
fi

echo "run_clients: python $python_result, node $node_result"
exit $status
