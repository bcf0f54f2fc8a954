#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release), runs every
# test through ctest (unit, end-to-end with the real binaries, the contract
# checks, the Python and Node clients, Prometheus against live services) and
# exits non-zero on any failure.
#
# Then the continuous checks: a second build with clang, ASan+UBSan
# (-DGPUADVISOR_SANITIZE=ON) and the libFuzzer targets (-DGPUADVISOR_FUZZ=ON),
# running the unit tests of the libraries that take untrusted input or hold
# shared state (common, catalog, pricing, gateway, sizing) and each fuzzer for
# FUZZ_SECONDS over its seed corpus. Only those targets are built under the
# sanitizers (the service binaries and end-to-end tests are not), to keep the
# whole run well under 30 minutes on 2 cores.
#
# Environment: BUILD_DIR (default build), CTEST_ARGS (extra ctest arguments),
# SANITIZE (1: run the sanitizer and fuzz stage; 0, the default for now: skip it),
# SAN_BUILD_DIR (default build-asan), FUZZ_SECONDS (default 15).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}

bash deploy/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900 ${CTEST_ARGS:-}

if [[ "${SANITIZE:-0}" == 1 ]]; then
  SAN_BUILD_DIR=${SAN_BUILD_DIR:-build-asan}
  SAN_TARGETS=(common_test catalog_lib_test catalog_service_test catalog_replica_test pricing_lib_test pricing_service_test
               gateway_lib_test sizing_lib_test text_proto_fuzz csv_fuzz json_fuzz request_fuzz)
  cmake -S . -B "$SAN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DGPUADVISOR_SANITIZE=ON -DGPUADVISOR_FUZZ=ON -DGPUADVISOR_BUILD_BENCH=OFF \
    -DGPUADVISOR_FUZZ_SECONDS="${FUZZ_SECONDS:-15}"
  cmake --build "$SAN_BUILD_DIR" -j "$(nproc)" --target "${SAN_TARGETS[@]}"
  # Only what was built: gtest's placeholders for unbuilt binaries and the
  # script tests (which drive the Release binaries) are excluded.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$SAN_BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 600 \
    -E '_NOT_BUILT|^proto_contract$|^clients_python_node$|^prometheus_live$|^deploy_config$|^cli$|_test_NOT_BUILT'
fi