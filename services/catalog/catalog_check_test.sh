#!/usr/bin/env bash
# `catalog_server --check` lints catalog files offline: the shipped data/
# passes (exit 0), and real data files broken the ways a reload must refuse
# (prices x100, host RAM of 2 KB, GPU memory of 141 bytes, a file cut in
# half) fail (exit 1) with file:line messages.
#   catalog_check_test.sh <catalog_server> <source dir>
set -uo pipefail
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1"; echo "$2" | head -n 20 | sed 's/^/      /'; failures=$((failures + 1)); }

out=$("$BIN" --check --data_dir="$SRC/data" 2>&1)
code=$?
if [[ $code -eq 0 && $out == *"catalog check: OK"* ]]; then
  pass "data/ passes: $(echo "$out" | tail -n 1)"
else
  fail "data/ must pass --check (exit $code)" "$out"
fi
if echo "$out" | grep -qE '^warning: .*offers\.textproto:[0-9]+: offers\[[0-9]+\] ".*": spot price [0-9]+% below on-demand: likely stale$'; then
  pass "outliers are listed as warnings with file:line"
else
  fail "expected a 'spot price ..% below on-demand: likely stale' warning with file:line" "$out"
fi

OFFERS="$SRC/data/catalog/offers.textproto"
# expect_reject <name> <file> <regex on the error lines>
expect_reject() {
  local out code
  out=$("$BIN" --check --data_dir="$SRC/data" "$2" 2>&1)
  code=$?
  if [[ $code -eq 1 ]] && echo "$out" | grep -qE "$3"; then
    pass "$1: exit 1, $(echo "$out" | grep -E "$3" | head -n 1 | cut -c1-160)"
  else
    fail "$1: expected exit 1 and /$3/ (exit $code)" "$out"
  fi
}

mkdir -p "$TMP/x100" "$TMP/ram" "$TMP/gpu" "$TMP/cut"
sed 's/on_demand_usd_per_hour: 55.04 spot_usd_per_hour: 21.1543 reserved_usd_per_hour: 39.33/on_demand_usd_per_hour: 5504 spot_usd_per_hour: 2115.43 reserved_usd_per_hour: 3933/; s/spot_min_usd_per_hour: 10.2397 spot_max_usd_per_hour: 55.04 /spot_min_usd_per_hour: 1023.97 spot_max_usd_per_hour: 5504 /' \
  "$OFFERS" >"$TMP/x100/offers.textproto"
expect_reject "prices x100" "$TMP/x100/offers.textproto" \
  '^error: .*/x100/offers\.textproto:[0-9]+: offers\[[0-9]+\] "aws/p5\.48xlarge/us-east-1": on_demand_usd_per_hour 5504'

sed '0,/ram_bytes: 2199023255552/s//ram_bytes: 2048/' "$OFFERS" >"$TMP/ram/offers.textproto"
expect_reject "host RAM of 2 KB" "$TMP/ram/offers.textproto" \
  '^error: .*/ram/offers\.textproto:[0-9]+: offers\[[0-9]+\] ".*": ram_bytes 2048 \(2 KiB\)'

sed '0,/memory_bytes: 151397597184/s//memory_bytes: 141/' "$SRC/data/catalog/gpus.textproto" >"$TMP/gpu/gpus.textproto"
expect_reject "GPU memory of 141 bytes" "$TMP/gpu/gpus.textproto" \
  '^error: .*/gpu/gpus\.textproto:[0-9]+: gpus\[[0-9]+\] "H200": memory_bytes 141'

# The first half of the offers, cut at an offer boundary.
total=$(grep -c '^offers {' "$OFFERS")
awk -v keep=$((total / 2)) '/^offers \{/ { n++ } n <= keep { print }' "$OFFERS" >"$TMP/cut/offers.textproto"
expect_reject "a file cut at an offer boundary" "$TMP/cut/offers.textproto" \
  "^error: .*the reload has $((total / 2)) offers where $total are serving"

echo "catalog --check: $failures failure(s)"
exit $((failures > 0))
