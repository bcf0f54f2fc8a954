#!/usr/bin/env bash
# The compose deployment's certificates (the one-shot `certs` service runs it
# into the shared volume `tls`; deploy/check.sh runs it into a temp folder):
#   ca.crt ca.key                  a CA made for this deployment (ca.key: root only)
#   <service>/tls.crt, tls.key     gateway, catalog, sizing, pricing: serverAuth and
#                                  clientAuth (mTLS between the services), SANs the
#                                  compose host names <service>, <service>-0, <service>-1
#                                  (+ localhost and 127.0.0.1 on the gateway, for the
#                                  published port)
#   admin/tls.crt, tls.key         CN=admin-compose, clientAuth: for admin callers
# Files that exist are kept (the CA survives `up`/`down`; `down -v` starts over).
# Usage: gen-certs.sh [DIR]   (default /certs)
set -euo pipefail
dir=${1:-/certs}
mkdir -p "$dir"
cd "$dir"
umask 077
subj() { echo "/O=GPU Advisor compose/CN=$1"; }

if [[ ! -s ca.crt || ! -s ca.key ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "$(subj gpu-advisor-compose-ca)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout ca.key -out ca.crt 2>/dev/null
  rm -rf gateway catalog sizing pricing admin   # leaves of an older CA
fi

leaf() {  # name cn extensions
  local name=$1
  [[ -s $name/tls.crt && -s $name/tls.key ]] && return 0
  mkdir -p "$name"
  openssl req -newkey rsa:2048 -nodes -subj "$(subj "$2")" \
    -keyout "$name/tls.key" -out "$name/tls.csr" 2>/dev/null
  printf '%s\n' "$3" > "$name/tls.ext"
  openssl x509 -req -in "$name/tls.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
    -extfile "$name/tls.ext" -out "$name/tls.crt" 2>/dev/null
  rm -f "$name/tls.csr" "$name/tls.ext"
}

for service in gateway catalog sizing pricing; do
  sans="DNS:$service,DNS:$service-0,DNS:$service-1"
  [[ $service == gateway ]] && sans="$sans,DNS:localhost,IP:127.0.0.1"
  leaf "$service" "$service" "subjectAltName=$sans
extendedKeyUsage=serverAuth,clientAuth
keyUsage=digitalSignature,keyEncipherment"
done
leaf admin admin-compose "subjectAltName=DNS:admin-compose
extendedKeyUsage=clientAuth
keyUsage=digitalSignature,keyEncipherment"

# The services run as 10001 and read their certificate and key; ca.key stays root's.
chmod 0755 . gateway catalog sizing pricing admin
chmod 0444 ca.crt ./*/tls.crt
chmod 0400 ca.key ./*/tls.key
if [[ $(id -u) == 0 ]]; then
  chown -R 10001:10001 gateway catalog sizing pricing admin
fi
echo "certificates in $dir:"; ls -l "$dir" "$dir"/*/
