#!/usr/bin/env bash
# Runs the README's examples against the four real services on ephemeral
# ports: every ```sh block of "Use it from HTTP, a browser, SkyPilot, dstack or
# Karpenter", then the install blocks and the ```python and ```js examples of
# "Clients", in a scratch copy of clients/ and proto/. The README's default
# addresses (127.0.0.1:8080 HTTP, 127.0.0.1:50050 gRPC) are replaced by the
# announced ones. The exported files are checked with export_check.py.
#   tests/http/readme_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
PY=/usr/bin/python3
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-readme.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
bash "$ROOT/tests/tools/ensure.sh" || exit 1  # cel-js for export_check.py
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1

# block SECTION LANG -> the section's blocks of that language, NUL-separated,
# with the addresses replaced.
blocks() {
  $PY - "$ROOT/README.md" "$1" "$2" "$GATEWAY_HTTP" "$GATEWAY_ADDR" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
section, lang, http, grpc = sys.argv[2:6]
start = text.index("\n## " + section)
end = text.find("\n## ", start + 1)
body = text[start:end if end > 0 else len(text)]
found = re.findall(r"```" + lang + r"\n(.*?)```", body, re.S)
if not found:
    sys.exit(f"no {lang} block in README section {section!r}")
for b in found:
    sys.stdout.write(b.replace("127.0.0.1:8080", http).replace("127.0.0.1:50050", grpc) + "\0")
PYEOF
}

passed=0 failed=0
check() {
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
}

mkdir -p "$TMP/work"
cp -r "$ROOT/clients" "$ROOT/proto" "$TMP/work/"
rm -rf "$TMP/work/clients/node/node_modules" "$TMP/work/clients/python/build"
cd "$TMP/work" || exit 1

i=0
while IFS= read -r -d '' block; do
  i=$((i + 1))
  printf '%s' "$block" > "$TMP/http$i.sh"
  check "README HTTP example $i runs" bash -euo pipefail "$TMP/http$i.sh" > "$TMP/http$i.out" 2>&1
  cat "$TMP/http$i.out"
done < <(blocks "Use it from HTTP, a browser, SkyPilot, dstack or Karpenter" sh)
check "the JSON example prints ranked offers" grep -Eq '^1 [a-z]+ ' "$TMP/http1.out"
check "the error example names the field" grep -q '"field":"workload.model.params"' "$TMP/http1.out"
curl -s -X POST "http://$GATEWAY_HTTP/v1/recommend" -d @request.json > "$TMP/answer.json"
check "README export keeps its fallbacks (both SkyPilot files hold ranks)" \
  bash -c '(( $(grep -c "^    # rank" task.yaml) + $(grep -c "^    # rank" task-2.yaml) > 1 ))'
for pair in skypilot:task.yaml skypilot:task-2.yaml dstack:task.dstack.yml karpenter:nodepools.yaml; do
  check "README export ${pair#*:} follows the ${pair%%:*} schema in rank order" \
    $PY "$ROOT/tests/http/export_check.py" "${pair%%:*}" "${pair#*:}" "$TMP/answer.json"
done

i=0
while IFS= read -r -d '' block; do
  i=$((i + 1))
  printf '%s' "$block" > "$TMP/install$i.sh"
  if bash -euo pipefail "$TMP/install$i.sh" > "$TMP/install$i.out" 2>&1; then
    check "README client install $i runs" true
  else
    tail -20 "$TMP/install$i.out"
    check "README client install $i runs" false
  fi
done < <(blocks "Clients" sh)
blocks "Clients" python | tr -d '\0' > example.py
check "README Python example prints ranked offers" bash -c '.venv/bin/python example.py | tee py.out && grep -Eq "^1 [a-z]+ " py.out'
blocks "Clients" js | tr -d '\0' > example.js
check "README Node example prints ranked offers" bash -c 'node example.js | tee js.out && grep -Eq "^1 [a-z]+ " js.out'

echo "readme_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
