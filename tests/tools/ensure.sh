#!/usr/bin/env bash
# Installs tests/tools' npm packages (buf, swagger-parser, playwright-core, cel-js)
# once: ctest runs several scripts that need them in parallel, so `npm ci`
# runs under a lock, and only when something is missing.
#   bash tests/tools/ensure.sh
set -euo pipefail
TOOLS=$(cd "$(dirname "$0")" && pwd)
cd "$TOOLS"
exec 9>"$TOOLS/.npm-install.lock"
flock 9
if [[ -x node_modules/.bin/buf && -d node_modules/@apidevtools/swagger-parser && -d node_modules/playwright-core &&
      -d node_modules/@marcbachmann/cel-js ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
