#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release), runs every
# test through ctest (unit, end-to-end with the real binaries, the contract
# checks, the Python and Node clients, Prometheus against live services) and
# exits non-zero on any failure. The C++ files must be formatted
# (.clang-format) and the build has -Werror.
#
# Then the continuous checks (docs/reliability.md, "Continuous checks"): a
# second build with clang, ASan+UBSan (-DGPUADVISOR_SANITIZE=ON) and the
# libFuzzer targets (-DGPUADVISOR_FUZZ=ON), running the unit tests of the
# libraries that take untrusted input or hold shared state under the
# sanitizers, then each fuzzer for FUZZ_SECONDS over its seed corpus. Only
# those binaries are built with the sanitizers (the service binaries and the
# end-to-end tests are not), to keep the whole run well under 30 minutes on 2
# cores. A sanitizer report, a leak or a fuzzer crash fails the run.
#
# Environment: BUILD_DIR (default build), CTEST_ARGS (extra ctest arguments),
# SANITIZE (default 1: run the sanitizer and fuzz stage; 0 skips it),
# SAN_BUILD_DIR (default build-asan), FUZZ_SECONDS (default 30, per fuzzer).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}

bash deploy/install-deps.sh
# Formatting first: every C++ file as .clang-format says (fix with tests/format.sh).
bash tests/format.sh --check
# Code shape: no function over 80 lines, no .cc over 600 lines (outside tests).
python3 tests/tools/code_shape.py
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUADVISOR_WERROR=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900 ${CTEST_ARGS:-}

if [[ "${SANITIZE:-1}" == 1 ]]; then
  SAN_BUILD_DIR=${SAN_BUILD_DIR:-build-asan}
  # The unit-test binaries run under the sanitizers, then the fuzzers.
  SAN_TESTS=(common_test common_validation_test catalog_lib_test catalog_service_test
             catalog_replica_test pricing_lib_test pricing_service_test gateway_lib_test
             sizing_lib_test)
  FUZZERS=(text_proto_fuzz csv_fuzz json_fuzz request_fuzz)
  started=$SECONDS
  cmake -S . -B "$SAN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DGPUADVISOR_SANITIZE=ON -DGPUADVISOR_FUZZ=ON -DGPUADVISOR_BUILD_BENCH=OFF \
    -DGPUADVISOR_FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
  cmake --build "$SAN_BUILD_DIR" -j "$(nproc)" --target "${SAN_TESTS[@]}" "${FUZZERS[@]}"
  # Exactly what was built: each gtest is labelled with its binary, each fuzz
  # run with "fuzz" (the script tests drive the Release binaries, and gtest's
  # placeholders for binaries not built here carry no label).
  labels=$(IFS='|'; echo "${SAN_TESTS[*]}|fuzz")
  ctest --test-dir "$SAN_BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900 \
    --no-tests=error -L "^(${labels})\$"
  echo "run.sh: sanitizer and fuzz stage took $((SECONDS - started)) s"
fi
