#!/usr/bin/env bash
# The gateway's HTTP/JSON API against the four real services on ephemeral
# ports: every route, errors as JSON with the gRPC code and field, the body
# bound, the OpenAPI document (validated with swagger-parser and checked
# field by field against the proto), and the exports (parsed as YAML and
# checked against the orchestrators' schemas, export_check.py).
#   tests/http/http_test.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
PY=/usr/bin/python3
# shellcheck source=deploy/local/stack.sh
source "$ROOT/deploy/local/stack.sh"
TMP=$(mktemp -d /tmp/gpu-advisor-http.XXXXXX)
trap 'stack_stop; rm -rf "$TMP"' EXIT
stack_start "$BUILD_DIR" "$ROOT/data" ephemeral "$TMP/logs" || exit 1
[[ -n "$GATEWAY_HTTP" ]] || { echo "gateway announced no http= port"; exit 1; }
BASE=http://$GATEWAY_HTTP
echo "gateway HTTP at $BASE"

passed=0 failed=0
check() {  # name, then a command that must succeed
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "PASS  $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"
  fi
}
json() {  # file, python expression over `d` that must be true
  $PY -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
}
call() {  # out-file method path [body] -> prints the HTTP status
  local out=$1 method=$2 path=$3 body=${4:-}
  if [[ -n "$body" ]]; then
    curl -s -o "$out" -w '%{http_code}' -X "$method" -H 'Content-Type: application/json' \
      --data-binary "$body" "$BASE$path"
  else
    curl -s -o "$out" -w '%{http_code}' -X "$method" "$BASE$path"
  fi
}

LORA='{"workload": {"task": "TASK_LORA", "model": {"preset": "llama-3.1-8b"}, "train_tokens": 5e7, "sequence_length": 2048}, "max_results": 6}'

code=$(call "$TMP/rec.json" POST /v1/recommend "$LORA")
check "POST /v1/recommend: 200" test "$code" = 200
check "recommend: ranked RecommendResponse, proto names, int64 as strings" json "$TMP/rec.json" \
  'len(d["recommendations"]) > 1 and [r["rank"] for r in d["recommendations"]] == list(range(1, len(d["recommendations"]) + 1)) and isinstance(d["recommendations"][0]["memory"]["weights_bytes"], str) and d["catalog_version"] != ""'
check "recommend: cheapest first within the tie band (the default objective)" json "$TMP/rec.json" \
  'd["tie_band_fraction"] > 0 and all(a["cost"]["total_usd"] <= b["cost"]["total_usd"] * (1 + d["tie_band_fraction"]) * (1 + 1e-12) for i, a in enumerate(d["recommendations"]) for b in d["recommendations"][i + 1:])'
check "recommend: intervals, the head and the tie band in the JSON" json "$TMP/rec.json" \
  'd["head"]["cheapest"]["offer_id"] != "" and d["head"]["why_first"] != "" and all(r["estimated_hours_interval"]["p10"] < r["estimated_hours_interval"]["p90"] and r["total_usd_interval"]["p10"] < r["total_usd_interval"]["p90"] and r["tokens_per_second_interval"]["p90"] > 0 for r in d["recommendations"])'
code=$(call "$TMP/camel.json" POST /v1/recommend '{"workload": {"task": "TASK_LORA", "model": {"preset": "llama-3.1-8b"}, "trainTokens": 5e7, "sequenceLength": 2048}, "maxResults": 2}')
check "recommend: lowerCamelCase input accepted" json "$TMP/camel.json" 'len(d["recommendations"]) == 2'

# Choice controls (docs/gateway.md), in the short enum forms.
SERVE='{"workload": {"task": "inference", "model": {"preset": "llama-3.1-8b"}, "concurrent_sequences": 16}, "max_results": 10'
code=$(call "$TMP/serve.json" POST /v1/recommend "$SERVE}")
check "endpoint: datacenter hosts by default, stated, community hosts counted as filtered" json "$TMP/serve.json" \
  'd["recommendations"] and all(r["offer"]["host_tier"] != "HOST_TIER_COMMUNITY" for r in d["recommendations"]) and any(a["field"] == "constraints.host_tier" and a["value"] == "datacenter" for a in d["assumptions"]) and any(e["reason"] == "EXCLUSION_REASON_FILTERED" and "community" in e["detail"] for e in d["excluded"])'
code=$(call "$TMP/any.json" POST /v1/recommend "$SERVE"', "constraints": {"host_tier": "any", "min_host_reliability": 0.98}}')
check "host_tier any: marketplace hosts ranked too; min_host_reliability keeps offers without a figure, noted" json "$TMP/any.json" \
  'any(r["offer"]["host_tier"] == "HOST_TIER_COMMUNITY" for r in d["recommendations"]) and all(any("host reliability unknown" in n for n in r["notes"]) for r in d["recommendations"] if "host_reliability" not in r["offer"])'
code=$(call "$TMP/rel.json" POST /v1/recommend "$SERVE"', "constraints": {"min_host_reliability": 1.5}}')
check "min_host_reliability 1.5: 400 naming the field" bash -c '[[ $1 == 400 ]] && grep -q "\"field\":\"constraints.min_host_reliability\"" "$2"' _ "$code" "$TMP/rel.json"
LAMBDA='{"workload": {"task": "lora", "model": {"preset": "llama-3.1-8b"}, "train_tokens": 5e7, "sequence_length": 2048}, "max_results": 10, "constraints": {"providers": ["lambda"]'
code=$(call "$TMP/grouped.json" POST /v1/recommend "$LAMBDA}}")
code=$(call "$TMP/regions.json" POST /v1/recommend "$LAMBDA"', "group_regions": false}}')
check "one row per instance type (also_in_regions); group_regions false: a row per region" $PY -c '
import json, sys
g, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
key = lambda r: (r["offer"]["instance_type"], r["purchase_option"], r["offer"]["nodes"])
grouped = [r for r in g["recommendations"] if r["also_in_regions"]]
sys.exit(0 if grouped and len({key(r) for r in g["recommendations"]}) == len(g["recommendations"])
         and not any(r["also_in_regions"] for r in a["recommendations"])
         and len({key(r) for r in a["recommendations"]}) < len(a["recommendations"]) else 1)' "$TMP/grouped.json" "$TMP/regions.json"

code=$(call "$TMP/err.json" POST /v1/recommend '{"workload": {"task": "TASK_LORA", "model": {"params": -1}, "train_tokens": 5e7, "sequence_length": 2048}}')
check "bad workload: 400 INVALID_ARGUMENT naming the field" bash -c '[[ $1 == 400 ]]' _ "$code"
check "bad workload: google.rpc.Status with the code, message and field violation" json "$TMP/err.json" \
  'd["code"] == 3 and d["details"][0]["field_violations"][0]["field"].startswith("workload.model") and d["message"].startswith(d["details"][0]["field_violations"][0]["field"]) and d["details"][-1]["reason"] == "INVALID_ARGUMENT"'
code=$(call "$TMP/err2.json" POST /v1/recommend '{"workload": {"task": "TASK_NAPPING"}}')
check "bad enum: 400 naming workload.task" bash -c '[[ $1 == 400 ]] && grep -q "\"field\":\"workload.task\"" "$2"' _ "$code" "$TMP/err2.json"
code=$(call "$TMP/err3.json" POST /v1/recommend '{"workload": {"task": "TASK_LORA", "model": {"preset": "no-such-model"}, "train_tokens": 1e6, "sequence_length": 2048}}')
check "unknown preset: 404 NOT_FOUND" bash -c '[[ $1 == 404 ]] && grep -q "NOT_FOUND" "$2"' _ "$code" "$TMP/err3.json"
head -c 2000000 /dev/zero | tr '\0' ' ' > "$TMP/big.json"
code=$(curl -s -o "$TMP/big.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$TMP/big.json" "$BASE/v1/recommend")
check "2 MB body: 413 as a JSON error" bash -c '[[ $1 == 413 ]] && grep -q RESOURCE_EXHAUSTED "$2"' _ "$code" "$TMP/big.out"
code=$(call "$TMP/nf.json" GET /v1/nothing)
check "unknown path: 404 JSON" bash -c '[[ $1 == 404 ]] && grep -q NOT_FOUND "$2"' _ "$code" "$TMP/nf.json"

code=$(call "$TMP/est.json" POST /v1/estimate '{"workload": {"task": "TASK_FULL_FINETUNE", "model": {"preset": "llama-3.1-8b"}, "train_tokens": 1e9, "sequence_length": 4096}, "configurations": [{"gpu_model": "H100-SXM", "gpus_per_node": 8, "nodes": 1}]}')
check "POST /v1/estimate: sized on the configuration" json "$TMP/est.json" \
  'len(d["estimates"]) == 1 and int(d["estimates"][0]["memory"]["total_bytes"]) > 0 and d["estimates"][0]["estimated_hours"] > 0'

# GET routes exist once the gateway passes them through (GatewayService ListOffers/ListGpus/ListModels).
call "$TMP/openapi.json" GET /v1/openapi.json >/dev/null
for route in offers gpus models; do
  if json "$TMP/openapi.json" "'/v1/$route' in d['paths']"; then
    case $route in
      offers)
        code=$(call "$TMP/offers.json" GET '/v1/offers?gpu_models=H100&providers=aws,lambda&page_size=3')
        check "GET /v1/offers: filters and a page" json "$TMP/offers.json" \
          'len(d["offers"]) == 3 and all(o["provider"] in ("aws", "lambda") and o["gpu_model"].startswith("H100") for o in d["offers"]) and d["next_page_token"] != ""'
        token=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_page_token"])' "$TMP/offers.json")
        call "$TMP/offers2.json" GET "/v1/offers?gpu_models=H100&providers=aws,lambda&page_size=3&page_token=$token" >/dev/null
        check "GET /v1/offers: the next page differs" $PY -c 'import json,sys; a=json.load(open(sys.argv[1]));b=json.load(open(sys.argv[2])); sys.exit(0 if b["offers"] and {o["id"] for o in a["offers"]}.isdisjoint(o["id"] for o in b["offers"]) else 1)' "$TMP/offers.json" "$TMP/offers2.json"
        code=$(call "$TMP/offers_err.json" GET '/v1/offers?page_size=ten')
        check "GET /v1/offers?page_size=ten: 400 naming page_size" bash -c '[[ $1 == 400 ]] && grep -q "\"field\":\"page_size\"" "$2"' _ "$code" "$TMP/offers_err.json"
        ;;
      gpus)
        call "$TMP/gpus.json" GET /v1/gpus >/dev/null
        check "GET /v1/gpus: datasheet specs" json "$TMP/gpus.json" 'any(g["name"] == "H100-SXM" and int(g["memory_bytes"]) == 85899345920 for g in d["gpus"])'
        ;;
      models)
        call "$TMP/models.json" GET /v1/models >/dev/null
        check "GET /v1/models: presets" json "$TMP/models.json" 'any(m["preset"] == "llama-3.1-70b" for m in d["models"])'
        call "$TMP/sources.json" GET /v1/sources >/dev/null
        check "GET /v1/sources: every price source with its age and budget" json "$TMP/sources.json" 'any(s["name"] == "C-AWS" and s["kind"] == "file" and s["offers"] > 0 and int(s["age_seconds"]) > 0 and int(s["stale_after_seconds"]) == 7776000 for s in d["sources"]) and any(s["name"] == "C-TPU" and s["stale"] for s in d["sources"])'
        ;;
    esac
  else
    echo "note: GatewayService has no List${route^} yet; /v1/$route not served"
  fi
done

code=$(call "$TMP/health.json" GET /v1/health)
check "GET /v1/health: 200 SERVING" bash -c '[[ $1 == 200 ]] && grep -q "\"SERVING\"" "$2"' _ "$code" "$TMP/health.json"
code=$(call "$TMP/index.html" GET /)
check "GET /: the comparison page" bash -c '[[ $1 == 200 ]] && grep -q "<title>GPU Advisor" "$2"' _ "$code" "$TMP/index.html"

# OpenAPI: valid OpenAPI 3 (swagger-parser), and every proto field present.
bash "$ROOT/tests/tools/ensure.sh" || exit 1
check "openapi.json is a valid OpenAPI 3 document" node "$ROOT/tests/http/validate_openapi.js" "$TMP/openapi.json"
protoc --proto_path="$ROOT/proto" --include_imports --descriptor_set_out="$TMP/contract.binpb" \
  gpuadvisor/gateway/v1/gateway.proto
check "openapi.json has every field of every route message, typed per the JSON mapping" \
  $PY "$ROOT/tests/http/check_openapi_proto.py" "$TMP/openapi.json" "$TMP/contract.binpb"

# Exports.
# Exports of clouds each orchestrator runs on (the cheapest LoRA answers are
# marketplaces and neoclouds since Azure's T4 spot price, flagged as likely
# stale, no longer ranks).
LORA_CLOUDS='{"workload": {"task": "TASK_LORA", "model": {"preset": "llama-3.1-8b"}, "train_tokens": 5e7, "sequence_length": 2048}, "constraints": {"providers": ["aws", "gcp", "azure"]}, "max_results": 6}'
call "$TMP/rec_clouds.json" POST /v1/recommend "$LORA_CLOUDS" >/dev/null
for format in skypilot dstack karpenter; do
  code=$(call "$TMP/export.$format.yaml" POST "/v1/recommend?format=$format" "$LORA_CLOUDS")
  check "?format=$format: 200 YAML" test "$code" = 200
  check "?format=$format: parses and follows the $format schema, offers in rank order" \
    $PY "$ROOT/tests/http/export_check.py" "$format" "$TMP/export.$format.yaml" "$TMP/rec_clouds.json"
done
code=$(call "$TMP/fmt.json" POST "/v1/recommend?format=terraform" "$LORA")
check "?format=terraform: 400 naming format" bash -c '[[ $1 == 400 ]] && grep -q "\"field\":\"format\"" "$2"' _ "$code" "$TMP/fmt.json"

echo "http_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
