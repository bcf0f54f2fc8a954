#!/usr/bin/python3
"""GPU Advisor Python client: a sample Recommend call that also checks the answer.

    clients/python/gen_stubs.sh                 # once: stubs into clients/python/gen
    /usr/bin/python3 clients/python/examples/recommend.py [GATEWAY_ADDRESS]   # default 127.0.0.1:50050

Waits for grpc.health.v1 to report SERVING, then runs two checks against
GatewayService:
  1. Recommend for a QLoRA fine-tune of llama-3.1-8b (NF4, 50M tokens, 2k
     context), cheapest first: a non-empty ranked list 1..n, total cost
     ascending, every GPU with at least 16 GB.
  2. Recommend with an invalid workload (model.params = -1, no preset):
     INVALID_ARGUMENT naming "workload.model.params".
Prints a ranked table and "python client: N passed, M failed"; exits 1 unless
both pass. Use Debian's /usr/bin/python3 (python3-grpcio); set
GPUADVISOR_PY_STUBS to use stubs generated elsewhere.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("GPUADVISOR_PY_STUBS", os.path.join(HERE, "..", "gen")))

import grpc  # noqa: E402

try:
    import health_pb2  # noqa: E402
    import health_pb2_grpc  # noqa: E402
    import reflection_pb2  # noqa: E402
    import reflection_pb2_grpc  # noqa: E402
    from gpuadvisor.catalog.v1 import catalog_pb2  # noqa: E402
    from gpuadvisor.gateway.v1 import gateway_pb2, gateway_pb2_grpc  # noqa: E402
    from gpuadvisor.sizing.v1 import sizing_pb2  # noqa: E402
except ImportError as e:
    sys.exit(f"python client: stubs not found ({e}); run clients/python/gen_stubs.sh first")

DEFAULT_ADDRESS = "127.0.0.1:50050"
RPC_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 30.0
MIN_GPU_MEMORY_BYTES = 16e9  # an 8B model in NF4 plus LoRA state needs more than a 12 GB card


def qlora_workload(model):
    return sizing_pb2.Workload(
        task=sizing_pb2.TASK_QLORA,
        model=model,
        precision=sizing_pb2.PRECISION_NF4,
        train_tokens=50e6,
        sequence_length=2048,
        micro_batch_size=1,
    )


def wait_serving(channel, timeout_s):
    """Polls grpc.health.v1 until the gateway says SERVING; returns the last status name."""
    stub = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + timeout_s
    status = "no answer"
    while time.monotonic() < deadline:
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2.0,
                               wait_for_ready=True)
            status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return status
        except grpc.RpcError as e:
            status = f"{e.code().name}: {e.details()}"
        time.sleep(0.2)
    return status


def print_table(recs):
    header = f"{'#':>2}  {'provider':<12} {'instance':<26} {'region':<14} {'gpus':<22} " \
             f"{'option':<9} {'GB/GPU':>6} {'hours':>8} {'$/hour':>9} {'total $':>10}"
    print(header)
    print("-" * len(header))
    for r in recs:
        o = r.offer
        gpus = f"{o.gpus_per_node}x {o.gpu_model}" + (f" x{o.nodes} nodes" if o.nodes > 1 else "")
        option = catalog_pb2.PurchaseOption.Name(r.purchase_option).replace("PURCHASE_OPTION_", "").lower()
        print(f"{r.rank:>2}  {o.provider:<12.12} {o.instance_type:<26.26} {o.region:<14.14} "
              f"{gpus:<22.22} {option:<9.9} {r.gpu_memory_bytes / 1e9:>6.0f} "
              f"{r.estimated_hours:>8.2f} {r.cost.usd_per_hour:>9.2f} {r.cost.total_usd:>10.2f}")


def check_recommend(stub):
    """Returns a list of problems (empty = pass)."""
    request = gateway_pb2.RecommendRequest(
        workload=qlora_workload(sizing_pb2.Model(preset="llama-3.1-8b")),
        constraints=gateway_pb2.Constraints(objective=gateway_pb2.OBJECTIVE_CHEAPEST),
        max_results=5,
    )
    try:
        reply = stub.Recommend(request, timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as e:
        return [f"Recommend failed: {e.code().name}: {e.details()}"]
    recs = list(reply.recommendations)
    print(f"QLoRA llama-3.1-8b, 50M tokens: {len(recs)} recommendations "
          f"({reply.candidates_considered} candidates, catalog {reply.catalog_version or '?'}, "
          f"prices used: oldest {reply.oldest_price_as_of or '?'}, "
          f"newest {reply.newest_price_as_of or '?'})")
    if recs:
        print_table(recs)
    problems = []
    if not recs:
        problems.append("no recommendations")
    if len(recs) > 5:
        problems.append(f"{len(recs)} recommendations for max_results=5")
    ranks = [r.rank for r in recs]
    if ranks != list(range(1, len(recs) + 1)):
        problems.append(f"ranks are {ranks}, want 1..{len(recs)}")
    # Cheapest first, with totals within the answer's tie band (the estimate's
    # own uncertainty) ranked by time, then risk: a later entry is never
    # cheaper than an earlier one by more than the band.
    totals = [r.cost.total_usd for r in recs]
    band = reply.tie_band_fraction
    if any(a > b * (1 + band) * (1 + 1e-12) for i, a in enumerate(totals) for b in totals[i + 1:]):
        problems.append(f"total_usd out of order beyond the tie band {band:.3f}: {totals}")
    for r in recs:
        if r.gpu_memory_bytes < MIN_GPU_MEMORY_BYTES:
            problems.append(f"rank {r.rank} {r.offer.gpu_model}: gpu_memory_bytes "
                            f"{r.gpu_memory_bytes} < {MIN_GPU_MEMORY_BYTES:.0f}")
        if not r.cost.total_usd > 0:
            problems.append(f"rank {r.rank}: unpriced (total_usd {r.cost.total_usd})")
    return problems


def check_invalid_workload(stub):
    request = gateway_pb2.RecommendRequest(
        workload=qlora_workload(sizing_pb2.Model(params=-1)), max_results=5)
    try:
        stub.Recommend(request, timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as e:
        print(f"invalid workload: {e.code().name}: {e.details()}")
        problems = []
        if e.code() != grpc.StatusCode.INVALID_ARGUMENT:
            problems.append(f"code {e.code().name}, want INVALID_ARGUMENT")
        if "workload.model.params" not in (e.details() or ""):
            problems.append(f"message {e.details()!r} does not name workload.model.params")
        return problems
    return ["Recommend with model.params = -1 succeeded, want INVALID_ARGUMENT"]


def check_reflection(channel):
    """Server reflection lists the gateway and health services (gRPC 1.51 serves v1alpha)."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=RPC_TIMEOUT_S)
    names = sorted(s.name for r in replies for s in r.list_services_response.service)
    print(f"reflection: {', '.join(names)}")
    want = {"gpuadvisor.gateway.v1.GatewayService", "grpc.health.v1.Health"}
    missing = want - set(names)
    return [f"reflection does not list {sorted(missing)}"] if missing else []


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_ADDRESS
    checks = [("recommend", check_recommend), ("invalid workload", check_invalid_workload),
              ("reflection", check_reflection)]
    passed = failed = 0
    with grpc.insecure_channel(address) as channel:
        status = wait_serving(channel, READY_TIMEOUT_S)
        if status != "SERVING":
            print(f"FAIL  gateway {address} health: {status}, want SERVING")
            print(f"python client: 0 passed, {len(checks)} failed")
            return 1
        print(f"gateway {address}: SERVING")
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        for name, fn in checks:
            problems = fn(channel) if fn is check_reflection else fn(stub)
            if problems:
                failed += 1
                print(f"FAIL  {name}")
                for p in problems:
                    print(f"      {p}")
            else:
                passed += 1
                print(f"PASS  {name}")
    print(f"python client: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
