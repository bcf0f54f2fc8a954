# shellcheck shell=bash
# Starts and stops the four GPU Advisor services from a build tree. Sourced by
# deploy/local/run.sh and by the test scripts that need a live stack.
#
#   source deploy/local/stack.sh
#   stack_start BUILD_DIR DATA_DIR PORT_MODE LOG_DIR   # PORT_MODE: default | ephemeral
#   echo "$GATEWAY_ADDR $CATALOG_ADDR $SIZING_ADDR $PRICING_ADDR"
#   echo "$GATEWAY_METRICS ..."                         # host:port of each /metrics
#   echo "$GATEWAY_HTTP"                                # the gateway's HTTP/JSON API and page
#   stack_stop
#
# Each binary announces "<name> listening grpc=H:P metrics=H:M [http=H:P]" on stdout;
# with ephemeral ports that line is how we learn where it listens. Then
# grpc.health.v1 is polled (gpu-advisor health) until all four are SERVING.
# Optional: STACK_WAIT_SECONDS (default 30) for big catalogs; the arrays
# STACK_GATEWAY_ARGS and STACK_CATALOG_ARGS add flags to the gateway's and the
# catalog's command lines. STACK_TLS_DIR (a
# folder made by tests/testing/make_certs.sh: ca.pem, server.pem, server.key)
# turns TLS on: every server serves TLS, mTLS between them, and the health
# polls present the service certificate.

_stack_tls_args() {  # prints the TLS flags, one per line (none without STACK_TLS_DIR)
  [[ -n "${STACK_TLS_DIR:-}" ]] || return 0
  printf '%s\n' "--tls_cert=$STACK_TLS_DIR/server.pem" "--tls_key=$STACK_TLS_DIR/server.key" \
    "--tls_ca=$STACK_TLS_DIR/ca.pem"
}

STACK_PIDS=()

_stack_wait_announce() {  # name logfile -> sets ANNOUNCED_GRPC ANNOUNCED_METRICS ANNOUNCED_HTTP
  local name=$1 log=$2 i line
  for i in $(seq 1 $((${STACK_WAIT_SECONDS:-30} * 10))); do
    line=$(grep -m1 "^$name listening " "$log" 2>/dev/null || true)
    if [[ -n "$line" ]]; then
      ANNOUNCED_GRPC=$(sed -E 's/.* grpc=([^ ]+).*/\1/' <<<"$line")
      ANNOUNCED_METRICS=$(sed -E 's/.* metrics=([^ ]+).*/\1/' <<<"$line")
      ANNOUNCED_HTTP=$(sed -nE 's/.* http=([^ ]+).*/\1/p' <<<"$line")
      return 0
    fi
    if ! kill -0 "${STACK_PIDS[-1]}" 2>/dev/null; then
      echo "$name exited during start-up:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$name did not start within ${STACK_WAIT_SECONDS:-30} s; log:" >&2
  cat "$log" >&2
  return 1
}

_stack_launch() {  # name binary logdir args...
  local name=$1 binary=$2 logdir=$3
  shift 3
  "$binary" "$@" >"$logdir/$name.log" 2>&1 &
  STACK_PIDS+=($!)
  _stack_wait_announce "$name" "$logdir/$name.log"
}

# Waits until all four report SERVING (the gateway once it holds a catalog replica).
_stack_wait_serving() {  # build_dir
  local cli=$1/services/cli/gpu-advisor i addr ready tls
  mapfile -t tls < <(_stack_tls_args)
  for i in $(seq 1 $((${STACK_WAIT_SECONDS:-30} * 10))); do
    ready=1
    for addr in "$CATALOG_ADDR" "$SIZING_ADDR" "$PRICING_ADDR" "$GATEWAY_ADDR"; do
      "$cli" health --target="$addr" --timeout_seconds=1 ${tls[@]+"${tls[@]}"} >/dev/null 2>&1 || { ready=0; break; }
    done
    [[ $ready == 1 ]] && return 0
    sleep 0.1
  done
  echo "services did not report SERVING within ${STACK_WAIT_SECONDS:-30} s" >&2
  return 1
}

stack_start() {
  local build=$1 data=$2 mode=$3 logdir=$4
  local bin=$build/services
  local p_gw=50050 p_cat=50051 p_siz=50052 p_pri=50053 m_gw=9460 m_cat=9461 m_siz=9462 m_pri=9463
  local h_gw=8080 tls
  mapfile -t tls < <(_stack_tls_args)
  if [[ "$mode" == ephemeral ]]; then
    p_gw=0 p_cat=0 p_siz=0 p_pri=0 m_gw=0 m_cat=0 m_siz=0 m_pri=0 h_gw=0
  fi
  mkdir -p "$logdir"
  _stack_launch catalog "$bin/catalog/catalog_server" "$logdir" \
    --port=$p_cat --metrics_port=$m_cat --data_dir="$data" ${tls[@]+"${tls[@]}"} \
    ${STACK_CATALOG_ARGS[@]+"${STACK_CATALOG_ARGS[@]}"} || return 1
  CATALOG_ADDR=$ANNOUNCED_GRPC CATALOG_METRICS=$ANNOUNCED_METRICS
  _stack_launch sizing "$bin/sizing/sizing_server" "$logdir" \
    --port=$p_siz --metrics_port=$m_siz --data_dir="$data" --catalog_address="$CATALOG_ADDR" \
    ${tls[@]+"${tls[@]}"} || return 1
  SIZING_ADDR=$ANNOUNCED_GRPC SIZING_METRICS=$ANNOUNCED_METRICS
  _stack_launch pricing "$bin/pricing/pricing_server" "$logdir" \
    --port=$p_pri --metrics_port=$m_pri --data_dir="$data" --catalog_address="$CATALOG_ADDR" \
    ${tls[@]+"${tls[@]}"} || return 1
  PRICING_ADDR=$ANNOUNCED_GRPC PRICING_METRICS=$ANNOUNCED_METRICS
  _stack_launch gateway "$bin/gateway/gateway_server" "$logdir" \
    --port=$p_gw --metrics_port=$m_gw --http_port=$h_gw --catalog_address="$CATALOG_ADDR" \
    --sizing_address="$SIZING_ADDR" --pricing_address="$PRICING_ADDR" \
    --catalog_cache_file="$logdir/catalog.cache" --data_dir="$data" ${tls[@]+"${tls[@]}"} \
    ${STACK_GATEWAY_ARGS[@]+"${STACK_GATEWAY_ARGS[@]}"} || return 1
  GATEWAY_ADDR=$ANNOUNCED_GRPC GATEWAY_METRICS=$ANNOUNCED_METRICS GATEWAY_HTTP=$ANNOUNCED_HTTP
  export CATALOG_ADDR SIZING_ADDR PRICING_ADDR GATEWAY_ADDR GATEWAY_HTTP
  export CATALOG_METRICS SIZING_METRICS PRICING_METRICS GATEWAY_METRICS
  _stack_wait_serving "$build"
}

stack_stop() {
  local pid i
  for pid in "${STACK_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${STACK_PIDS[@]}"; do
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  STACK_PIDS=()
}
