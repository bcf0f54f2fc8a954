#!/usr/bin/python3
"""Offline consistency checks for deploy/ (run by deploy/check.sh).

Parses every Kubernetes manifest and the compose file, and checks what a
typo would silently break at deploy time: kustomization entries that do not
exist, probes and Services pointing at ports the containers do not have, HPAs
whose target has no CPU request, pods that would not pass the "restricted"
Pod Security level, dashboard queries that do not parse or use a metric the
services do not export. For compose (which cannot be started here): two
replicas of every service, TLS flags on each pointing into the certificate
volume, single writers and followers, backend addresses and their
certificates' SANs (it runs compose/gen-certs.sh with openssl into <tmp dir>),
Prometheus targets for every replica.

Usage: check_manifests.py <repo root> <tmp dir> [-v]
Prints the failed checks (every check with -v) and a count; the exit code is
the number of failures (capped at 100). Writes dashboard_rules.yml into
<tmp dir> for promtool.
"""
import json
import os
import re
import subprocess
import sys

import yaml

ROOT, TMP = sys.argv[1], sys.argv[2]
VERBOSE = "-v" in sys.argv[3:]
DEPLOY = os.path.join(ROOT, "deploy")
K8S = os.path.join(DEPLOY, "k8s")
failures = 0
checks = 0

# Every metric the services export (STYLE.md 2.9 and the deploy brief); the
# rules and the dashboard may use nothing else (plus Prometheus' own `up`).
KNOWN_METRICS = {
    "up",
    "grpc_server_started_total", "grpc_server_handled_total",
    "grpc_server_handling_seconds_bucket", "grpc_server_handling_seconds_sum",
    "grpc_server_handling_seconds_count",
    "grpc_client_handled_total", "grpc_client_handling_seconds_bucket",
    "grpc_client_handling_seconds_sum", "grpc_client_handling_seconds_count",
    "gpuadvisor_data_loads_total", "gpuadvisor_data_last_load_timestamp_seconds",
    "gpuadvisor_catalog_offers", "gpuadvisor_gateway_recommendations_total",
    "gpuadvisor_gateway_catalog_age_seconds", "gpuadvisor_gateway_local_quotes_total",
    "gpuadvisor_gateway_price_book_copy_age_seconds",
    "gpuadvisor_pricing_prices_as_of_timestamp_seconds",
    "gpuadvisor_catalog_watchers", "gpuadvisor_catalog_watchers_dropped_total",
    "gpuadvisor_catalog_watchers_refused_total",
    "gpuadvisor_pricing_watchers", "gpuadvisor_pricing_watchers_dropped_total",
    "gpuadvisor_pricing_watchers_refused_total",
    "gpuadvisor_follower_writer_age_seconds",
    # every service: common/metrics/process_metrics.h
    "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
    "process_open_fds", "process_max_fds", "process_start_time_seconds", "gpuadvisor_build_info",
    # the refresher: services/refresher/source_metrics.h
    "gpuadvisor_refresh_source_age_seconds", "gpuadvisor_refresh_source_stale_after_seconds",
    # the gateway's HTTP server (services/gateway/http), TLS (common/grpc/tls_check.h) and
    # failed writes (common/metrics/write_failures.h)
    "gpuadvisor_http_connections", "gpuadvisor_http_connections_refused_total",
    "gpuadvisor_http_connections_closed_total", "gpuadvisor_http_requests_total",
    "gpuadvisor_tls_certificate_expiry_seconds", "gpuadvisor_write_failures_total",
}
SERVICES = {"gateway": (50050, 9460), "catalog": (50051, 9461),
            "sizing": (50052, 9462), "pricing": (50053, 9463)}
HEALTH_PORTS = {"gateway": 50060, "catalog": 50061, "sizing": 50062, "pricing": 50063}
BINARIES = {"catalog_server", "sizing_server", "pricing_server", "gateway_server", "gpu-advisor",
            "refresher"}
REFRESHER_METRICS_PORT = 9464


def check(ok, what):
    global failures, checks
    checks += 1
    if VERBOSE or not ok:
        print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures += 1


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def metric_names(expr):
    """Metric-looking identifiers in a PromQL expression (ours or `up`)."""
    expr = re.sub(r'"[^"]*"', '""', expr)           # drop label values
    expr = re.sub(r"\{[^}]*\}", "", expr)            # drop matchers
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"\b[a-z_]+:[a-z0-9_:]+", "", expr)  # recording rule names
    names = set(re.findall(r"\b(?:grpc_[a-z_]+|gpuadvisor_[a-z_]+|up)\b", expr))
    return names


# ---- kustomization: every listed file exists and parses ----
kust = load_all(os.path.join(K8S, "kustomization.yaml"))[0]
listed = list(kust.get("resources", []))
for gen in kust.get("configMapGenerator", []) + kust.get("secretGenerator", []):
    listed += [f.split("=", 1)[-1] for f in gen.get("files", [])]
docs = []
for name in listed:
    path = os.path.join(K8S, name)
    exists = os.path.isfile(path)
    check(exists, f"kustomization lists {name}: exists")
    if exists and name.endswith((".yaml", ".yml")):
        try:
            d = load_all(path)
            if name in kust.get("resources", []):
                docs += d
            check(True, f"{name}: YAML parses ({len(d)} documents)")
        except yaml.YAMLError as e:
            check(False, f"{name}: YAML parses: {e}")
unlisted = sorted(f for f in os.listdir(K8S) if f.endswith((".yaml", ".yml"))
                  and f not in listed and f != "kustomization.yaml")
check(not unlisted, f"every manifest in deploy/k8s is listed in kustomization.yaml {unlisted or ''}")

by_kind = {}
for d in docs:
    check("apiVersion" in d and "kind" in d and "name" in d.get("metadata", {}),
          f"{d.get('kind')}/{d.get('metadata', {}).get('name')}: has apiVersion, kind, metadata.name")
    by_kind.setdefault(d.get("kind"), {})[d["metadata"]["name"]] = d

# One workload per service: a Deployment for the stateless ones, a StatefulSet
# for catalog and pricing (single writer: pod 0 writes, the others follow it).
deployments = dict(by_kind.get("Deployment", {}))
statefulsets = by_kind.get("StatefulSet", {})
deployments.update(statefulsets)
check(set(deployments) == set(SERVICES) and len(deployments) == len(by_kind.get("Deployment", {})) + len(statefulsets),
      f"one workload per service: {sorted(deployments)}")
check(set(statefulsets) == {"catalog", "pricing"}, f"catalog and pricing are StatefulSets: {sorted(statefulsets)}")
for name, sts in statefulsets.items():
    port = SERVICES[name][0]
    check(sts["spec"].get("serviceName") == f"{name}-headless", f"StatefulSet/{name}: serviceName {name}-headless")
    args = sts["spec"]["template"]["spec"]["containers"][0].get("args", [])
    want = f"--writer_address={name}-0.{name}-headless.{kust['namespace']}.svc.cluster.local:{port}"
    check(want in args and f"--writer_host={name}-0" in args,
          f"StatefulSet/{name}: {name}-0 is the writer the others follow ({want})")
    if name == "pricing":
        mounts = {m["name"]: m["mountPath"] for m in sts["spec"]["template"]["spec"]["containers"][0].get("volumeMounts", [])}
        claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}
        updates = [a for a in args if a.startswith("--price_updates_file=")]
        check(bool(updates) and "state" in claims and updates[0].split("=", 1)[1].startswith(mounts.get("state", "?") + "/"),
              "StatefulSet/pricing: --price_updates_file on its persistent volume")
for name, hpa in by_kind.get("HorizontalPodAutoscaler", {}).items():
    check(hpa["spec"].get("minReplicas", 1) >= 2, f"HorizontalPodAutoscaler/{name}: at least two replicas")
for name, dep in deployments.items():
    spec = dep["spec"]
    pod = spec["template"]
    labels = pod["metadata"].get("labels", {})
    check(all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()),
          f"Deployment/{name}: selector matches the pod labels")
    psc = pod["spec"].get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
          f"Deployment/{name}: pod runAsNonRoot and seccomp RuntimeDefault")
    vols = {v["name"] for v in pod["spec"].get("volumes", [])}
    vols |= {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
    for c in pod["spec"]["containers"]:
        if c.get("args", [None])[0] == "refresher":
            continue  # the catalog's refresher sidecar: checked below
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        grpc_port, metrics_port = SERVICES[name]
        check(ports.get("grpc") == grpc_port and ports.get("metrics") == metrics_port,
              f"Deployment/{name}: ports grpc={grpc_port} metrics={metrics_port}")
        health_port = HEALTH_PORTS[name]
        check(ports.get("health") == health_port, f"Deployment/{name}: port health={health_port}")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            p = c.get(probe, {})
            check(p.get("grpc", {}).get("port") == health_port,
                  f"Deployment/{name}: {probe} is a native grpc probe on the health port {health_port}")
        args = c.get("args", [])
        check(f"--health_port={health_port}" in args, f"Deployment/{name}: --health_port={health_port}")
        for flag in ("--tls_cert=", "--tls_key=", "--tls_ca="):
            check(any(a.startswith(flag) for a in args), f"Deployment/{name}: TLS on ({flag}...)")
        if name == "gateway":
            check(not any(a.startswith("--http_plaintext") for a in args) and "--http_port=8080" in args,
                  "Deployment/gateway: the HTTP port serves HTTPS with the TLS secret (no --http_plaintext)")
        check(any(a.startswith("--drain_seconds=") for a in args), f"Deployment/{name}: drains before stopping")
        check(bool(args) and args[0] == f"{name}_server", f"Deployment/{name}: runs {name}_server")
        check(f"--port={grpc_port}" in args and f"--metrics_port={metrics_port}" in args
              and "--host=0.0.0.0" in args, f"Deployment/{name}: --host/--port/--metrics_port flags")
        ann = pod["metadata"].get("annotations", {})
        check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == str(metrics_port),
              f"Deployment/{name}: prometheus.io annotations point at the metrics port")
        sc = c.get("securityContext", {})
        check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False
              and sc.get("capabilities", {}).get("drop") == ["ALL"],
              f"Deployment/{name}: read-only root fs, no privilege escalation, no capabilities")
        check("cpu" in c.get("resources", {}).get("requests", {}),
              f"Deployment/{name}: has a CPU request (the HPA needs it)")
        check(all(m["name"] in vols for m in c.get("volumeMounts", [])),
              f"Deployment/{name}: every volumeMount has a volume")
        if name == "gateway":
            for backend in ("catalog", "sizing", "pricing"):
                want = (f"--{backend}_address=dns:///{backend}-headless.{kust['namespace']}"
                        f".svc.cluster.local:{SERVICES[backend][0]}")
                check(want in args, f"Deployment/gateway: {want}")
    for v in pod["spec"].get("volumes", []):
        if "secret" in v:
            check(v["secret"]["secretName"] in by_kind.get("Secret", {}),
                  f"Deployment/{name}: secret {v['secret']['secretName']} is in the kustomization")



def arg(args, name):
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return values[0] if values else None


# ---- the refresher: a sidecar of the catalog pods, feeding the writer ----
cat_pod = statefulsets.get("catalog", {}).get("spec", {}).get("template", {}).get("spec", {})
containers = {c["name"]: c for c in cat_pod.get("containers", [])}
ref = containers.get("refresher", {})
cat = containers.get("catalog", {})
ref_args, cat_args = ref.get("args", []), cat.get("args", [])
check(ref_args[:1] == ["refresher"], "StatefulSet/catalog: a refresher sidecar runs `refresher`")
check(arg(ref_args, "writer_host") == arg(cat_args, "writer_host") == "catalog-0"
      and arg(ref_args, "catalog_address") == arg(cat_args, "writer_address"),
      "StatefulSet/catalog: the refresher refreshes only on the writer and reloads the writer")
out = arg(ref_args, "output") or "?"
ref_mounts = {m["mountPath"]: m["name"] for m in ref.get("volumeMounts", [])}
cat_mounts = {m["mountPath"]: m["name"] for m in cat.get("volumeMounts", [])}
out_dir = os.path.dirname(out)
pod_vols = {v["name"]: v for v in cat_pod.get("volumes", [])}
check(arg(cat_args, "refreshed_offers") == out and out_dir in ref_mounts
      and ref_mounts.get(out_dir) == cat_mounts.get(out_dir)
      and "emptyDir" in pod_vols.get(ref_mounts.get(out_dir), {}),
      f"StatefulSet/catalog: the catalog reads the refresher's --output {out} on a shared emptyDir")
check(all(m in pod_vols for m in ref_mounts.values()), "StatefulSet/catalog: refresher mounts have volumes")
for f in ("--tls_cert=", "--tls_key=", "--tls_ca=", "--admin_token_file="):
    check(any(a.startswith(f) for a in ref_args), f"StatefulSet/catalog: refresher has {f}...")
ref_ports = {p["name"]: p["containerPort"] for p in ref.get("ports", [])}
check(ref_ports.get("metrics-refresh") == REFRESHER_METRICS_PORT
      and arg(ref_args, "metrics_port") == str(REFRESHER_METRICS_PORT) and "--host=0.0.0.0" in ref_args,
      f"StatefulSet/catalog: refresher metrics on port metrics-refresh={REFRESHER_METRICS_PORT}")
rsc = ref.get("securityContext", {})
check(rsc.get("readOnlyRootFilesystem") is True and rsc.get("allowPrivilegeEscalation") is False
      and "cpu" in ref.get("resources", {}).get("requests", {}),
      "StatefulSet/catalog: refresher read-only, unprivileged, with a CPU request")
for v in cat_pod.get("volumes", []):
    if "secret" in v:
        check(v["secret"]["secretName"] in by_kind.get("Secret", {}),
              f"StatefulSet/catalog: secret {v['secret']['secretName']} is in the kustomization")
k8s_prom = load_all(os.path.join(K8S, "prometheus.yml"))[0]
keeps = [r.get("regex", "") for j in k8s_prom["scrape_configs"] for r in j.get("relabel_configs", [])
         if r.get("source_labels") == ["__meta_kubernetes_pod_container_port_name"] and r.get("action") == "keep"]
check(any(re.fullmatch(k, "metrics-refresh") and re.fullmatch(k, "metrics") for k in keeps),
      "k8s/prometheus.yml: scrapes the ports named metrics and metrics-refresh")

for name, svc in by_kind.get("Service", {}).items():
    sel = svc["spec"]["selector"]
    targets = [d for d in deployments.values()
               if all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items())]
    check(len(targets) == 1, f"Service/{name}: selects exactly one workload")
    if targets:
        names = {p["name"] for c in targets[0]["spec"]["template"]["spec"]["containers"] for p in c["ports"]}
        check(all(p["targetPort"] in names for p in svc["spec"]["ports"]),
              f"Service/{name}: targetPorts exist on the pods")
for backend in ("catalog", "sizing", "pricing"):
    svc = by_kind.get("Service", {}).get(f"{backend}-headless")
    check(svc is not None and svc["spec"].get("clusterIP") == "None",
          f"Service/{backend}-headless: exists and is headless (clusterIP: None)")
check(by_kind.get("Service", {}).get("gateway", {}).get("spec", {}).get("clusterIP") != "None",
      "Service/gateway: a normal (ClusterIP) Service")

for name, hpa in by_kind.get("HorizontalPodAutoscaler", {}).items():
    ref = hpa["spec"]["scaleTargetRef"]
    check(ref["kind"] == deployments.get(ref["name"], {}).get("kind"),
          f"HorizontalPodAutoscaler/{name}: targets an existing Deployment or StatefulSet")
check(set(by_kind.get("HorizontalPodAutoscaler", {})) == set(SERVICES), "one HPA per service")
for name, pdb in by_kind.get("PodDisruptionBudget", {}).items():
    sel = pdb["spec"]["selector"]["matchLabels"]
    check(any(all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items())
              for d in deployments.values()), f"PodDisruptionBudget/{name}: selects pods")

# ---- compose: TLS on, two replicas of every service, single writers ----
compose_path = os.path.join(DEPLOY, "compose", "docker-compose.yml")
compose = load_all(compose_path)[0]
check(True, "compose/docker-compose.yml: YAML parses")
svcs = compose["services"]
declared_volumes = set((compose.get("volumes") or {}).keys())


def flag(cmd, name):
    """The value of --name=VALUE in a command list (None when absent)."""
    values = [a.split("=", 1)[1] for a in cmd if a.startswith(f"--{name}=")]
    return values[0] if values else None


def mounts(svc):
    """{target: (source, read_only)} of a compose service's short-syntax volumes."""
    out = {}
    for vol in svc.get("volumes", []):
        parts = vol.split(":")
        out[parts[1]] = (parts[0], len(parts) > 2 and "ro" in parts[2].split(","))
    return out


def as_dict(value):
    """Compose allows lists for depends_on and networks: {name: {}} then."""
    return {v: {} for v in value} if isinstance(value, list) else (value or {})


def aliases_of(svc):
    return (as_dict(svc.get("networks")).get("default") or {}).get("aliases", [])


def dial_host(address):
    """The host name a gRPC target dials: dns:///catalog:50051 -> catalog."""
    return address.split("///", 1)[-1].rsplit(":", 1)[0]


for cname, svc in svcs.items():
    for src, _ in mounts(svc).values():
        if src.startswith("."):
            check(os.path.exists(os.path.join(DEPLOY, "compose", src)), f"compose/{cname}: mounts {src}: exists")
        else:
            check(src in declared_volumes, f"compose/{cname}: volume {src} is declared")

# The one-shot certificate service and the script it runs.
certs = svcs.get("certs", {})
with open(os.path.join(ROOT, "Dockerfile")) as f:
    dockerfile = f.read()
cert_script = os.path.join(DEPLOY, "compose", "gen-certs.sh")
check(certs.get("build", {}).get("target") == "certs" and re.search(r"^FROM \S+ AS certs$", dockerfile, re.M)
      and "COPY deploy/compose/gen-certs.sh" in dockerfile and os.path.isfile(cert_script),
      "compose/certs: built from the Dockerfile's certs stage, which ships deploy/compose/gen-certs.sh")
certs_dir_in = certs.get("command", ["/certs"])[-1]
certs_volume = mounts(certs).get(certs_dir_in, (None, True))
check(certs_volume[0] in declared_volumes and not certs_volume[1] and certs.get("restart") == "no",
      f"compose/certs: one-shot, writes {certs_dir_in} on the named volume {certs_volume[0]}")
# Run the script as the certs service would, and read what it made.
cert_dir = os.path.join(TMP, "compose-certs")
gen = subprocess.run(["bash", cert_script, cert_dir], capture_output=True, text=True)
check(gen.returncode == 0, "compose/certs: gen-certs.sh runs" + (f" ({gen.stderr.strip()[-300:]})" if gen.returncode else ""))


def read_or_empty(path):
    return open(path).read() if os.path.isfile(path) else ""


ca_before = read_or_empty(os.path.join(cert_dir, "ca.crt"))
gen_again = subprocess.run(["bash", cert_script, cert_dir], capture_output=True, text=True)
check(gen_again.returncode == 0 and ca_before and read_or_empty(os.path.join(cert_dir, "ca.crt")) == ca_before,
      "compose/certs: gen-certs.sh runs again over its own output and keeps the CA (restarts)")


def cert_info(path):
    """(SAN names, extended key usage text) of a PEM certificate, or None."""
    if not os.path.isfile(path):
        return None
    out = subprocess.run(["openssl", "x509", "-noout", "-in", path, "-ext", "subjectAltName,extendedKeyUsage"],
                         capture_output=True, text=True).stdout
    return set(re.findall(r"(?:DNS|IP Address):([^,\s]+)", out)), out


def verifies(path, purpose):
    return subprocess.run(["openssl", "verify", "-CAfile", os.path.join(cert_dir, "ca.crt"), "-purpose", purpose,
                           path], capture_output=True).returncode == 0


replicas_of = {}
for name, (grpc_port, metrics_port) in SERVICES.items():
    replicas = sorted(c for c, s in svcs.items() if (s.get("command") or [None])[0] == f"{name}_server")
    replicas_of[name] = replicas
    check(replicas == [f"{name}-0", f"{name}-1"], f"compose: two replicas of {name}, {name}-0 and {name}-1: {replicas}")
    for r in replicas:
        svc, cmd = svcs[r], svcs[r]["command"]
        check(f"--port={grpc_port}" in cmd and f"--metrics_port={metrics_port}" in cmd and "--host=0.0.0.0" in cmd,
              f"compose/{r}: runs {name}_server on {grpc_port}/{metrics_port}")
        check(svc.get("image") == "gpu-advisor:latest", f"compose/{r}: image gpu-advisor:latest")
        check(f"--health_port={HEALTH_PORTS[name]}" in cmd and flag(cmd, "drain_seconds") is not None,
              f"compose/{r}: --health_port={HEALTH_PORTS[name]} and --drain_seconds")
        hc = " ".join(svc.get("healthcheck", {}).get("test", []))
        check(f"--target=127.0.0.1:{HEALTH_PORTS[name]}" in hc, f"compose/{r}: healthcheck on the health port")
        check(svc.get("user") == "10001:10001" and svc.get("read_only") is True and svc.get("cap_drop") == ["ALL"],
              f"compose/{r}: user 10001, read-only root fs, no capabilities")
        aliases = aliases_of(svc)
        check(name in aliases and svc.get("hostname") == r, f"compose/{r}: hostname {r}, network alias {name}")
        check((as_dict(svc.get("depends_on")).get("certs") or {}).get("condition") == "service_completed_successfully",
              f"compose/{r}: starts after the certs service completed")
        # TLS: the three flags, all on the certificate volume, mounted read-only.
        tls = {f: flag(cmd, f) for f in ("tls_cert", "tls_key", "tls_ca")}
        check(all(tls.values()), f"compose/{r}: TLS on (--tls_cert, --tls_key, --tls_ca)")
        tls_mounts = [(t, ro) for t, (src, ro) in mounts(svc).items() if src == certs_volume[0]]
        check(len(tls_mounts) == 1 and tls_mounts[0][1], f"compose/{r}: mounts the certificate volume read-only")
        if not (all(tls.values()) and len(tls_mounts) == 1):
            continue
        mount = tls_mounts[0][0].rstrip("/")
        local = {}
        for f, path in tls.items():
            inside = path.startswith(mount + "/")
            local[f] = os.path.join(cert_dir, path[len(mount) + 1:]) if inside else ""
            check(inside and os.path.isfile(local[f]), f"compose/{r}: --{f}={path} is a file gen-certs.sh writes")
        info = cert_info(local["tls_cert"])
        if info is None:
            continue
        sans, text = info
        check({name, r} <= sans, f"compose/{r}: its certificate names {name} and {r} (SANs {sorted(sans)})")
        check("TLS Web Server Authentication" in text and "TLS Web Client Authentication" in text
              and verifies(local["tls_cert"], "sslserver") and verifies(local["tls_cert"], "sslclient"),
              f"compose/{r}: its certificate is signed by the CA for serverAuth and clientAuth (mTLS)")
        check(local["tls_ca"] == os.path.join(cert_dir, "ca.crt"), f"compose/{r}: --tls_ca is the compose CA")
        if name == "gateway":
            check({"localhost", "127.0.0.1"} <= sans, "compose/gateway: certificate names localhost and 127.0.0.1 (published port)")
            check(not flag(cmd, "http_plaintext") and flag(cmd, "http_port"),
                  f"compose/{r}: the HTTP port serves HTTPS with the gateway certificate (no --http_plaintext)")

# Single writers: <service>-0 writes, <service>-1 follows it.
for name in ("catalog", "pricing"):
    writer, follower = f"{name}-0", f"{name}-1"
    wcmd = svcs.get(writer, {}).get("command", [])
    fcmd = svcs.get(follower, {}).get("command", [])
    check(flag(wcmd, "writer_address") is None and flag(wcmd, "writer_host") is None,
          f"compose/{writer}: is the writer (no --writer_address)")
    want = f"{writer}:{SERVICES[name][0]}"
    check(flag(fcmd, "writer_address") == want and flag(fcmd, "writer_host") in (None, writer),
          f"compose/{follower}: follows its writer (--writer_address={want})")
wp = svcs.get("pricing-0", {})
updates = flag(wp.get("command", []), "price_updates_file") or ""
check(any(updates.startswith(t.rstrip("/") + "/") and src in declared_volumes for t, (src, ro) in mounts(wp).items()
          if not ro), "compose/pricing-0: --price_updates_file on a named volume (survives restarts)")
cache_volumes = []
for r in ("catalog-1", "gateway-0", "gateway-1"):
    cache = flag(svcs.get(r, {}).get("command", []), "catalog_cache_file") or ""
    vol = [src for t, (src, ro) in mounts(svcs.get(r, {})).items()
           if cache.startswith(t.rstrip("/") + "/") and not ro and src in declared_volumes]
    check(len(vol) == 1, f"compose/{r}: --catalog_cache_file on its own named volume")
    cache_volumes += vol
check(len(set(cache_volumes)) == len(cache_volumes), f"compose: no two replicas share a cache volume {cache_volumes}")

# Who dials whom: every replica of the caller reaches both replicas of the
# backend through the shared alias, and the backend's certificate names it.
dials = [(r, "catalog_address", "catalog") for r in replicas_of["gateway"] + replicas_of["pricing"]]
dials += [(r, f"{b}_address", b) for r in replicas_of["gateway"] for b in ("sizing", "pricing")]
dials += [(f"{n}-1", "writer_address", n) for n in ("catalog", "pricing")]
check(len(dials) >= 10, f"compose: {len(dials)} backend addresses to check")
for r, f, backend in dials:
    address = flag(svcs.get(r, {}).get("command", []), f) or ""
    host = dial_host(address)
    port_ok = address.endswith(f":{SERVICES[backend][0]}")
    if f != "writer_address":
        check(address == f"dns:///{backend}:{SERVICES[backend][0]}" and port_ok,
              f"compose/{r}: --{f}=dns:///{backend}:{SERVICES[backend][0]} (round_robin over both replicas)")
        targets = [c for c in replicas_of[backend]
                   if host in aliases_of(svcs[c])]
        check(targets == replicas_of[backend] and len(targets) == 2, f"compose/{r}: {host} resolves to {targets}")
    info = cert_info(os.path.join(cert_dir, backend, "tls.crt"))
    check(info is not None and host in info[0], f"compose/{r}: {backend}'s certificate names {host!r} ({address})")
admin = cert_info(os.path.join(cert_dir, "admin", "tls.crt"))
check(admin is not None and verifies(os.path.join(cert_dir, "admin", "tls.crt"), "sslclient"),
      "compose/certs: an admin client certificate signed by the CA")
published = [p.rsplit(":", 2)[-2] for c in svcs.values() for p in c.get("ports", [])]
check(len(published) == len(set(published)) and len(published) >= 5, f"compose: published host ports are distinct {published}")
check(all(p.startswith("127.0.0.1:") for c in svcs.values() for p in c.get("ports", [])),
      "compose: ports published on 127.0.0.1 only")

# ---- compose: the refresher feeds catalog-0, the writer ----
refreshers = [c for c, sv in svcs.items() if (sv.get("command") or [None])[0] == "refresher"]
check(refreshers == ["refresher"], f"compose: one refresher (it follows the single writer): {refreshers}")
rsvc = svcs.get("refresher", {})
rcmd, wcmd = rsvc.get("command", []), svcs.get("catalog-0", {}).get("command", [])
rout = flag(rcmd, "output") or "?"
rvol = mounts(rsvc).get(os.path.dirname(rout), (None, True))
wvol = mounts(svcs.get("catalog-0", {})).get(os.path.dirname(rout), (None, True))
check(flag(wcmd, "refreshed_offers") == rout and rvol[0] is not None and rvol[0] == wvol[0] and not rvol[1],
      f"compose: catalog-0 reads the refresher's --output {rout} from the shared volume {rvol[0]}")
check(flag(rcmd, "catalog_address") == "catalog-0:50051", "compose/refresher: reloads catalog-0, the writer")
check(all(flag(rcmd, f) for f in ("tls_cert", "tls_key", "tls_ca")) and "/admin/" in (flag(rcmd, "tls_cert") or "")
      and mounts(rsvc).get("/etc/gpu-advisor/tls", (None,))[0] == "tls",
      "compose/refresher: TLS with the admin client certificate from the tls volume")
check(rsvc.get("user") == "10001:10001" and rsvc.get("read_only") is True
      and "GPUADVISOR_ADMIN_TOKEN" in (rsvc.get("environment") or {}),
      "compose/refresher: user 10001, read-only root fs, the admin token from the environment")

# ---- Prometheus configs: targets match the services' metrics ports ----
for path, hosts_of in ((os.path.join(DEPLOY, "prometheus", "prometheus.yml"), lambda s: ["127.0.0.1"]),
                       (os.path.join(DEPLOY, "compose", "prometheus.yml"), lambda s: replicas_of[s])):
    cfg = load_all(path)[0]
    jobs = {j["job_name"]: sorted(t for sc in j["static_configs"] for t in sc["targets"]) for j in cfg["scrape_configs"]}
    want = {f"gpuadvisor-{s}": sorted(f"{h}:{m}" for h in hosts_of(s)) for s, (_, m) in SERVICES.items()}
    if "compose" in path:
        want["gpuadvisor-refresher"] = [f"refresher:{REFRESHER_METRICS_PORT}"]
    check(bool(jobs) and jobs == want,
          f"{os.path.relpath(path, ROOT)}: jobs gpuadvisor-<service> scrape the metrics port of every replica {want}")

# ---- rules and dashboard use only exported metrics ----
rules = load_all(os.path.join(DEPLOY, "prometheus", "rules.yml"))[0]
recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
for g in rules["groups"]:
    for r in g["rules"]:
        unknown = metric_names(r["expr"]) - KNOWN_METRICS
        check(not unknown, f"rules.yml {r.get('record') or r.get('alert')}: known metrics {sorted(unknown) or ''}")

dash_path = os.path.join(DEPLOY, "grafana", "gpu-advisor.json")
with open(dash_path) as f:
    dash = json.load(f)
check(True, "grafana/gpu-advisor.json: JSON parses")
exprs = [(p["title"], t["expr"]) for p in dash["panels"] for t in p.get("targets", [])]
check(len(exprs) >= 10, f"grafana: {len(exprs)} queries")
dash_rules = []
for i, (title, expr) in enumerate(exprs):
    unknown = metric_names(expr) - KNOWN_METRICS
    check(not unknown, f"grafana '{title}': known metrics {sorted(unknown) or ''}")
    # Grafana's variables, replaced so promtool can parse the query.
    concrete = (expr.replace("$__rate_interval", "5m").replace("$__range", "1h")
                .replace("$job", "gpuadvisor-.*"))
    dash_rules.append({"record": f"dashboard:query_{i}", "expr": concrete})
with open(os.path.join(TMP, "dashboard_rules.yml"), "w") as f:
    yaml.safe_dump({"groups": [{"name": "dashboard", "rules": dash_rules}]}, f)

print(f"{checks} checks, {failures} failed")
sys.exit(min(failures, 100))
