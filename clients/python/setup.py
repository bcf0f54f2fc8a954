"""Builds the GPU Advisor client package: at build time the gRPC stubs and
their type stubs (.pyi) are generated from the repository's proto/ with
protoc and grpc_python_plugin (Debian's protobuf-compiler and
protobuf-compiler-grpc; grpcio-tools is not needed) into the package
`gpuadvisor` beside the hand-written helper (gpuadvisor/client.py).

Environment: GPUADVISOR_PROTO_DIR (default ../../proto), PROTOC (default
protoc), GRPC_PYTHON_PLUGIN (default /usr/bin/grpc_python_plugin).
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOS = [
    "gpuadvisor/catalog/v1/catalog.proto",
    "gpuadvisor/sizing/v1/sizing.proto",
    "gpuadvisor/pricing/v1/pricing.proto",
    "gpuadvisor/gateway/v1/gateway.proto",
]


def generate(out_dir):
    proto_dir = os.environ.get("GPUADVISOR_PROTO_DIR", os.path.join(HERE, "..", "..", "proto"))
    if not os.path.isfile(os.path.join(proto_dir, PROTOS[-1])):
        raise SystemExit(f"gpu-advisor-client: no protos in {proto_dir}; install from the repository "
                         "(pip install clients/python) or set GPUADVISOR_PROTO_DIR")
    protoc = os.environ.get("PROTOC", shutil.which("protoc") or "protoc")
    plugin = os.environ.get("GRPC_PYTHON_PLUGIN", "/usr/bin/grpc_python_plugin")
    subprocess.run([protoc, f"--proto_path={proto_dir}", f"--python_out={out_dir}", f"--pyi_out={out_dir}",
                    f"--grpc_python_out={out_dir}", f"--plugin=protoc-gen-grpc_python={plugin}", *PROTOS],
                   check=True)
    # Regular packages (not namespace ones), so type checkers and tools see them.
    for proto in PROTOS:
        parts = os.path.dirname(proto).split("/")
        for depth in range(2, len(parts) + 1):
            init = os.path.join(out_dir, *parts[:depth], "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        generate(self.build_lib)


setup(cmdclass={"build_py": BuildPyWithStubs})
