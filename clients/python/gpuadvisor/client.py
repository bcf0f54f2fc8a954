"""A thin, typed helper over the generated GatewayService stub.

Requests and answers are the generated protobuf messages; `workload()` and
`constraints()` build them from keyword arguments with protobuf's JSON
mapping (field names as in the .proto, enums by name), so every field of the
contract is reachable without a hand-written mapping. Errors raise
GatewayError with the gRPC code, the message and the field it names.
"""
from __future__ import annotations

from typing import Any, Optional

import grpc
from google.protobuf import json_format

from gpuadvisor.catalog.v1 import catalog_pb2
from gpuadvisor.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from gpuadvisor.sizing.v1 import sizing_pb2

DEFAULT_TARGET = "127.0.0.1:50050"


class GatewayError(Exception):
    """A failed call: `code` (grpc.StatusCode), `message`, and `field`, the
    request field path the message starts with ("workload.model.params"), or
    None."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        head = message.split(": ", 1)[0]
        self.field: Optional[str] = head if head and all(c.isalnum() or c in "_.[]" for c in head) and ": " in message else None


def workload(task: str, preset: str = "", **fields: Any) -> sizing_pb2.Workload:
    """A Workload: `task` is a Task name ("TASK_LORA"), `preset` a model
    preset; other keyword arguments are Workload fields by proto name
    (train_tokens=5e7, sequence_length=2048, precision="PRECISION_NF4",
    model={"params": 8e9, ...}). Unknown names raise
    google.protobuf.json_format.ParseError."""
    body: dict[str, Any] = {"task": task, **fields}
    if preset:
        body.setdefault("model", {})["preset"] = preset
    return json_format.ParseDict(body, sizing_pb2.Workload())


def constraints(**fields: Any) -> gateway_pb2.Constraints:
    """Constraints by proto field name: max_total_usd=500,
    providers=["aws"], purchase_options=["PURCHASE_OPTION_ON_DEMAND"],
    objective="OBJECTIVE_FASTEST". Unknown names raise
    google.protobuf.json_format.ParseError."""
    return json_format.ParseDict(fields, gateway_pb2.Constraints())


def tls_credentials(ca_file: Optional[str] = None, cert_file: Optional[str] = None,
                    key_file: Optional[str] = None) -> grpc.ChannelCredentials:
    """TLS channel credentials from PEM files: the CA to verify the server
    with (None = the system roots) and an optional client certificate and
    key (both or neither; ValueError otherwise)."""
    if bool(cert_file) != bool(key_file):
        raise ValueError("cert_file and key_file: give both or neither")

    def read(path: Optional[str]) -> Optional[bytes]:
        if not path:
            return None
        with open(path, "rb") as f:
            return f.read()

    return grpc.ssl_channel_credentials(root_certificates=read(ca_file), private_key=read(key_file),
                                        certificate_chain=read(cert_file))


class GatewayClient:
    """GatewayService over one channel. Thread-safe, like the channel.

    `target` is a gRPC target ("host:port"); `timeout` is the deadline of each
    call in seconds. TLS: `ca_file` (PEM of the CA that signed the gateway's
    certificate; the system roots when only a client certificate is given),
    `cert_file` and `key_file` (a client certificate for mTLS); without any of
    them the channel is plaintext. Use as a context manager or call close()."""

    def __init__(self, target: str = DEFAULT_TARGET, timeout: float = 10.0,
                 channel: Optional[grpc.Channel] = None, *, ca_file: Optional[str] = None,
                 cert_file: Optional[str] = None, key_file: Optional[str] = None):
        if channel is None and (ca_file or cert_file or key_file):
            channel = grpc.secure_channel(target, tls_credentials(ca_file, cert_file, key_file))
        self._channel = channel or grpc.insecure_channel(target)
        self._stub = gateway_pb2_grpc.GatewayServiceStub(self._channel)
        self.timeout = timeout

    def __enter__(self) -> "GatewayClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Blocks until the channel connects (grpc.FutureTimeoutError after `timeout`)."""
        grpc.channel_ready_future(self._channel).result(timeout=timeout)

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout, wait_for_ready=True)
        except grpc.RpcError as e:  # grpc.Call carries code() and details()
            raise GatewayError(e.code(), e.details() or "") from None

    def recommend(self, work: sizing_pb2.Workload, limits: Optional[gateway_pb2.Constraints] = None,
                  max_results: int = 10) -> gateway_pb2.RecommendResponse:
        """Ranked, explained offers (GatewayService.Recommend)."""
        request = gateway_pb2.RecommendRequest(workload=work, max_results=max_results)
        if limits is not None:
            request.constraints.CopyFrom(limits)
        return self._call(self._stub.Recommend, request)

    def estimate(self, work: sizing_pb2.Workload,
                 configurations: list[sizing_pb2.GpuConfiguration]) -> gateway_pb2.EstimateResponse:
        """Sizing only, on the given GPU configurations (GatewayService.Estimate)."""
        return self._call(self._stub.Estimate,
                          gateway_pb2.EstimateRequest(workload=work, configurations=configurations))

    def offers(self, **filters: Any) -> catalog_pb2.ListOffersResponse:
        """Catalog offers (GatewayService.ListOffers); filters by proto field
        name: gpu_models=["H100"], providers=["aws"], page_size=50."""
        return self._call(self._stub.ListOffers, json_format.ParseDict(filters, catalog_pb2.ListOffersRequest()))

    def gpus(self) -> catalog_pb2.ListGpusResponse:
        """GPU models and their specs (GatewayService.ListGpus)."""
        return self._call(self._stub.ListGpus, catalog_pb2.ListGpusRequest())

    def models(self) -> sizing_pb2.ListModelsResponse:
        """Model presets (GatewayService.ListModels)."""
        return self._call(self._stub.ListModels, sizing_pb2.ListModelsRequest())
