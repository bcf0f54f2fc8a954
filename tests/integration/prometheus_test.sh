#!/usr/bin/env bash
# A real Prometheus (2.42, Debian's) scraping the four real services on
# loopback, with the project's rules from deploy/prometheus/rules.yml:
#   - every target is up;
#   - Recommend calls through the CLI show up in grpc_server_handled_total;
#   - the recording rules produce data, and a healthy stack raises no alert;
#   - after the sizing server is killed, its target-down alert appears and a
#     Recommend fails with UNAVAILABLE / DEADLINE_EXCEEDED;
#   - every /metrics page passes `promtool check metrics`.
# Bounded (every wait has a deadline; about 15-20 s in all) and self-cleaning.
# Usage: tests/integration/prometheus_test.sh BUILD_DIR
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
CLI=$BUILD_DIR/services/cli/gpu-advisor
PY=/usr/bin/python3   # Debian's python (TOOLCHAIN pitfall 12)

for tool in prometheus promtool curl "$PY" "$CLI"; do
  command -v "$tool" >/dev/null || { echo "prometheus_test: missing $tool" >&2; exit 1; }
done

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"

TMP=$(mktemp -d /tmp/gpu-advisor-prom.XXXXXX)
PROM_PID=""
cleanup() {
  if [[ -n "$PROM_PID" ]]; then
    kill -TERM "$PROM_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$PROM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
  fi
  stack_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT   # the EXIT trap runs on signals too
trap 'exit 143' TERM
trap 'exit 129' HUP

passed=0
failed=0
pass() { echo "PASS  $1"; passed=$((passed + 1)); }
fail() {
  echo "FAIL  $1"
  # shellcheck disable=SC2001  # indent every line of the detail
  if [[ $# -gt 1 ]]; then sed "s/^/      /" <<<"$2"; fi
  failed=$((failed + 1))
}
finish() {
  if [[ $failed -gt 0 && -f "$TMP/prometheus.log" ]]; then
    echo "--- prometheus log (tail) ---"; tail -n 20 "$TMP/prometheus.log"
  fi
  echo "prometheus: $passed passed, $failed failed"
  [[ $failed -eq 0 ]] && exit 0 || exit 1
}

# --- the stack, on ephemeral ports ----------------------------------------
if ! stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs"; then
  fail "stack start"; finish
fi
pass "stack up: gateway=$GATEWAY_ADDR metrics: gw=$GATEWAY_METRICS cat=$CATALOG_METRICS siz=$SIZING_METRICS pri=$PRICING_METRICS"

# --- Prometheus config and rules ------------------------------------------
# The rules are the project's own file, but its `for:` durations (2m..15m) are
# far longer than a test may take, so the copy used here has every `for:`
# shortened to 2s. Expressions, labels and annotations are unchanged.
PROM_DIR=$TMP/prom
mkdir -p "$PROM_DIR"
sed -E 's/^([[:space:]]+for:[[:space:]]*)[0-9]+[smhd]/\12s/' \
  "$ROOT/deploy/prometheus/rules.yml" >"$PROM_DIR/rules.yml"
want_for=$(grep -cE '^[[:space:]]+for:' "$ROOT/deploy/prometheus/rules.yml")
got_for=$(grep -cE '^[[:space:]]+for: 2s$' "$PROM_DIR/rules.yml")
if [[ "$want_for" == "$got_for" && "$want_for" -gt 0 ]]; then
  pass "test copy of rules.yml: $got_for 'for:' durations shortened to 2s"
else
  fail "shortening 'for:' in rules.yml (expected $want_for, got $got_for)"
fi
cat >"$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - rules.yml
scrape_configs:
  - job_name: gpuadvisor-gateway
    static_configs: [{targets: ["$GATEWAY_METRICS"]}]
  - job_name: gpuadvisor-catalog
    static_configs: [{targets: ["$CATALOG_METRICS"]}]
  - job_name: gpuadvisor-sizing
    static_configs: [{targets: ["$SIZING_METRICS"]}]
  - job_name: gpuadvisor-pricing
    static_configs: [{targets: ["$PRICING_METRICS"]}]
EOF
if out=$(promtool check config "$PROM_DIR/prometheus.yml" 2>&1); then
  pass "promtool check config (test config + rules)"
else
  fail "promtool check config" "$out"; finish
fi

# --- Prometheus ------------------------------------------------------------
# The one exception to "ports are picked by whoever listens": Prometheus
# cannot listen on port 0 and report the port, so a free port is found by
# binding 127.0.0.1:0 in python and releasing it just before Prometheus
# starts. Another process could take it in between, so on "address already
# in use" we retry with a new port (3 attempts).
free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
PROM=""
for _ in 1 2 3; do
  port=$(free_port)
  prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$port" >"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do   # 10 s
    if curl -sf --max-time 1 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
      PROM="http://127.0.0.1:$port"; break 2
    fi
    kill -0 "$PROM_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$PROM_PID" 2>/dev/null || true
  wait "$PROM_PID" 2>/dev/null || true
  PROM_PID=""
  grep -q "address already in use" "$TMP/prometheus.log" || break
done
if [[ -z "$PROM" ]]; then
  fail "prometheus ready" "$(tail -n 20 "$TMP/prometheus.log")"; finish
fi
pass "prometheus ready at $PROM (pid $PROM_PID)"

# --- query helpers -----------------------------------------------------------
# vector EXPR: one line per series, "label=value,... VALUE"; rc 1 on an API error.
PY_VECTOR='
import json, sys
d = json.load(sys.stdin)
if d.get("status") != "success":
    print(d, file=sys.stderr); sys.exit(1)
r = d["data"]["result"]
if d["data"]["resultType"] == "scalar":
    print(" " + r[1]); sys.exit(0)
for s in r:
    print(",".join("%s=%s" % kv for kv in sorted(s["metric"].items())), s["value"][1])
'
vector() {
  curl -sS --max-time 3 -G --data-urlencode "query=$1" "$PROM/api/v1/query" | "$PY" -c "$PY_VECTOR"
}
# total EXPR: the sum of the values of the result, or "none" if it is empty.
total() {
  vector "$1" | "$PY" -c '
import sys
v = [float(l.rsplit(" ", 1)[1]) for l in sys.stdin if l.strip()]
print(sum(v) if v else "none")'
}
# alerts: one line per active alert, "NAME STATE job=... instance=...".
alerts() {
  curl -sS --max-time 3 "$PROM/api/v1/alerts" | "$PY" -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    print(l.get("alertname"), a["state"], "job=" + l.get("job", ""), "instance=" + l.get("instance", ""))'
}
# wait_for SECONDS CMD...: polls CMD every 0.25 s until it succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  while ((SECONDS < deadline)); do
    "$@" && return 0
    sleep 0.25
  done
  "$@"
}

# has_positive EXPR / has_data EXPR: the result sums to > 0 / is not empty.
has_positive() { local v; v=$(total "$1" 2>/dev/null) && [[ "$v" != none ]] && "$PY" -c "import sys; sys.exit(0 if float('$v') > 0 else 1)"; }
has_data() { local v; v=$(total "$1" 2>/dev/null) && [[ "$v" != none ]]; }
RECOMMEND_OK='sum(grpc_server_handled_total{grpc_method="Recommend",grpc_code="OK"})'

# --- 1. every target up -------------------------------------------------------
all_up() {
  local v
  v=$(vector 'up{job=~"gpuadvisor-.*"}' 2>/dev/null) || return 1
  [[ $(grep -c ' 1$' <<<"$v") == 4 && $(wc -l <<<"$v") == 4 ]]
}
if wait_for 10 all_up; then
  pass "up == 1 for all four jobs"
else
  fail "up == 1 for all four jobs" "$(vector 'up' 2>&1)"
fi

# --- 1b. process and build metrics on every service --------------------------
# common/metrics/process_metrics.h: each of the four jobs reports its CPU,
# memory, descriptors, start time and one gpuadvisor_build_info series naming
# the commit the binary was built from (this checkout's HEAD).
HEAD_COMMIT=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
for q in 'process_resident_memory_bytes{job=~"gpuadvisor-.*"} > 1e6' \
         'process_open_fds{job=~"gpuadvisor-.*"} > 0' \
         'process_start_time_seconds{job=~"gpuadvisor-.*"} > time() - 3600' \
         'process_cpu_seconds_total{job=~"gpuadvisor-.*"} > 0' \
         "gpuadvisor_build_info{job=~\"gpuadvisor-.*\",commit=\"$HEAD_COMMIT\",version!=\"unknown\"} == 1"; do
  four() { local v; v=$(vector "$q" 2>/dev/null) && [[ $(grep -c . <<<"$v") == 4 ]]; }
  if wait_for 10 four; then
    pass "all four jobs: $q"
  else
    fail "all four jobs: $q" "$(vector "${q%% *}" 2>&1)"
  fi
done

# --- 2. Recommend traffic reaches the server counter -----------------------
recommend() {  # [train_tokens]
  "$CLI" recommend --gateway="$GATEWAY_ADDR" --model=llama-3.1-8b --task=lora \
    --train_tokens="${1:-5e7}" --seq_len=2048 --timeout_seconds=5
}
# The services create a counter/histogram series on its first use, so the
# Recommend series is born with the calls made before its first scrape, and
# rate() counts nothing of that first burst (there is no earlier sample).
# One warm-up call, seen by Prometheus, lets the next 20 be counted by rate()
# and so by the recording rules.
recommend >"$TMP/recommend.out" 2>&1 || fail "warm-up Recommend call" "$(tail -n 5 "$TMP/recommend.out")"
series_seen() { has_data "$RECOMMEND_OK"; }
wait_for 10 series_seen || fail "Recommend series scraped after the warm-up call" "$(vector "$RECOMMEND_OK" 2>&1)"
ok_calls=0
for _ in $(seq 1 20); do
  if recommend >"$TMP/recommend.out" 2>&1; then ok_calls=$((ok_calls + 1)); fi
done
if [[ $ok_calls == 20 ]]; then
  pass "20 CLI Recommend calls succeeded (after 1 warm-up call)"
else
  fail "CLI Recommend calls: $ok_calls of 20 succeeded" "$(tail -n 5 "$TMP/recommend.out")"
fi
recommend_ok_at_least_20() {
  local v; v=$(total "$RECOMMEND_OK" 2>/dev/null) || return 1
  [[ "$v" != none ]] && "$PY" -c "import sys; sys.exit(0 if float('$v') >= 20 else 1)"
}
if wait_for 15 recommend_ok_at_least_20; then
  pass "$RECOMMEND_OK = $(total "$RECOMMEND_OK") (>= 20)"
else
  fail "$RECOMMEND_OK >= 20 within 15 s" "got: $(total "$RECOMMEND_OK" 2>&1)"
fi

# --- 3. recording rules from rules.yml --------------------------------------
RATE_RULE='gpuadvisor:grpc_server_requests:rate5m{job="gpuadvisor-gateway",grpc_method="Recommend"}'
P99_RULE='gpuadvisor:grpc_server_handling_seconds:p99_5m{job="gpuadvisor-gateway",grpc_method="Recommend"}'
RATIO_RULE='gpuadvisor:grpc_server_fault_ratio:rate5m{job="gpuadvisor-gateway"}'
for rule in "$RATE_RULE" "$P99_RULE"; do
  if wait_for 10 has_positive "$rule"; then
    pass "recording rule $rule = $(total "$rule")"
  else
    fail "recording rule $rule has data > 0 within 10 s" "$(vector "$rule" 2>&1)"
  fi
done
is_zero() { local v; v=$(total "$1" 2>/dev/null) && [[ "$v" != none ]] && "$PY" -c "import sys; sys.exit(0 if float('$v') == 0 else 1)"; }
if wait_for 5 is_zero "$RATIO_RULE"; then
  pass "recording rule $RATIO_RULE = $(total "$RATIO_RULE") on a healthy stack"
else
  fail "recording rule $RATIO_RULE = 0" "$(vector "$RATIO_RULE" 2>&1)"
fi
# A healthy stack raises no alert (all rules have been evaluated on data by now).
# GpuAdvisorPriceDataOld is about the data, not the stack: the embedded sample
# prices age with the calendar, so it is left out here (rules_test.yml tests it).
# GpuAdvisorRecommendSlow is left out too: p99 over these 21 calls is their
# slowest, and on a loaded 2-core machine one cold call can pass 50 ms. The
# real rule's `for: 10m` keeps such a blip from firing (rules_test.yml tests
# that); this copy's 2 s does not, so here it may be pending or firing.
active=$(alerts 2>&1 | grep -v '^GpuAdvisorPriceDataOld ' | grep -v -E '^GpuAdvisorRecommendSlow (pending|firing) ' || true)
if [[ -z "$active" ]]; then
  pass "no alert pending or firing on the healthy stack"
else
  fail "no alert pending or firing on the healthy stack" "$active"
fi

# --- 4. kill the sizing server ----------------------------------------------
# promtool-lint its exposition while it is still alive.
if out=$(curl -sS --max-time 3 "http://$SIZING_METRICS/metrics" | promtool check metrics 2>&1); then
  pass "promtool check metrics: sizing ($SIZING_METRICS)"
else
  fail "promtool check metrics: sizing ($SIZING_METRICS)" "$out"
fi
SIZING_PID=${STACK_PIDS[1]}
kill_at=$SECONDS
kill -KILL "$SIZING_PID"
wait "$SIZING_PID" 2>/dev/null
echo "      killed sizing_server (pid $SIZING_PID)"

sizing_alert() { alerts 2>/dev/null | grep -E '^GpuAdvisorTargetDown (pending|firing) job=gpuadvisor-sizing '; }
if line=$(wait_for 20 sizing_alert); then
  pass "alert appeared after ~$((SECONDS - kill_at)) s: $line"
else
  fail "GpuAdvisorTargetDown for gpuadvisor-sizing within 20 s" "$(alerts 2>&1)"
fi
# With the test's `for: 2s` it must go on to fire, with its annotation rendered.
sizing_firing() {
  curl -sS --max-time 3 "$PROM/api/v1/alerts" | "$PY" -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if l.get("alertname") == "GpuAdvisorTargetDown" and l.get("job") == "gpuadvisor-sizing" \
            and a["state"] == "firing":
        print(a["annotations"]["summary"]); sys.exit(0)
sys.exit(1)'
}
if summary=$(wait_for 10 sizing_firing 2>/dev/null); then
  pass "GpuAdvisorTargetDown firing after ~$((SECONDS - kill_at)) s: \"$summary\""
else
  fail "GpuAdvisorTargetDown for gpuadvisor-sizing firing within 10 s" "$(alerts 2>&1)"
fi
echo "      alerts now: $(alerts 2>/dev/null | tr '\n' ';')"

# A request the gateway has not answered before: a repeated one would come
# from its response cache, which needs no sizing.
if recommend 6e7 >"$TMP/down.out" 2>"$TMP/down.err"; then
  fail "Recommend with sizing down must fail, but it succeeded" "$(head -n 5 "$TMP/down.out")"
elif grep -qE 'UNAVAILABLE|DEADLINE_EXCEEDED' "$TMP/down.err"; then
  pass "Recommend with sizing down fails: $(head -n 1 "$TMP/down.err")"
else
  fail "Recommend with sizing down: stderr lacks UNAVAILABLE/DEADLINE_EXCEEDED" "$(cat "$TMP/down.err")"
fi

# --- 5. exposition format of the live services -----------------------------
for svc in gateway catalog pricing; do
  var=${svc^^}_METRICS
  addr=${!var}
  if out=$(curl -sS --max-time 3 "http://$addr/metrics" | promtool check metrics 2>&1); then
    pass "promtool check metrics: $svc ($addr)"
  else
    fail "promtool check metrics: $svc ($addr)" "$out"
  fi
done

finish
