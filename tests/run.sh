#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release), runs every
# test through ctest (unit, end-to-end with the real binaries, the contract
# checks, the Python and Node clients, Prometheus against live services) and
# exits non-zero on any failure.
#
# Environment: BUILD_DIR (default build), CTEST_ARGS (extra ctest arguments).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}

bash deploy/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900 ${CTEST_ARGS:-}
