#!/usr/bin/env python3
"""Checks an exported answer with each orchestrator's own rules.

  export_check.py FORMAT EXPORT.yaml ANSWER.json [HEADERS.txt] [ALTERNATIVE]

FORMAT is skypilot, dstack or karpenter; ANSWER.json the JSON answer to the
same request; HEADERS.txt the HTTP response headers (curl -D) when the file
came over HTTP; ALTERNATIVE the file's number (default 1).

Three checks, each failing with a message naming what is wrong:
  schema   the orchestrator's published schema (tests/http/schemas/, data
           with version and source): SkyPilot's task, resources and service
           schemas; dstack's configuration schema; Karpenter's NodePool CRD
           (openAPIV3Schema with jsonschema, its CEL rules with
           karpenter_cel.mjs).
  names    every cloud/backend, region, instance type and accelerator the file
           writes is one the orchestrator knows: SkyPilot's catalog rows
           (tests/data/orchestrators/skypilot_catalog_names.csv, from the
           shared fixtures) or, for catalog rows outside those excerpts, the
           catalog offer's source is that SkyPilot catalog
           (data/catalog/offers.textproto); dstack's backend enum and
           gpuhunt's GPU names; no "global" region anywhere.
  meaning  the orchestrator's selection rule applied to the file picks the
           planned offers first: SkyPilot tries resources.ordered in order
           (rank order, each entry pinned); dstack takes the cheapest offer
           matching every filter (simulated over the whole catalog: only
           planned offers match, rank 1's first); Karpenter tries the
           highest-weight NodePool first (weights fall with the rank, GPU
           taint, limits from the plan, no reserved capacity).
It also checks that every recommendation is either in the file or named in
its "Left out" comment (and in the X-Export-Left-Out header).
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
NAMES = json.load(open(os.path.join(ROOT, "data/exports/orchestrators.json"), encoding="utf-8"))
SCHEMAS = os.path.join(HERE, "schemas")
TESTDATA = os.path.join(ROOT, "tests/data/orchestrators")
FIXTURES = os.environ.get("GPUADVISOR_FIXTURES", os.path.join(ROOT, "tests/data"))
SPOT, RESERVED = "PURCHASE_OPTION_SPOT", "PURCHASE_OPTION_RESERVED"


def fail(message):
    print(f"export_check: {message}")
    sys.exit(1)


def load_schema(name):
    return json.load(open(os.path.join(SCHEMAS, name), encoding="utf-8"))


# SkyPilot's schemas use its own keyword `case_insensitive_enum`
# (sky/utils/schemas.py; its validator compares lower-cased).
def _case_insensitive_enum(validator, enums, instance, schema):
    if isinstance(instance, str) and instance.lower() not in [e.lower() for e in enums]:
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums} (case-insensitive)")


SkyValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"case_insensitive_enum": _case_insensitive_enum})


def validate(instance, schema, where, cls=jsonschema.Draft202012Validator):
    errors = sorted(cls(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        fail(f"{where} schema: {e.message} at {'/'.join(str(p) for p in e.absolute_path) or '(top)'}")


# ---------------------------------------------------------------- catalog

def catalog_offers():
    """data/catalog/offers.textproto as dicts (the fields the checks use)."""
    text = open(os.path.join(ROOT, "data/catalog/offers.textproto"), encoding="utf-8").read()
    offers = []
    for block in re.findall(r"^offers \{\n(.*?)^\}", text, re.S | re.M):
        o = {}
        for key, value in re.findall(r'(\w+): ("(?:[^"\\]|\\.)*"|[^\s]+)', block):
            o[key] = json.loads(value) if value.startswith('"') else value
        for key in ("on_demand_usd_per_hour", "spot_usd_per_hour", "spot_min_usd_per_hour",
                    "spot_max_usd_per_hour", "reserved_usd_per_hour"):
            o[key] = float(o.get(key, 0))
        o["gpus_per_node"] = int(o.get("gpus_per_node", 0))
        offers.append(o)
    if not offers:
        fail("no offers read from data/catalog/offers.textproto")
    return offers


SKYPILOT_CATALOG_KEYS = ("C-AWS", "C-GCP", "C-AZ", "C-LAM", "C-NEB", "C-RP", "C-VAST", "C-HS",
                         "C-OCI", "C-SF")


def skypilot_rows():
    path = os.path.join(TESTDATA, "skypilot_catalog_names.csv")
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    if not rows:
        fail("skypilot_catalog_names.csv is empty")
    fixture_dir = os.path.join(FIXTURES, "skypilot-catalog/catalogs/v8")
    if os.path.isdir(fixture_dir):
        # The vendored list is exactly the fixtures' rows.
        seen = set()
        for cloud in os.listdir(fixture_dir):
            for name in os.listdir(os.path.join(fixture_dir, cloud)):
                if name.startswith("vms"):
                    for r in csv.DictReader(open(os.path.join(fixture_dir, cloud, name), encoding="utf-8")):
                        seen.add((cloud, r["InstanceType"], r["Region"]))
        if seen != {(r["cloud"], r["instance_type"], r["region"]) for r in rows}:
            fail("tests/data/orchestrators/skypilot_catalog_names.csv differs from the fixtures")
    else:
        fail(f"the fixtures ({fixture_dir}) are missing")
    return rows


def gpuhunt_rows():
    """gpuhunt's own rows in the shared fixture: {(backend, instance_name, location)}.

    The fixture holds gpuhunt's one row table that ships in the repository,
    src/gpuhunt/resources/tpu_pricing.json (GCP TPUs: "TPU v6e" -> regions);
    its CSV catalogs are built in CI and published to S3, so not here
    (fixtures/gpuhunt/SOURCE.md). Where a dstack file writes a GCP region or a
    TPU these rows name, it is checked against them; elsewhere SkyPilot's rows
    for the same providers stand in (the providers' own names either way)."""
    path = os.path.join(FIXTURES, "gpuhunt/tpu_pricing.json")
    if not os.path.isfile(path):
        if os.environ.get("CI") == "true":
            fail(f"the shared gpuhunt fixture ({path}) is missing")
        return set()
    rows = set()
    for tpu, regions in json.load(open(path, encoding="utf-8")).items():
        for region in regions:
            rows.add(("gcp", tpu, region))
    if not rows:
        fail(f"no rows in {path}")
    return rows


def offer_for(provider, instance_type, region):
    for o in CATALOG:
        if (o.get("provider"), o.get("instance_type"), o.get("region")) == (provider, instance_type, region):
            return o
    return None


def by_provenance(provider, instance_type, region):
    """The catalog row was read from a SkyPilot catalog (PRICES.md C-* keys)."""
    o = offer_for(provider, instance_type, region)
    return o is not None and any(o.get("source", "").startswith(k) for k in SKYPILOT_CATALOG_KEYS)


# ---------------------------------------------------------------- shared

def left_out_lines(text):
    lines, on = [], False
    for line in text.splitlines():
        if line == "# Left out:":
            on = True
        elif on and line.startswith("#   "):
            lines.append(line[4:])
        else:
            on = False
    return lines


def rank_of(line):
    m = re.match(r"rank (\d+) ", line)
    return int(m.group(1)) if m else None


def check_accounted(recs, kept_ranks, left, alternatives_ranks):
    """Every recommendation is in this file, in another alternative, or left out with a reason."""
    left_ranks = {rank_of(line) for line in left}
    for r in recs:
        if r["rank"] not in kept_ranks and r["rank"] not in left_ranks and r["rank"] not in alternatives_ranks:
            fail(f"rank {r['rank']} is neither in the file, in an alternative, nor left out with a reason")
    for line in left:
        if not re.match(r"rank \d+ .+?: \S", line):
            fail(f"left-out line without a reason: {line!r}")


def alternative_ranks(text):
    out = set()
    for m in re.finditer(r"alternative=\d+: .*\(ranks ([\d, ]+)\)", text):
        out.update(int(x) for x in m.group(1).split(", "))
    return out


def check_headers(headers_path, left):
    if not headers_path:
        return
    headers = {}
    for line in open(headers_path, encoding="latin-1"):
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if "x-export-alternatives" not in headers:
        fail("no X-Export-Alternatives header")
    want = "; ".join(left)
    want = "".join(c if 0x20 <= ord(c) <= 0x7e else "?" for c in want.encode("utf-8").decode("latin-1"))
    if headers.get("x-export-left-out", "") != want:
        fail(f"X-Export-Left-Out {headers.get('x-export-left-out')!r} != the file's Left out {want!r}")


def node_price(r):
    o = r["offer"]
    if r["purchase_option"] == SPOT:
        return o.get("spot_max_usd_per_hour") or o.get("spot_usd_per_hour", 0)
    if r["purchase_option"] == RESERVED:
        return o.get("reserved_usd_per_hour", 0)
    return o.get("on_demand_usd_per_hour", 0)


def planned_nodes(r):
    """Nodes (replica nodes for an endpoint, spares included) the plan rents."""
    nodes = max(1, r["offer"].get("nodes", 1))
    s = r.get("serving")
    if not s or not s.get("replicas"):
        return nodes
    replicas, spare = s["replicas"], s.get("spare_replicas", 0)
    if replicas >= nodes:
        return nodes + spare // max(1, replicas // nodes)
    return (replicas + spare) * max(1, nodes // replicas)


# ---------------------------------------------------------------- SkyPilot

def check_skypilot(task, recs, text):
    validate(task, load_schema("skypilot-task.schema.json"), "SkyPilot task", SkyValidator)
    validate(task["resources"], load_schema("skypilot-resources.schema.json"), "SkyPilot resources",
             SkyValidator)
    serving = "service" in task
    if serving:
        validate(task["service"], load_schema("skypilot-service.schema.json"), "SkyPilot service",
                 SkyValidator)
    ordered = task["resources"]["ordered"]
    if not ordered:
        fail("resources.ordered is empty")
    # SkyServe: resources must all use spot or none (sky/serve/serve_utils.py validate_service_task).
    if serving and len({e["use_spot"] for e in ordered}) != 1:
        fail("a SkyServe service mixes spot and on-demand resources")
    rows = skypilot_rows()
    known = {(r["cloud"], r["instance_type"], r["region"]) for r in rows}
    types = {(r["cloud"], r["instance_type"]) for r in rows}
    ranks = [int(m) for m in re.findall(r"^    # rank (\d+):", text, re.M)]
    if len(ranks) != len(ordered):
        fail("every ordered entry needs its '# rank N' comment")
    if ranks != sorted(ranks):
        fail(f"ordered entries not in rank order: {ranks}")
    by_rank = {r["rank"]: r for r in recs}
    verified = provenance = 0
    for rank, entry in zip(ranks, ordered):
        r = by_rank[rank]
        o = r["offer"]
        parts = entry["infra"].split("/")
        cloud, region = parts[0], parts[1] if len(parts) > 1 else ""
        if cloud not in NAMES["skypilot"]["clouds"] or region == "global":
            fail(f"rank {rank}: infra {entry['infra']!r} names a cloud or region SkyPilot does not know")
        # Names: SkyPilot's catalog rows, else the catalog row's SkyPilot provenance.
        if (cloud, entry["instance_type"]) in types:
            if region and (cloud, entry["instance_type"], region) not in known:
                fail(f"rank {rank}: {cloud} {entry['instance_type']} has no row in {region} in SkyPilot's catalog")
            verified += 1
        elif cloud in ("lambda", "nebius", "vast", "shadeform", "hyperstack"):
            fail(f"rank {rank}: {cloud} has no instance type {entry['instance_type']!r} in SkyPilot's catalog")
        elif by_provenance(o["provider"], o["instance_type"], o["region"]) and entry["instance_type"] == o["instance_type"]:
            provenance += 1
        elif (by_provenance(o["provider"], o["instance_type"], o["region"]) and
              o["instance_type"].startswith(entry["instance_type"] + "+") and
              o["instance_type"].endswith(f'+{list(entry.get("accelerators", {"": 0}))[0]}x{o["gpus_per_node"]}')):
            provenance += 1  # a machine type with attached GPUs: instance_type + accelerators
        elif cloud == "runpod" and re.fullmatch(r"\d+x_[A-Za-z0-9-]+_SECURE", entry["instance_type"]):
            provenance += 1  # SkyPilot's <count>x_<GPU>_SECURE naming (data/exports sources)
        else:
            fail(f"rank {rank}: {cloud} {entry['instance_type']} is not a SkyPilot catalog name")
        # Meaning: pinned to what the plan priced.
        if entry["use_spot"] != (r["purchase_option"] == SPOT) or r["purchase_option"] == RESERVED:
            fail(f"rank {rank}: use_spot {entry['use_spot']} but the plan is {r['purchase_option']}")
        if o["region"] != "global" and not region:
            fail(f"rank {rank}: the region is not pinned")
        price = node_price(r)
        if price > 0 and not (price <= entry.get("max_hourly_cost", 0) <= price + 0.01 + 1e-9):
            fail(f"rank {rank}: max_hourly_cost {entry.get('max_hourly_cost')} does not pin the planned ${price}/h")
        if serving:
            if planned_nodes(r) != task["service"]["replicas"]:
                fail(f"rank {rank}: {planned_nodes(r)} replica nodes, the service has {task['service']['replicas']}")
        elif max(1, o.get("nodes", 1)) != task["num_nodes"]:
            fail(f"rank {rank}: {o.get('nodes')} nodes, the task has num_nodes {task['num_nodes']}")
    # SkyPilot's rule: it tries resources.ordered top down, so the first entry runs first.
    usable = [r["rank"] for r in recs if r["rank"] in ranks]
    if ranks[0] != min(usable):
        fail("the first ordered entry is not the best-ranked offer of this file")
    return set(ranks), f"{len(ordered)} ordered fallbacks, ranks {ranks} ({verified} names in SkyPilot's catalog rows, {provenance} by catalog provenance)"


# ---------------------------------------------------------------- dstack

def dstack_names(o, spot):
    """The dstack offer this catalog offer is, as data/exports maps it, or None."""
    d = NAMES["dstack"]
    p = o["provider"]
    backend = d["backends"].get(p)
    gpu = d["gpu_names"].get(o.get("gpu_model", ""))
    if backend is None or gpu is None:
        return None
    if o["instance_type"] in d.get("attached_accelerators", {}).get(p, {}):
        itype = d["attached_accelerators"][p][o["instance_type"]]
    elif p in d.get("unpinned_instance_types", {}):
        itype = None
    elif p in d["instance_types"]:
        itype = d["instance_types"][p].get(o["instance_type"])
        if itype is None:
            return None
    else:
        itype = o["instance_type"]
    if o["region"] == "global":
        region = None
    elif p in d.get("regions", {}):
        region = d["regions"][p].get(o["region"])
    else:
        region = o["region"]
    if spot:
        price = o["spot_min_usd_per_hour"] or o["spot_usd_per_hour"]
    else:
        price = o["on_demand_usd_per_hour"]
    if price <= 0:
        return None
    return {"backend": backend, "region": region, "instance_type": itype, "gpu": gpu,
            "count": o["gpus_per_node"], "spot": spot, "price": price, "id": o.get("id")}


# dstack's offer names (gpuhunt) are the providers' own for these backends,
# so SkyPilot's catalog rows (the same providers' names) verify them.
SAME_NAMES = {"aws": "aws", "azure": "azure", "gcp": "gcp", "lambda": "lambda", "nebius": "nebius", "oci": "oci"}
OWN_FORMATS = {  # gpuhunt's own spellings (data/exports sources)
    "nebius": r"\S+ \S+",                      # "<platform> <preset>"
    "runpod": r"(NVIDIA|AMD) .+",                # RunPod GPU type ids
    "crusoe": r"[a-z0-9]+-\d+gb(-[a-z]+)*\.\d+x",  # Crusoe product names
}


def check_dstack_names(conf):
    rows = skypilot_rows()
    regions = {(r["cloud"], r["region"]) for r in rows}
    hunt = gpuhunt_rows()
    hunt_regions = {(b, loc) for b, _, loc in hunt}
    # A TPU (gpuhunt writes TPUs as GPU names "v5p", "v6e", ...) must be one of
    # gpuhunt's own rows in one of the file's regions.
    gpus = conf["resources"]["gpu"]["name"]
    for g in gpus if isinstance(gpus, list) else [gpus]:
        if re.fullmatch(r"v\d+\w*", g) and not any(
                t.lower().endswith(g.lower()) and (not conf.get("regions") or loc in conf["regions"])
                for b, t, loc in hunt):
            fail(f"TPU {g!r} in {conf.get('regions')} is not one of gpuhunt's rows")
    types = {(r["cloud"], r["instance_type"]) for r in rows}
    offers = {(o["provider"], o["instance_type"]) for o in CATALOG}
    offer_regions = {(o["provider"], o["region"]) for o in CATALOG}
    backends = set(conf["backends"])
    for region in conf.get("regions", []):
        if "gcp" in backends and ("gcp", region) in hunt_regions:
            continue  # one of gpuhunt's own GCP locations
        ok = any((SAME_NAMES.get(b), region) in regions or (b, region) in offer_regions for b in backends)
        ok = ok or ("vastai" in backends and re.fullmatch(r"[a-z]{2}-\S+", region))
        if not ok:
            fail(f"region {region!r} is not a region of {sorted(backends)} in the catalog data")
    for itype in conf.get("instance_types", []):
        ok = False
        for b in backends:
            cloud = SAME_NAMES.get(b)
            if b == "nebius" and re.fullmatch(OWN_FORMATS["nebius"], itype):
                ok = ok or ("nebius", itype.replace(" ", "_")) in types
            elif b in OWN_FORMATS:
                ok = ok or bool(re.fullmatch(OWN_FORMATS[b], itype))
            elif cloud:
                ok = ok or (cloud, itype) in types or (b, itype) in offers
                ok = ok or any(t.startswith(itype + "+") for p, t in offers if p == b)
        if not ok:
            fail(f"instance type {itype!r} is not a {sorted(backends)} offer name")


def gpu_memory_gib():
    """Gpu.name -> memory as sold (GiB) from data/catalog/gpus.textproto."""
    text = open(os.path.join(ROOT, "data/catalog/gpus.textproto"), encoding="utf-8").read()
    out = {}
    for block in re.findall(r"^gpus \{\n(.*?)^\}", text, re.S | re.M):
        name = re.search(r'^\s*name: "([^"]+)"', block, re.M)
        mem = re.search(r"^\s*memory_bytes: (\d+)", block, re.M)
        if name and mem:
            out[name.group(1)] = int(mem.group(1)) / 2**30
    if not out:
        fail("no GPU memory read from data/catalog/gpus.textproto")
    return out


def memory_min(memory):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)GB\.\.", str(memory or "0GB.."))
    if not m:
        fail(f"resources.gpu.memory {memory!r} is not a lower bound in GB")
    return float(m.group(1))


def count_range(count):
    if isinstance(count, int):
        return count, count
    lo, hi = str(count).split("..")
    return int(lo or 0), int(hi or 10**9)


def check_dstack(conf, recs, text):
    validate(conf, load_schema("dstack-configuration.schema.json"), "dstack configuration")
    gpu_names = json.load(open(os.path.join(TESTDATA, "gpuhunt_gpu_names.json"), encoding="utf-8"))
    known_gpus = set(gpu_names["nvidia"]) | set(gpu_names["amd"])
    gpus = conf["resources"]["gpu"]["name"]
    gpus = gpus if isinstance(gpus, list) else [gpus]
    for g in gpus:
        if g not in known_gpus:
            fail(f"GPU name {g!r} is not one gpuhunt/dstack knows")
    if "global" in [r.lower() for r in conf.get("regions", [])]:
        fail("regions: 'global' matches no dstack offer")
    check_dstack_names(conf)
    serving = conf["type"] == "service"
    ranks = [int(m) for m in re.findall(r"^#   rank (\d+): ", text, re.M)]
    by_rank = {r["rank"]: r for r in recs}
    if not ranks:
        fail("no planned offer listed")
    for rank in ranks:
        r = by_rank[rank]
        if r["purchase_option"] == RESERVED:
            fail(f"rank {rank}: reserved written as {conf.get('spot_policy')}")
        want = planned_nodes(r) if serving else max(1, r["offer"].get("nodes", 1))
        got = conf["replicas"] if serving else conf.get("nodes", 1)
        if want != got:
            fail(f"rank {rank}: {want} {'replicas' if serving else 'nodes'}, the file has {got}")
    # dstack's rule, simulated over every catalog offer (spot and on-demand):
    # keep the offers matching every filter, take the cheapest.
    policy = conf.get("spot_policy", "on-demand")
    lo, hi = count_range(conf["resources"]["gpu"]["count"])
    min_memory, memory = memory_min(conf["resources"]["gpu"].get("memory")), gpu_memory_gib()
    matched = []
    for o in CATALOG:
        for spot in (False, True):
            if (policy == "spot" and not spot) or (policy == "on-demand" and spot):
                continue
            n = dstack_names(o, spot)
            if n is None or n["backend"] not in conf["backends"] or n["gpu"] not in gpus:
                continue
            if "regions" in conf and n["region"] not in conf["regions"]:
                continue
            if "instance_types" in conf and n["instance_type"] not in conf["instance_types"]:
                continue
            if not lo <= n["count"] <= hi or n["price"] > conf.get("max_price", 1e18):
                continue
            if memory.get(o.get("gpu_model"), 0) + 1e-9 < min_memory:
                continue
            matched.append(n)
    if not matched:
        fail("the filters match no catalog offer")
    planned = set()
    for rank in ranks:
        o = by_rank[rank]["offer"]
        planned.add(o["id"] + ("/spot" if by_rank[rank]["purchase_option"] == SPOT else ""))
    for n in matched:
        if n["id"] + ("/spot" if n["spot"] else "") not in planned:
            fail(f"the filters also match {n['id']}{' spot' if n['spot'] else ''} at ${n['price']}/h, which the plan did not price")
    matched.sort(key=lambda n: n["price"])
    first = by_rank[ranks[0]]
    (mine,) = [n for n in matched if n["id"] == first["offer"]["id"] and n["spot"] == (first["purchase_option"] == SPOT)] or [None]
    if mine is None:
        fail(f"the filters do not match rank {ranks[0]}")
    if matched[0]["price"] < mine["price"] - 1e-9:
        fail(f"dstack would take {matched[0]['id']} (${matched[0]['price']}/h) before rank {ranks[0]} (${mine['price']}/h)")
    return set(ranks), f"{conf['type']}, {len(ranks)} planned offers, dstack takes rank {ranks[0]} first ({len(matched)} catalog offers match)"


# ---------------------------------------------------------------- Karpenter

CAPACITY = {SPOT: "spot", "PURCHASE_OPTION_ON_DEMAND": "on-demand"}
WELL_KNOWN = {"node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "topology.kubernetes.io/zone",
              "topology.k8s.aws/zone-id"}


def crd_schema(provider):
    name = {"aws": "karpenter.sh_nodepools.aws.yaml", "azure": "karpenter.sh_nodepools.azure.yaml"}.get(
        provider, "karpenter.sh_nodepools.core.yaml")
    crd = yaml.safe_load(open(os.path.join(SCHEMAS, name), encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return version["schema"]["openAPIV3Schema"]


def check_cel(schema, docs):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"schema": schema, "objects": docs}, f)
    try:
        out = subprocess.run(["node", os.path.join(HERE, "karpenter_cel.mjs"), f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        fail(f"Karpenter CRD CEL rules: {out.stdout.strip()} {out.stderr.strip()}")
    return out.stdout.strip()


def requirement(doc, key):
    for req in doc["spec"]["template"]["spec"]["requirements"]:
        if req["key"] == key:
            return req["values"]
    fail(f"{doc['metadata']['name']}: no requirement on {key}")


def check_karpenter(docs, recs, text):
    ranks = [int(m) for m in re.findall(r"^# rank (\d+): ", text, re.M)]
    if len(ranks) != len(docs):
        fail("every NodePool needs its '# rank N' comment")
    by_rank = {r["rank"]: r for r in recs}
    provider = by_rank[ranks[0]]["offer"]["provider"]
    schema = crd_schema(provider)
    # Kubernetes extensions (x-kubernetes-*, int-or-string) are not JSON Schema keywords.
    for doc in docs:
        validate(doc, schema, f"NodePool {doc['metadata']['name']}", jsonschema.Draft7Validator)
    cel = check_cel(schema, docs)
    node_class = NAMES["karpenter"]["providers"].get(provider)
    if node_class is None:
        fail(f"NodePools for {provider}, which has no Karpenter provider")
    rows = skypilot_rows()
    aws_types = {r["instance_type"] for r in rows if r["cloud"] == provider}
    weights = []
    for rank, doc in zip(ranks, docs):
        r = by_rank[rank]
        o = r["offer"]
        spec = doc["spec"]["template"]["spec"]
        ref = spec["nodeClassRef"]
        if (ref["group"], ref["kind"]) != (node_class["group"], node_class["kind"]):
            fail(f"rank {rank}: nodeClassRef {ref} is not {provider}'s NodeClass")
        for req in spec["requirements"]:
            if req["key"] not in WELL_KNOWN:
                fail(f"rank {rank}: requirement on {req['key']}, not a well-known label")
        (itype,) = requirement(doc, "node.kubernetes.io/instance-type")
        (capacity,) = requirement(doc, "karpenter.sh/capacity-type")
        if itype != o["instance_type"] or capacity != CAPACITY.get(r["purchase_option"]):
            fail(f"rank {rank}: pool {itype}/{capacity} is not the planned {o['instance_type']}/{r['purchase_option']}")
        if itype not in aws_types and not by_provenance(o["provider"], o["instance_type"], o["region"]):
            fail(f"rank {rank}: instance type {itype} is not in {provider}'s catalog data")
        gpu = "amd.com/gpu" if o["gpu_model"] in NAMES["karpenter"]["amd_gpus"] else "nvidia.com/gpu"
        taints = spec.get("taints", [])
        if not any(t["key"] == gpu and t["effect"] == "NoSchedule" for t in taints):
            fail(f"rank {rank}: no {gpu}:NoSchedule taint, so pods without GPUs could launch it")
        limit = int(doc["spec"].get("limits", {}).get(gpu, 0))
        if limit != o["gpus_per_node"] * planned_nodes(r):
            fail(f"rank {rank}: limits {gpu}={limit}, the plan rents {o['gpus_per_node'] * planned_nodes(r)}")
        zones = [req for req in spec["requirements"] if req["key"].startswith("topology.")]
        if planned_nodes(r) > 1 and not r.get("serving") and len(zones) != 1:
            fail(f"rank {rank}: a {planned_nodes(r)}-node job needs one zone requirement, has {len(zones)}")
        for req in zones:
            if len(req["values"]) != 1 or req["operator"] != "In":
                fail(f"rank {rank}: {req['key']} must name one zone (In), not {req['values']}")
            known = NAMES["karpenter"]["zone_ids"].get(provider, {}).get(f"{itype}/{o['region']}")
            first = NAMES["karpenter"]["first_zone"][provider].replace("{region}", o["region"])
            if known and req["values"] != [known[0]]:
                fail(f"rank {rank}: zone {req['values']} is not the catalog's zone {known[0]}")
            if not known and (req["key"], req["values"]) != (NAMES["karpenter"]["zone_label"], [first]):
                fail(f"rank {rank}: without zone data the pool pins {first}, not {req['values']}")
        weights.append(doc["spec"]["weight"])
    # Karpenter's rule: the highest weight first, so the weights follow the rank.
    order = [rank for _, rank in sorted(zip(weights, ranks), key=lambda x: -x[0])]
    if order != sorted(ranks) or len(set(weights)) != len(weights):
        fail(f"weights {weights} do not make Karpenter try ranks {sorted(ranks)} in order")
    if len(weights) > 1 and len(set(weights)) == 1:
        fail("all weights equal")
    if f"tolerations: [{{key: {gpu}" not in text:
        fail("no toleration example for the GPU taint")
    return set(ranks), f"{len(docs)} NodePools, weights {weights}; {cel}"


# ---------------------------------------------------------------- main

def main():
    fmt, path, answer_path = sys.argv[1:4]
    headers_path = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    text = open(path, encoding="utf-8").read()
    recs = json.load(open(answer_path, encoding="utf-8"))["recommendations"]
    if not recs:
        fail("the answer has no recommendations to compare with")
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    if not docs:
        fail("no YAML document")
    if fmt == "skypilot":
        (task,) = docs
        kept, summary = check_skypilot(task, recs, text)
    elif fmt == "dstack":
        (conf,) = docs
        kept, summary = check_dstack(conf, recs, text)
    elif fmt == "karpenter":
        kept, summary = check_karpenter(docs, recs, text)
    else:
        fail(f"unknown format {fmt}")
    left = left_out_lines(text)
    check_accounted(recs, kept, left, alternative_ranks(text))
    check_headers(headers_path, left)
    print(f"{fmt}: {summary}; {len(left)} left out with reasons")


CATALOG = catalog_offers()

if __name__ == "__main__":
    try:
        main()
    except yaml.YAMLError as e:
        fail(f"not YAML: {e}")
