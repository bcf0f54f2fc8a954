#!/usr/bin/env bash
# Followers depend on the catalog's contract only (the catalog_client library):
# pricing_server and gateway_server must not contain the catalog's file
# loader; catalog_server must (so the pattern is known to match).
#   tests/integration/follower_links_test.sh BUILD_DIR
set -uo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
pattern=' [TtWw] gpuadvisor::catalog::(LoadCatalog|LoadCatalogSnapshot)\('
count() { nm -C "$BUILD_DIR/services/$1/$1_server" | grep -cE "$pattern"; }
status=0
if [[ $(count catalog) -gt 0 ]]; then echo "PASS  catalog_server has the loader"; else echo "FAIL  catalog_server: pattern matched nothing"; status=1; fi
for follower in pricing gateway; do
  n=$(count "$follower")
  if [[ $n == 0 ]]; then echo "PASS  ${follower}_server does not link the catalog loader"
  else echo "FAIL  ${follower}_server links the catalog loader ($n symbols)"; status=1; fi
done
exit $status
