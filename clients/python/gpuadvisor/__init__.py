"""GPU Advisor client: which cloud GPU to rent for a workload, how long it
runs and what it costs.

    from gpuadvisor import GatewayClient, workload
    with GatewayClient("127.0.0.1:50050") as advisor:
        answer = advisor.recommend(workload("TASK_LORA", "llama-3.1-8b", train_tokens=5e7, sequence_length=2048))
        best = answer.recommendations[0]

Over TLS: `GatewayClient(target, ca_file="ca.pem")`, plus `cert_file=` and
`key_file=` where the gateway asks for client certificates.

The generated messages and stubs are importable too:
`from gpuadvisor.gateway.v1 import gateway_pb2, gateway_pb2_grpc`.
"""
from gpuadvisor.client import GatewayClient, GatewayError, constraints, tls_credentials, workload

__all__ = ["GatewayClient", "GatewayError", "constraints", "tls_credentials", "workload"]
