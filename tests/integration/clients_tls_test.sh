#!/usr/bin/env bash
# The CLI and the Python and Node clients against a TLS stack: certificates
# made with openssl at test time (tests/testing/make_certs.sh), the four real
# services with TLS and mTLS between them (deploy/local/stack.sh with
# STACK_TLS_DIR). Each client must get an answer with the CA (and with a
# client certificate), and must fail in plaintext or with another CA.
#   tests/integration/clients_tls_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-tls.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
C=$TMP/certs
bash "$ROOT/tests/testing/make_certs.sh" "$C" || exit 1
STACK_TLS_DIR=$C stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
cli=$BUILD_DIR/services/cli/gpu-advisor
failed=0 passed=0
expect() {  # description want(ok|fail) command...
  local what=$1 want=$2 got=fail
  shift 2
  if "$@" >"$TMP/out" 2>&1; then got=ok; fi
  if [[ $got == "$want" ]]; then
    echo "PASS  $what"; passed=$((passed + 1))
  else
    echo "FAIL  $what (wanted $want, got $got)"; sed 's/^/      /' "$TMP/out"; failed=$((failed + 1))
  fi
}

# CLI
expect "cli: gpus over TLS with the CA" ok \
  bash -c "'$cli' gpus --gateway=$GATEWAY_ADDR --tls_ca=$C/ca.pem --json | grep -q '\"gpus\"'"
expect "cli: gpus over mTLS with a client certificate" ok \
  bash -c "'$cli' gpus --gateway=$GATEWAY_ADDR --tls_ca=$C/ca.pem --tls_cert=$C/client.pem --tls_key=$C/client.key --json | grep -q '\"gpus\"'"
expect "cli: health of a backend that requires a client certificate" ok \
  "$cli" health --target="$CATALOG_ADDR" --tls_ca="$C/ca.pem" --tls_cert="$C/server.pem" --tls_key="$C/server.key"
expect "cli: that backend refuses a caller without one" fail \
  "$cli" health --target="$CATALOG_ADDR" --tls_ca="$C/ca.pem" --timeout_seconds=3
expect "cli: plaintext to the TLS gateway fails" fail "$cli" gpus --gateway="$GATEWAY_ADDR" --timeout_seconds=3
expect "cli: another CA fails" fail "$cli" gpus --gateway="$GATEWAY_ADDR" --tls_ca="$C/other-ca.pem" --timeout_seconds=3
expect "cli: a certificate without its key is refused" fail \
  "$cli" gpus --gateway="$GATEWAY_ADDR" --tls_ca="$C/ca.pem" --tls_cert="$C/client.pem"

# Python: the package with its stubs generated into a temp copy.
mkdir -p "$TMP/py" && cp -r "$ROOT/clients/python/gpuadvisor" "$TMP/py/"
GRPC_PYTHON_PLUGIN=/usr/bin/grpc_python_plugin bash "$ROOT/clients/python/gen_stubs.sh" "$TMP/py" >/dev/null
cat >"$TMP/tls_check.py" <<'PY'
import sys
from gpuadvisor import GatewayClient
target, ca, cert, key = sys.argv[1:5]
kwargs = {"ca_file": ca}
if cert != "-":
    kwargs.update(cert_file=cert, key_file=key)
with GatewayClient(target, timeout=5, **kwargs) as client:
    gpus = client.gpus().gpus
    assert len(gpus) > 0, "no GPUs"
    print(f"python over TLS: {len(gpus)} GPUs")
PY
py() { PYTHONPATH=$TMP/py /usr/bin/python3 "$TMP/tls_check.py" "$@"; }
expect "python: GatewayClient(ca_file=...)" ok py "$GATEWAY_ADDR" "$C/ca.pem" - -
expect "python: GatewayClient(ca_file, cert_file, key_file)" ok py "$GATEWAY_ADDR" "$C/ca.pem" "$C/client.pem" "$C/client.key"
expect "python: another CA fails" fail py "$GATEWAY_ADDR" "$C/other-ca.pem" - -

# Node: the package from clients/node.
if [[ ! -d "$ROOT/clients/node/node_modules/@grpc/grpc-js" ]]; then
  (cd "$ROOT/clients/node" && npm ci --no-audit --no-fund --loglevel=error) || exit 1
fi
cat >"$TMP/tls_check.js" <<'JS'
const {GatewayClient} = require(process.argv[2]);
const [target, ca, cert, key] = process.argv.slice(3);
const options = {ca, timeoutMs: 5000};
if (cert !== '-') Object.assign(options, {cert, key});
new GatewayClient(target, options).gpus().then((r) => {
  if (!r.gpus.length) throw new Error('no GPUs');
  console.log(`node over TLS: ${r.gpus.length} GPUs`);
  process.exit(0);
}).catch((e) => { console.error(e.message); process.exit(1); });
JS
nd() { node "$TMP/tls_check.js" "$ROOT/clients/node" "$@"; }
expect "node: GatewayClient({ca})" ok nd "$GATEWAY_ADDR" "$C/ca.pem" - -
expect "node: GatewayClient({ca, cert, key})" ok nd "$GATEWAY_ADDR" "$C/ca.pem" "$C/client.pem" "$C/client.key"
expect "node: another CA fails" fail nd "$GATEWAY_ADDR" "$C/other-ca.pem" - -

# HTTP/JSON: the gateway's HTTP port serves HTTPS with the same certificate
# (client certificates verified when presented), never plaintext.
B=https://$GATEWAY_HTTP
expect "https: curl health with the CA" ok \
  bash -c "curl -sS --fail --cacert '$C/ca.pem' '$B/v1/health' | grep -q SERVING"
expect "https: curl recommend with a client certificate" ok \
  bash -c "curl -sS --fail --cacert '$C/ca.pem' --cert '$C/client.pem' --key '$C/client.key' \
    -X POST '$B/v1/recommend' -d '{\"workload\":{\"model\":{\"preset\":\"llama-3.1-8b\"},\"task\":\"lora\",\"train_tokens\":100000000}}' \
    | grep -q recommendations"
expect "https: the web page" ok bash -c "curl -sS --fail --cacert '$C/ca.pem' '$B/' | grep -q 'GPU Advisor'"
expect "https: plaintext HTTP to the port fails" fail \
  curl -sS --fail --max-time 5 "http://$GATEWAY_HTTP/v1/health"
expect "https: another CA fails" fail curl -sS --fail --max-time 5 --cacert "$C/other-ca.pem" "$B/v1/health"
expect "https: python urllib with the CA" ok /usr/bin/python3 -c "
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile='$C/ca.pem')
body = urllib.request.urlopen('$B/v1/models', context=ctx, timeout=5).read()
sys.exit(0 if b'models' in body else 1)"
expect "https: node https with the CA" ok node -e "
const https = require('https'), fs = require('fs');
https.get('$B/v1/gpus', {ca: fs.readFileSync('$C/ca.pem')}, (res) => {
  let body = ''; res.on('data', (d) => body += d);
  res.on('end', () => process.exit(res.statusCode === 200 && body.includes('gpus') ? 0 : 1));
}).on('error', (e) => { console.error(e.message); process.exit(1); });"

# The README's HTTPS block, with its addresses and certificate folder.
/usr/bin/python3 - "$ROOT/README.md" "$GATEWAY_HTTP" "$C" > "$TMP/readme_https.sh" <<'PYEOF'
import re, sys
text, http, certs = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
start = text.index("\n## Production hardening")
body = text[start:text.find("\n## ", start + 1)]
blocks = re.findall(r"```sh\n(.*?)```", body, re.S)
assert blocks, "no sh block in Production hardening"
print(blocks[0].replace("127.0.0.1:8080", http).replace("certs/", certs + "/"))
PYEOF
expect "README: the HTTPS example runs" ok bash -euo pipefail "$TMP/readme_https.sh"
cat "$TMP/out"

# Every curl example of the README's HTTP section ("Use it from HTTP, ..."),
# over HTTPS: https:// and the test CA on each curl, in a scratch folder.
/usr/bin/python3 - "$ROOT/README.md" "$GATEWAY_HTTP" "$C" "$TMP/readme_http" <<'PYEOF'
import os, re, sys
text, http, certs, out = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
start = text.index("\n## Use it from HTTP, a browser, SkyPilot, dstack or Karpenter")
body = text[start:text.find("\n## ", start + 1)]
blocks = [b for b in re.findall(r"```sh\n(.*?)```", body, re.S) if "curl " in b]
assert len(blocks) >= 2, "the README's HTTP section lost its curl examples"
os.makedirs(out, exist_ok=True)
for i, b in enumerate(blocks, 1):
    b = b.replace("http://127.0.0.1:8080", "https://" + http)
    b = b.replace("'http://127.0.0.1:8080", "'https://" + http)
    b = re.sub(r"\bcurl -s", f"curl -s --cacert {certs}/ca.pem", b)
    assert "127.0.0.1:8080" not in b and "http://" not in b, b
    open(os.path.join(out, f"block{i}.sh"), "w").write(b)
PYEOF
for f in "$TMP"/readme_http/block*.sh; do
  expect "README: HTTP example $(basename "$f" .sh) runs over HTTPS" ok \
    bash -c "cd '$TMP/readme_http' && bash -euo pipefail '$f' > '$f.out' 2>&1"
  cat "$f.out"
done
expect "README over HTTPS: the JSON example prints ranked offers" ok \
  grep -Eq '^1 [a-z]+ ' "$TMP/readme_http/block1.sh.out"
expect "README over HTTPS: a bad field is a 400 naming it" ok \
  grep -q '"field":"workload.model.params"' "$TMP/readme_http/block1.sh.out"
expect "README over HTTPS: the export example wrote its files" ok \
  bash -c "cd '$TMP/readme_http' && grep -q '# rank 1' task.yaml && grep -q 'kind: NodePool' nodepools.yaml && grep -q '^type: task' task.dstack.yml"

echo "clients_tls: $passed passed, $failed failed"
[[ $failed == 0 && $passed -gt 0 ]]
