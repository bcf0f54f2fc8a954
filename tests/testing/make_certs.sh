#!/usr/bin/env bash
# Writes a throwaway CA and certificates for TLS tests into DIR:
#   ca.pem ca.key          the CA
#   server.pem server.key  CN=gpuadvisor-service, SAN IP:127.0.0.1, DNS:localhost
#   client.pem client.key  CN=admin-ops (a caller identity for audit lines)
#   other-ca.pem           an unrelated CA (for "wrong CA" cases)
# Usage: tests/testing/make_certs.sh DIR
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
cd "$dir"
subj() { echo "/O=GPU Advisor tests/CN=$1"; }
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "$(subj test-ca)" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "$(subj other-ca)" \
  -keyout other-ca.key -out other-ca.pem 2>/dev/null
leaf() {  # name cn extensions
  openssl req -newkey rsa:2048 -nodes -subj "$(subj "$2")" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
leaf server gpuadvisor-service "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
leaf client admin-ops "subjectAltName=DNS:admin-ops
extendedKeyUsage=clientAuth"
