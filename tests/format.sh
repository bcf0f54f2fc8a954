#!/usr/bin/env bash
# Formats every tracked C++ file with .clang-format; --check only reports
# (exit 1 and the files that differ) and changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ "${1:-}" == --check ]]; then
  if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/format.$$; then
    grep -o '^[^:]*\.\(cc\|h\)' /tmp/format.$$ | sort -u | sed 's/^/not formatted: /'
    rm -f /tmp/format.$$
    echo "format.sh: run tests/format.sh to fix" >&2
    exit 1
  fi
  rm -f /tmp/format.$$
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
