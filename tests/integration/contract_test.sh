#!/usr/bin/env bash
# The contract is checked like code: `buf lint` (STANDARD) on proto/, and
# `buf breaking` against the previous commit of main, so a change that breaks
# existing clients fails loudly. buf comes from the npm registry (pinned in
# tests/tools/package.json).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT/tests/tools"
bash "$ROOT/tests/tools/ensure.sh"
BUF=$ROOT/tests/tools/node_modules/.bin/buf
cd "$ROOT"
"$BUF" lint
echo "buf lint: ok"
"$BUF" build -o /dev/null
# Compare against the parent commit when it has a contract to compare with.
if git rev-parse -q --verify HEAD~1 >/dev/null && [[ -n "$(git ls-tree -r --name-only HEAD~1 -- proto)" ]]; then
  "$BUF" breaking --against ".git#ref=HEAD~1,subdir=."
  echo "buf breaking against HEAD~1: ok"
else
  echo "buf breaking: no previous contract in HEAD~1, nothing to compare"
fi
