#!/usr/bin/env bash
# Runs the Python and Node clients against a live gateway:
#   tests/clients/run_clients.sh 127.0.0.1:50050
# Python sample: stubs generated into a temp dir (nothing written to the
# tree), run with Debian's /usr/bin/python3. Python package: `pip install
# clients/python` into a temp venv (Debian's grpcio/protobuf through
# --system-site-packages, no index), then check_package.py. Node sample: `npm
# ci` from the committed lock file (needs the npm registry, or an npm cache
# that has the packages), then node. Node package: `npm pack`, the tarball
# installed into a temp project with TypeScript, the README example
# type-checked against its declarations, then check_package.js.
# Exits non-zero if any client fails or cannot run.
set -uo pipefail

ADDRESS=${1:?usage: $0 GATEWAY_ADDRESS (host:port)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0

echo "== python client -> $ADDRESS"
if "$ROOT/clients/python/gen_stubs.sh" "$TMP/py" \
   && GPUADVISOR_PY_STUBS="$TMP/py" /usr/bin/python3 "$ROOT/clients/python/examples/recommend.py" "$ADDRESS"; then
  python_result=ok
else
  python_result=FAILED; status=1
fi

echo "== python package (pip install clients/python) -> $ADDRESS"
# pip builds in the source tree; build from a copy so the tree stays clean.
mkdir -p "$TMP/pysrc" && cp -r "$ROOT/clients/python" "$TMP/pysrc/python"
if /usr/bin/python3 -m venv --system-site-packages "$TMP/venv" \
   && GPUADVISOR_PROTO_DIR="$ROOT/proto" "$TMP/venv/bin/pip" install --no-build-isolation --no-index \
        --quiet "$TMP/pysrc/python" \
   && (cd "$TMP" && "$TMP/venv/bin/python" "$ROOT/tests/clients/check_python_package.py" "$ADDRESS"); then
  python_package_result=ok
else
  python_package_result=FAILED; status=1
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

echo "== node package (npm pack clients/node) -> $ADDRESS"
if (cd "$ROOT/clients/node" && npm pack --loglevel=error --pack-destination "$TMP" >/dev/null) \
   && mkdir -p "$TMP/nodepkg" && cd "$TMP/nodepkg" && npm init -y >/dev/null \
   && npm install --no-audit --no-fund --loglevel=error "$TMP"/gpu-advisor-client-*.tgz typescript@5.9.3 @types/node@20 \
   && cp node_modules/gpu-advisor-client/examples/quickstart.ts . \
   && node_modules/.bin/tsc --noEmit --strict --module commonjs --target es2020 --moduleResolution node \
        --types node quickstart.ts \
   && node_modules/.bin/tsc --module commonjs --target es2020 --moduleResolution node --types node quickstart.ts \
   && node quickstart.js "$ADDRESS" | tee "$TMP/quickstart.out" && grep -q "^#1 " "$TMP/quickstart.out" \
   && grep -q "^error field: workload.model.params" "$TMP/quickstart.out" \
   && node node_modules/gpu-advisor-client/check_package.js "$ADDRESS"; then
  node_package_result=ok
else
  node_package_result=FAILED; status=1
fi

echo "run_clients: python $python_result, python package $python_package_result, node $node_result, node package $node_package_result"
exit $status
