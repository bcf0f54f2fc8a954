#!/usr/bin/env python3
"""Checks an exported answer: it parses as YAML, follows the orchestrator's
schema (schemas/*.schema.json, from the public references) and lists the
recommended offers the orchestrator can use in rank order.

  export_check.py skypilot|dstack|karpenter EXPORT.yaml RECOMMEND_RESPONSE.json

RECOMMEND_RESPONSE.json is the JSON answer to the same request.
"""
import json
import os
import sys

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = json.load(open(os.path.join(HERE, "../../data/exports/orchestrators.json")))


def schema(name):
    return json.load(open(os.path.join(HERE, "schemas", name)))


def fail(message):
    print(f"export_check: {message}")
    sys.exit(1)


def dedupe(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def main():
    fmt, path, answer_path = sys.argv[1:4]
    text = open(path).read()
    recs = json.load(open(answer_path))["recommendations"]
    if not recs:
        fail("the answer has no recommendations to compare with")
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    if not docs:
        fail("no YAML document")

    if fmt == "skypilot":
        (task,) = docs
        jsonschema.validate(task, schema("skypilot-task.schema.json"))
        clouds = NAMES["skypilot_clouds"]
        usable = [r for r in recs if r["offer"]["provider"] in clouds]
        nodes = usable[0]["offer"]["nodes"]
        expected = [(f'{clouds[r["offer"]["provider"]]}/{r["offer"]["region"]}', r["offer"]["instance_type"],
                     r["purchase_option"] == "PURCHASE_OPTION_SPOT")
                    for r in usable if r["offer"]["nodes"] == nodes]
        got = [(e["infra"], e["instance_type"], e["use_spot"]) for e in task["resources"]["ordered"]]
        if got != expected:
            fail(f"ordered {got} != ranked {expected}")
        if task["num_nodes"] != nodes:
            fail(f"num_nodes {task['num_nodes']} != {nodes}")
        print(f"skypilot: {len(got)} ordered fallbacks in rank order")
    elif fmt == "dstack":
        (task,) = docs
        jsonschema.validate(task, schema("dstack-task.schema.json"))
        backends = NAMES["dstack_backends"]
        usable = [r for r in recs if r["offer"]["provider"] in backends]
        nodes = usable[0]["offer"]["nodes"]
        usable = [r for r in usable if r["offer"]["nodes"] == nodes]
        expected = dedupe(r["offer"]["instance_type"] for r in usable)
        if task["instance_types"] != expected:
            fail(f"instance_types {task['instance_types']} != ranked {expected}")
        if task["backends"] != dedupe(backends[r["offer"]["provider"]] for r in usable):
            fail(f"backends {task['backends']}")
        spot = {r["purchase_option"] == "PURCHASE_OPTION_SPOT" for r in usable}
        policy = "auto" if len(spot) == 2 else ("spot" if True in spot else "on-demand")
        if task["spot_policy"] != policy:
            fail(f"spot_policy {task['spot_policy']} != {policy}")
        print(f"dstack: {len(expected)} instance types in rank order, spot_policy {policy}")
    elif fmt == "karpenter":
        nodepool = schema("karpenter-nodepool.schema.json")
        for doc in docs:
            jsonschema.validate(doc, nodepool)
        classes = NAMES["karpenter_node_classes"]
        usable = [r for r in recs if r["offer"]["provider"] in classes]
        top = usable[0]["offer"]
        capacity = {"PURCHASE_OPTION_SPOT": "spot", "PURCHASE_OPTION_RESERVED": "reserved"}
        expected = dedupe((r["offer"]["instance_type"], capacity.get(r["purchase_option"], "on-demand"))
                          for r in usable
                          if (r["offer"]["provider"], r["offer"]["region"]) == (top["provider"], top["region"]))

        def requirement(doc, key):
            for req in doc["spec"]["template"]["spec"]["requirements"]:
                if req["key"] == key:
                    return req["values"]
            fail(f"{doc['metadata']['name']}: no requirement on {key}")

        got = [(requirement(d, "node.kubernetes.io/instance-type")[0], requirement(d, "karpenter.sh/capacity-type")[0])
               for d in docs]
        if got != expected:
            fail(f"node pools {got} != ranked {expected}")
        weights = [d["spec"]["weight"] for d in docs]
        if weights != sorted(weights, reverse=True) or len(set(weights)) != len(weights):
            fail(f"weights {weights} do not fall with the rank")
        if len({d["metadata"]["name"] for d in docs}) != len(docs):
            fail("NodePool names repeat")
        print(f"karpenter: {len(docs)} NodePools, weights {weights}")
    else:
        fail(f"unknown format {fmt}")


if __name__ == "__main__":
    try:
        main()
    except jsonschema.ValidationError as e:
        fail(f"schema: {e.message} at {'/'.join(str(p) for p in e.absolute_path)}")
    except yaml.YAMLError as e:
        fail(f"not YAML: {e}")
