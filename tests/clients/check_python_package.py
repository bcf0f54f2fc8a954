#!/usr/bin/env python3
"""Checks the installed gpu-advisor-client package against a live gateway:

    pip install clients/python        (see README.md)
    python tests/clients/check_python_package.py [GATEWAY_ADDRESS]   # default 127.0.0.1:50050

Recommend through the helper (ranked, cheapest first), a GatewayError naming
the field, Estimate, and the catalog pass-throughs. Prints
"python package: N passed, M failed"; exits 1 unless all pass.
"""
import sys

import grpc
from google.protobuf import json_format

from gpuadvisor import GatewayClient, GatewayError, constraints, workload
from gpuadvisor.sizing.v1 import sizing_pb2


def main() -> int:
    target = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50050"
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"PASS  {name}")
        else:
            failed += 1
            print(f"FAIL  {name} {detail}")

    with GatewayClient(target, timeout=20) as advisor:
        advisor.wait_ready(30)
        answer = advisor.recommend(
            workload("TASK_QLORA", "llama-3.1-8b", train_tokens=5e7, sequence_length=2048, precision="PRECISION_NF4"),
            constraints(max_total_usd=500, objective="OBJECTIVE_CHEAPEST"), max_results=5)
        recs = list(answer.recommendations)
        totals = [r.cost.total_usd for r in recs]
        check("recommend: ranked, cheapest first, within budget",
              recs and [r.rank for r in recs] == list(range(1, len(recs) + 1))
              and all(a <= b * (1 + answer.tie_band_fraction) * (1 + 1e-12)
                      for i, a in enumerate(totals) for b in totals[i + 1:])
              and max(totals) <= 500, f"{totals} (tie band {answer.tie_band_fraction})")
        try:
            advisor.recommend(workload("TASK_LORA", model={"params": -1}, train_tokens=5e7, sequence_length=2048))
            check("bad workload raises GatewayError", False, "no error")
        except GatewayError as e:
            check("bad workload raises GatewayError with code and field",
                  e.code == grpc.StatusCode.INVALID_ARGUMENT and e.field == "workload.model.params", repr(e))
        # A misspelt key is an error before any call (never dropped), and
        # the README names the exception: json_format.ParseError.
        for label, build in (("workload", lambda: workload("TASK_LORA", "llama-3.1-8b", train_tokns=5e7)),
                             ("constraints", lambda: constraints(max_total=1)),
                             ("offers", lambda: advisor.offers(gpu_model=["H100"]))):
            try:
                build()
                check(f"a misspelt {label} key raises", False, "no error")
            except json_format.ParseError as e:
                check(f"a misspelt {label} key raises json_format.ParseError naming it",
                      any(k in str(e) for k in ("train_tokns", "max_total", "gpu_model")), str(e))
        sized = advisor.estimate(
            workload("TASK_FULL_FINETUNE", "llama-3.1-8b", train_tokens=1e9, sequence_length=4096),
            [sizing_pb2.GpuConfiguration(gpu_model="H100-SXM", gpus_per_node=8, nodes=1)])
        check("estimate sizes one configuration", len(sized.estimates) == 1 and sized.estimates[0].memory.total_bytes > 0)
        offers = advisor.offers(gpu_models=["H100"], page_size=5)
        check("offers filter by GPU", offers.offers and all(o.gpu_model.startswith("H100") for o in offers.offers))
        check("gpus list specs", any(g.name == "H100-SXM" for g in advisor.gpus().gpus))
        check("models list presets", any(m.preset == "llama-3.1-70b" for m in advisor.models().models))
    print(f"python package: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
