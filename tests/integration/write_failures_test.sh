#!/usr/bin/env bash
# A write the services depend on that cannot happen, seen by a real
# Prometheus: the gateway's catalog cache points under a regular file (so no
# user, root included, can create it). The gateway logs the failure and keeps
# serving; gpuadvisor_write_failures_total{service="gateway",what="catalog_cache"}
# counts it and the project's GpuAdvisorWriteFailing alert fires.
# Bounded (every wait has a deadline; about 10 s) and self-cleaning.
#   tests/integration/write_failures_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
PY=/usr/bin/python3
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-writes.XXXXXX)
PROM_PID=""
cleanup() {
  [[ -n "$PROM_PID" ]] && kill -TERM "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
  stack_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
passed=0 failed=0
check() {
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
}

touch "$TMP/not-a-directory"
STACK_GATEWAY_ARGS=(--catalog_cache_file="$TMP/not-a-directory/catalog.cache")
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
check "the gateway logs the failed cache write and serves" \
  bash -c "grep -q 'cannot write cache' '$TMP/logs/gateway.log' && curl -sf 'http://$GATEWAY_HTTP/v1/health' | grep -q SERVING"

mkdir -p "$TMP/prom"
sed -E 's/^([[:space:]]+for:[[:space:]]*)[0-9]+[smhd]/\12s/' "$ROOT/deploy/prometheus/rules.yml" >"$TMP/prom/rules.yml"
cat >"$TMP/prom/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: [rules.yml]
scrape_configs:
  - job_name: gpuadvisor-gateway
    static_configs: [{targets: ["$GATEWAY_METRICS"]}]
EOF
# Prometheus cannot listen on port 0 and say where: take a free port and
# retry on "address already in use" (as prometheus_test.sh does).
PROM=""
for _ in 1 2 3; do
  port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$port" >"$TMP/prom/log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do
    if curl -sf --max-time 1 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
      PROM=127.0.0.1:$port; break 2
    fi
    kill -0 "$PROM_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; PROM_PID=""
  grep -q "address already in use" "$TMP/prom/log" || break
done
[[ -n "$PROM" ]] || { echo "prometheus did not start"; tail -20 "$TMP/prom/log"; exit 1; }
query() {  # promql -> the JSON result list on stdout
  curl -s --get --data-urlencode "query=$1" "http://$PROM/api/v1/query" |
    $PY -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["data"]["result"]))'
}
wait_for() {  # description, python expression over `r` (the result list) of query $2
  local what=$1 q=$2 cond=$3
  for _ in $(seq 1 150); do
    if query "$q" | $PY -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($cond) else 1)" 2>/dev/null; then
      check "$what" true
      return
    fi
    sleep 0.1
  done
  check "$what (last: $(query "$q"))" false
}
wait_for "Prometheus sees gpuadvisor_write_failures_total{service=gateway,what=catalog_cache} >= 1" \
  'gpuadvisor_write_failures_total{service="gateway",what="catalog_cache"}' \
  'len(r) == 1 and float(r[0]["value"][1]) >= 1'
wait_for "GpuAdvisorWriteFailing fires for the gateway's catalog_cache" \
  'ALERTS{alertname="GpuAdvisorWriteFailing",alertstate="firing"}' \
  'any(a["metric"].get("what") == "catalog_cache" and a["metric"].get("service") == "gateway" for a in r)'
echo "write_failures: $passed passed, $failed failed"
[[ $failed == 0 && $passed -gt 0 ]]
