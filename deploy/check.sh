#!/usr/bin/env bash
# Validates deploy/ offline, without a cluster or a docker engine:
#   - promtool: the three Prometheus configs, the rules, the rules' unit tests,
#     and every Grafana dashboard query (as throwaway recording rules);
#   - the k8s copy of the rules is identical to deploy/prometheus/rules.yml;
#   - check_manifests.py: YAML of every manifest and the compose file, every
#     kustomization entry exists, ports/probes/selectors/flags agree; compose:
#     two replicas of every service, TLS flags on each, followers point at
#     their writer, the certificate volume is mounted, scrape targets cover
#     every replica, and compose/gen-certs.sh is run (openssl) to check that
#     the certificates it writes name every host the services dial;
#   - `kubectl kustomize` renders the k8s directory (when kubectl is there);
#   - bash -n on the shell scripts.
# Usage: deploy/check.sh      (needs promtool, openssl and /usr/bin/python3 with
#                              yaml: deploy/install-deps.sh installs them)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPLOY=$ROOT/deploy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

# step <description> <command...>: runs the command, output shown only on failure.
step() {
  local what=$1; shift
  if "$@" >"$TMP/out" 2>&1; then
    echo "PASS  $what"; passed=$((passed + 1))
  else
    echo "FAIL  $what"; sed 's/^/      /' "$TMP/out"; failed=$((failed + 1))
  fi
}

# A config whose rule_files say "rules.yml" checked next to the real rules.
check_config_with_rules() {
  local dir=$TMP/cfg-$RANDOM
  mkdir -p "$dir"
  cp "$1" "$dir/prometheus.yml"
  cp "$DEPLOY/prometheus/rules.yml" "$dir/rules.yml"
  promtool check config "$dir/prometheus.yml"
}

step "promtool check config deploy/prometheus/prometheus.yml" \
  promtool check config "$DEPLOY/prometheus/prometheus.yml"
step "promtool check config deploy/compose/prometheus.yml" \
  check_config_with_rules "$DEPLOY/compose/prometheus.yml"
# Debian's promtool is built without Kubernetes service discovery, so it
# rejects kubernetes_sd_configs; swap it for a static target and check the rest
# (relabeling, rule_files) all the same.
without_k8s_sd() {
  /usr/bin/python3 - "$DEPLOY/k8s/prometheus.yml" "$TMP/k8s-prometheus.yml" <<'PY'
import sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
for job in cfg["scrape_configs"]:
    if job.pop("kubernetes_sd_configs", None) is not None:
        job["static_configs"] = [{"targets": ["pod:9460"]}]
yaml.safe_dump(cfg, open(sys.argv[2], "w"))
PY
  check_config_with_rules "$TMP/k8s-prometheus.yml"
}
step "promtool check config deploy/k8s/prometheus.yml (static target for kubernetes_sd)" \
  without_k8s_sd
step "promtool check rules deploy/prometheus/rules.yml" \
  promtool check rules "$DEPLOY/prometheus/rules.yml"
step "promtool test rules deploy/prometheus/rules_test.yml" \
  promtool test rules "$DEPLOY/prometheus/rules_test.yml"
step "deploy/k8s/prometheus-rules.yml is a copy of deploy/prometheus/rules.yml" \
  cmp "$DEPLOY/prometheus/rules.yml" "$DEPLOY/k8s/prometheus-rules.yml"

# check_manifests.py prints one line per check and exits with the failure count.
step "manifests, compose, Prometheus targets, dashboard (check_manifests.py)" \
  /usr/bin/python3 "$DEPLOY/check_manifests.py" "$ROOT" "$TMP"
step "promtool parses every Grafana dashboard query" \
  promtool check rules "$TMP/dashboard_rules.yml"

if command -v kubectl >/dev/null 2>&1; then
  step "kubectl kustomize deploy/k8s renders" kubectl kustomize "$DEPLOY/k8s"
else
  echo "SKIP  kubectl kustomize (kubectl not installed)"
fi

for s in "$DEPLOY/install-deps.sh" "$DEPLOY/check.sh" "$DEPLOY/compose/gen-certs.sh" \
         "$ROOT/clients/python/gen_stubs.sh" \
         "$ROOT/tests/clients/run_clients.sh"; do
  [[ -f $s ]] && step "bash -n ${s#"$ROOT"/}" bash -n "$s"
done

echo "deploy-check: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
