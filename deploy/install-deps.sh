#!/usr/bin/env bash
# Installs everything GPU Advisor needs to build, test and run on Debian 12
# (bookworm): compilers, gRPC/Protobuf/Abseil/prometheus-cpp, test libraries,
# Prometheus/promtool, the Python and Node client toolchains.
#
# Idempotent: asks dpkg which packages are missing and installs only those;
# `apt-get update` runs only when something has to be installed, so a machine
# that already has everything is left untouched (and needs no network).
# Run as root (or through sudo). Used by the README, tests/run.sh,
# deploy/local/run.sh and the Dockerfile's build stage.
set -euo pipefail

PACKAGES=(
  # C++ build
  cmake g++ pkg-config ninja-build
  ccache clang-format  # a shared compiler cache; the formatting check (.clang-format)
  universal-ctags  # the code-shape check (tests/tools/code_shape.py)
  libgrpc++-dev protobuf-compiler-grpc  # gRPCConfig.cmake needs the plugins to exist
  libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev  # the servers' allocator (docs/performance.md)
  # monitoring: promtool checks the rules; prometheus runs locally
  prometheus
  # Python client (Debian's grpcio; call /usr/bin/python3), health/reflection protos;
  # pip/venv install clients/python as a package; jsonschema checks the exports
  python3-grpcio python3-protobuf python3-yaml grpc-proto python3-pip python3-venv python3-jsonschema
  # the gateway's HTTP/JSON server (docs/http.md: why Boost.Beast; header-only,
  # TLS through OpenSSL); cpp-httplib is the tests' HTTP client
  libboost-dev libssl-dev libcpp-httplib-dev
  # load benchmark (bench/load_test.sh): h2load
  nghttp2-client
  # the CLI's subcommands and flags
  libcli11-dev
  # the refresher's HTTP client (services/refresher: TLS, conditional requests, proxies)
  libcurl4-openssl-dev
  # gpuhunt's catalog.zip (services/refresher/zip_archive.cc: inflate)
  zlib1g-dev
  # continuous checks: libFuzzer targets and the ASan+UBSan build (clang's
  # runtime ships the fuzzer); openssl makes the TLS tests' certificates
  clang libclang-rt-14-dev openssl  # the sanitizer and fuzzer runtimes are only a Recommends of clang
  # misc
  curl ca-certificates
)

# The web page test drives headless Chromium (npm playwright-core); it
# trusts the test CA for the HTTPS pass through an NSS database (certutil,
# libnss3-tools). Image builds that run no tests set INSTALL_TEST_BROWSER=0
# to leave them out.
if [[ "${INSTALL_TEST_BROWSER:-1}" != 0 ]]; then
  PACKAGES+=(chromium libnss3-tools)
fi

# Node: keep a node that is already there (e.g. a newer NodeSource build);
# otherwise Debian's nodejs/npm are enough for the Node client.
if ! command -v node >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
  is_installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: missing ${missing[*]}; run as root" >&2
    exit 1
  fi
else
  SUDO=()
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
# --no-install-recommends keeps prometheus from pulling node-exporter and
# keeps the Docker build stage small.
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
