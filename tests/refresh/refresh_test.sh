#!/usr/bin/env bash
# The refresher end to end (docs/catalog.md "Refresh"): a local HTTPS server
# (tests/refresh/replay_server.py, a throwaway CA made with openssl) replays
# real recorded files of ../shared/fixtures (Vast's offer search, SkyPilot's
# Lambda vms.csv); the refresher fetches them over verified TLS, the catalog
# writer reloads, and the gateway answers. Then every fault in turn
# (timeout, HTTP 500, a truncated body, a changed schema, every price x10, an
# empty page) must keep the last good copy serving (the same answer, the
# same price) with a growing age and a visible reason; and a real Prometheus
# with deploy/prometheus/rules.yml fires GpuAdvisorSourceStale when a source
# passes its budget. Fixtures missing: skipped locally, a failure when
# CI=true. Bounded (about 60-90 s) and self-cleaning.
# Usage: tests/refresh/refresh_test.sh BUILD_DIR
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
CLI=$BUILD_DIR/services/cli/gpu-advisor
REFRESHER=$BUILD_DIR/services/refresher/refresher
PY=/usr/bin/python3
FIX=$ROOT/../shared/fixtures

for tool in prometheus promtool curl openssl "$PY" "$CLI" "$REFRESHER"; do
  command -v "$tool" >/dev/null || { echo "refresh_test: missing $tool" >&2; exit 1; }
done
if [[ ! -f "$FIX/vast/vastai-search-offers.excerpt.json" ]]; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL  fixtures missing under CI=true: $FIX" >&2; exit 1; fi
  echo "SKIP  fixtures missing: $FIX"; exit 0
fi

# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-refresh.XXXXXX)
REPLAY_PID="" REFRESHER_PID="" PROM_PID=""
stop_pid() {
  [[ -n "$1" ]] || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$PROM_PID"; stop_pid "$REFRESHER_PID"; stop_pid "$REPLAY_PID"
  stack_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

passed=0 failed=0
pass() { echo "PASS  $1"; passed=$((passed + 1)); }
fail() {
  echo "FAIL  $1"
  if [[ $# -gt 1 ]]; then sed "s/^/      /" <<<"$2"; fi
  failed=$((failed + 1))
}
finish() {
  if [[ $failed -gt 0 ]]; then
    echo "--- refresher log (tail) ---"; tail -n 30 "$TMP/refresher.log" 2>/dev/null
    echo "--- replay log (tail) ---"; tail -n 10 "$TMP/replay.log" 2>/dev/null
  fi
  echo "refresh: $passed passed, $failed failed"
  [[ $failed -eq 0 ]] && exit 0 || exit 1
}

# --- the replay server --------------------------------------------------------
bash "$ROOT/tests/testing/make_certs.sh" "$TMP/certs"
mkdir -p "$TMP/replay" "$TMP/out"
cp "$FIX/vast/vastai-search-offers.excerpt.json" "$TMP/replay/vast.json"
cp "$FIX/skypilot-catalog/catalogs/v8/lambda/vms.csv" "$TMP/replay/lambda.csv"
echo '{}' >"$TMP/replay/modes.json"
"$PY" "$ROOT/tests/refresh/replay_server.py" "$TMP/replay" "$TMP/certs/server.pem" \
  "$TMP/certs/server.key" >"$TMP/replay.out" 2>"$TMP/replay.log" &
REPLAY_PID=$!
for _ in $(seq 1 50); do grep -q "port=" "$TMP/replay.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -nE 's/.*port=([0-9]+).*/\1/p' "$TMP/replay.out")
[[ -n "$PORT" ]] || { fail "replay server start" "$(cat "$TMP/replay.log")"; finish; }
BASE=https://127.0.0.1:$PORT
if curl -sf --max-time 5 "$BASE/vast.json" >/dev/null 2>&1; then
  fail "the replay server's certificate must not verify without the test CA"
else
  pass "replay server on $BASE (self-signed CA: unverified clients refused)"
fi

mode() { echo "{\"$1\": \"$2\"}" >"$TMP/replay/modes.json"; }

# --- the stack with the catalog reading the refresher's file ---------------------
echo "refresh-test-token" >"$TMP/token"
STACK_CATALOG_ARGS=(--refreshed_offers="$TMP/out/refreshed.textproto" --admin_token_file="$TMP/token")
if ! stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs"; then fail "stack start"; finish; fi
pass "stack up: gateway=$GATEWAY_ADDR catalog=$CATALOG_ADDR"

cat >"$TMP/sources.textproto" <<CONF
sources {
  name: "vast-replay" format: "vast" urls: "$BASE/vast.json"
  interval_seconds: 2 stale_after_seconds: 12 timeout_seconds: 2 retries: 1
}
sources {
  name: "lambda-replay" format: "skypilot" provider: "lambda" urls: "$BASE/lambda.csv"
  interval_seconds: 2 stale_after_seconds: 12 timeout_seconds: 2 retries: 1
}
CONF
"$REFRESHER" --config="$TMP/sources.textproto" --data_dir="$ROOT/data" \
  --output="$TMP/out/refreshed.textproto" --catalog_address="$CATALOG_ADDR" \
  --admin_token_file="$TMP/token" --ca_file="$TMP/certs/ca.pem" --metrics_port=0 \
  >"$TMP/refresher.out" 2>"$TMP/refresher.log" &
REFRESHER_PID=$!
for _ in $(seq 1 100); do grep -q "metrics=" "$TMP/refresher.out" 2>/dev/null && break; sleep 0.1; done
REFRESHER_METRICS=$(sed -nE 's/.*metrics=([^ ]+).*/\1/p' "$TMP/refresher.out")
[[ -n "$REFRESHER_METRICS" ]] || { fail "refresher start" "$(cat "$TMP/refresher.log")"; finish; }
STATES=$TMP/out/refreshed.textproto.sources.json

state() {  # source field -> value from the states JSON
  "$PY" -c 'import json,sys
s=[x for x in json.load(open(sys.argv[1]))["sources"] if x["name"]==sys.argv[2]][0]
print(s[sys.argv[3]])' "$STATES" "$1" "$2" 2>/dev/null
}
wait_result() {  # source result-substring after-unix -> 0 when an attempt after it has it
  local i
  for i in $(seq 1 200); do  # 20 s
    if [[ "$(state "$1" last_attempt_unix)" -gt "$3" ]] && [[ "$(state "$1" result)" == *"$2"* ]]; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}
if wait_result vast-replay ok 0 && wait_result lambda-replay ok 0; then
  pass "first refresh: vast-replay $(state vast-replay offers) offers, lambda-replay $(state lambda-replay offers) offers, published"
else
  fail "first refresh" "$(cat "$STATES" 2>/dev/null)"; finish
fi

# --- a good refresh reaches the gateway's answers -----------------------------
answer() {  # the top vast recommendation: "id price source observed"
  "$CLI" recommend --gateway="$GATEWAY_ADDR" --model=llama-2-7b --task=lora --gpu=L4 \
    --train_tokens=10M --seq_len=1024 --providers=vast --max_results=1 --json 2>"$TMP/cli.err" |
    "$PY" -c 'import json,sys
r=json.load(sys.stdin)["recommendations"][0]
o=r["offer"]
print(o["id"], json.dumps(r["cost"], sort_keys=True).replace(" ", ""), o.get("source", "").replace(" ", "_"), o.get("asOf", ""))'
}
GOOD=""
for _ in $(seq 1 100); do
  GOOD=$(answer 2>/dev/null || true)
  [[ "$GOOD" == *refresh_vast-replay* ]] && break
  sleep 0.1
done
if [[ "$GOOD" == *refresh_vast-replay* ]]; then
  pass "the gateway answers from the refreshed Vast copy: $GOOD"
else
  fail "refreshed offers in the gateway's answer" "$GOOD $(cat "$TMP/cli.err")"
fi
GOOD_PRICE=$(cut -d' ' -f1,2 <<<"$GOOD")

# --- every fault keeps the last good copy, its age grows, the reason shows ------
fault() {  # path source mode expected-result reason-substring
  local before age0 age1 reason now t1 still kept
  now=$(date +%s)
  mode "$1" "$3"
  if ! wait_result "$2" "$4" "$now"; then
    fail "$3: $2 did not report '$4'" "$(cat "$STATES")"; mode "$1" ok; return
  fi
  before=$(state "$2" last_success_unix)
  age0=$(( $(date +%s) - before ))
  t1=$(date +%s)
  # One more failed attempt: the copy serving is still the one before it.
  wait_result "$2" "$4" "$t1" || fail "$3: a second attempt did not report '$4'"
  reason=$(state "$2" reason)
  age1=$(( $(date +%s) - $(state "$2" last_success_unix) ))
  kept=no
  [[ "$(state "$2" last_success_unix)" == "$before" ]] && kept=yes
  still=$(cut -d' ' -f1,2 <<<"$(answer 2>/dev/null || true)")
  if [[ $kept == yes && "$reason" == *"$5"* && "$age1" -gt "$age0" &&
        ( "$2" != vast-replay || "$still" == "$GOOD_PRICE" ) ]]; then
    pass "$3: last good copy kept (age $age0 -> $age1 s), reason: $reason"
  else
    fail "$3: kept=$kept age $age0 -> $age1 answer '$still' vs '$GOOD_PRICE'" "reason: $reason"
  fi
  mode "$1" ok
  wait_result "$2" ok "$(date +%s)" || fail "$2 back to ok after $3" "$(cat "$STATES")"
}
fault /vast.json vast-replay timeout "fetch failed" "timed out"
fault /vast.json vast-replay 500 "fetch failed" "HTTP 500"
fault /vast.json vast-replay truncated "fetch failed" "cut short"
fault /lambda.csv lambda-replay schema "import failed" "InstanceType"
fault /vast.json vast-replay jump "held back" "against the previous good copy"
fault /vast.json vast-replay empty "held back" "no offer"

if out=$(curl -sf --max-time 3 "http://$REFRESHER_METRICS/metrics" | promtool check metrics 2>&1); then
  pass "promtool check metrics: refresher"
else
  fail "promtool check metrics: refresher" "$out"
fi

# --- a stale source fires its alert in a real Prometheus -------------------------
PROM_DIR=$TMP/prom
mkdir -p "$PROM_DIR"
sed -E 's/^([[:space:]]+for:[[:space:]]*)[0-9]+[smhd]/\12s/' \
  "$ROOT/deploy/prometheus/rules.yml" >"$PROM_DIR/rules.yml"
cat >"$PROM_DIR/prometheus.yml" <<PROMCONF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: [rules.yml]
scrape_configs:
  - job_name: gpuadvisor-refresher
    static_configs: [{targets: ["$REFRESHER_METRICS"]}]
PROMCONF
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
PROM=""
for _ in 1 2 3; do
  p=$(free_port)
  prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$p" >"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do
    curl -sf --max-time 1 "http://127.0.0.1:$p/-/ready" >/dev/null 2>&1 && { PROM="http://127.0.0.1:$p"; break 2; }
    kill -0 "$PROM_PID" 2>/dev/null || break
    sleep 0.1
  done
  stop_pid "$PROM_PID"; PROM_PID=""
done
[[ -n "$PROM" ]] || { fail "prometheus start" "$(tail -5 "$TMP/prometheus.log")"; finish; }
alerts() { curl -sf --max-time 2 "$PROM/api/v1/alerts"; }
sleep 3
if alerts | grep -q GpuAdvisorSourceStale; then
  fail "GpuAdvisorSourceStale while every source is fresh" "$(alerts)"
else
  pass "no GpuAdvisorSourceStale while every source is fresh"
fi
mode /vast.json 500
fired=""
for _ in $(seq 1 300); do  # 30 s: the 12 s budget, then for: 2s
  if alerts | "$PY" -c 'import json,sys
a=json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(x["labels"].get("alertname")=="GpuAdvisorSourceStale" and x["labels"].get("source")=="vast-replay" and x["state"]=="firing" for x in a) else 1)'; then
    fired=yes; break
  fi
  sleep 0.1
done
if [[ -n "$fired" ]]; then
  pass "GpuAdvisorSourceStale fires for vast-replay (age $(state vast-replay age_seconds) s > 12 s)"
else
  fail "GpuAdvisorSourceStale did not fire" "$(alerts)"
fi
finish
