#!/usr/bin/env bash
# Followers depend on the catalog's contract only (the catalog_client library):
# pricing_server and gateway_server must not contain the catalog's file
# loader; catalog_server must (so the pattern is known to match).
# The gateway quotes from a copy of pricing's book with the quoting library
# (pricing_quote) only: it must not contain the pricing writer's code (the
# billing-file loader, price updates, the writer's store); pricing_server must.
#   tests/integration/follower_links_test.sh BUILD_DIR
set -uo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
catalog_writer=' [TtWw] gpuadvisor::catalog::(LoadCatalog|LoadCatalogSnapshot)\('
pricing_writer=' [TtWw] gpuadvisor::pricing::(LoadPriceBook\(|WithUpdates\(|PricesFromOffers\(|PriceStore::)'
pricing_quote=' [TtWw] gpuadvisor::pricing::PriceBook::Quote'
count() { nm -C "$BUILD_DIR/services/$1/$1_server" | grep -cE "$2"; }
status=0
expect() {  # expect SERVER PATTERN WHAT present|absent
  local n
  n=$(count "$1" "$2")
  if [[ $4 == present && $n -gt 0 ]]; then echo "PASS  $1_server has $3 ($n symbols)"
  elif [[ $4 == absent && $n == 0 ]]; then echo "PASS  $1_server does not link $3"
  else echo "FAIL  $1_server: $3 expected $4, $n symbols"; status=1; fi
}
expect catalog "$catalog_writer" "the catalog loader" present
expect pricing "$catalog_writer" "the catalog loader" absent
expect gateway "$catalog_writer" "the catalog loader" absent
expect pricing "$pricing_writer" "the pricing writer" present
expect gateway "$pricing_writer" "the pricing writer" absent
expect gateway "$pricing_quote" "the quoting library" present
exit $status
