# syntax=docker/dockerfile:1
# One image for all GPU Advisor services; the command picks the service:
#   docker build -t gpu-advisor:latest .
#   docker run --rm -p 50050:50050 gpu-advisor:latest gateway_server --host=0.0.0.0 ...
#   docker run --rm gpu-advisor:latest catalog_server --host=0.0.0.0
# Binaries: catalog_server sizing_server pricing_server gateway_server gpu-advisor refresher.
# Default data: /usr/local/share/gpu-advisor/data (also the working directory's
# "data", so the binaries' default --data_dir works unchanged).

# ---- build: the full toolchain from Debian, the same script developers use ----
FROM debian:bookworm AS build
COPY deploy/install-deps.sh /tmp/install-deps.sh
# Its own layer: rebuilt only when the dependency list changes.
RUN INSTALL_TEST_BROWSER=0 /tmp/install-deps.sh && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja \
      -DCMAKE_BUILD_TYPE=Release \
      -DGPUADVISOR_BUILD_TESTS=OFF \
      -DGPUADVISOR_BUILD_BENCH=OFF \
 && cmake --build /build --target catalog_server sizing_server pricing_server gateway_server gpu-advisor refresher \
 && mkdir -p /out \
 && for b in catalog/catalog_server sizing/sizing_server pricing/pricing_server \
             gateway/gateway_server cli/gpu-advisor refresher/refresher; do \
      install -m 0755 -s "/build/services/$b" /out/; \
    done

# ---- certs: openssl and the compose deployment's certificate script ----
# Used only by deploy/compose (its one-shot `certs` service, `target: certs`);
# `docker build .` still ends with the runtime stage below.
FROM debian:bookworm-slim AS certs
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssl \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/compose/gen-certs.sh /usr/local/bin/gen-certs.sh
ENTRYPOINT ["/usr/local/bin/gen-certs.sh"]
CMD ["/certs"]

# ---- runtime: shared libraries only, no compiler, no headers ----
FROM debian:bookworm-slim AS runtime
# Runtime halves of the -dev packages used at build time (their dependencies,
# e.g. libgrpc29, libre2, libssl3, libcivetweb1, come along). tini is PID 1 so
# SIGTERM reaches the server and zombies are reaped.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libabsl20220623 libjemalloc2 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libssl3 libcurl4 \
      ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*

# Fixed numeric ids so Kubernetes' runAsNonRoot can verify them.
RUN groupadd --system --gid 10001 gpuadvisor \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin gpuadvisor \
 && install -d -o 10001 -g 10001 /var/cache/gpu-advisor /var/lib/gpu-advisor  # catalog caches; pricing updates (compose volumes inherit the owner)

COPY --from=build /out/ /usr/local/bin/
COPY data/ /usr/local/share/gpu-advisor/data/

# Fail the image build, not the first start, if a shared library is missing.
RUN set -e; for b in /usr/local/bin/*_server /usr/local/bin/gpu-advisor /usr/local/bin/refresher; do \
      if ldd "$b" | grep 'not found'; then echo "missing libraries for $b" >&2; exit 1; fi; \
    done

WORKDIR /usr/local/share/gpu-advisor
USER 10001:10001
# gRPC: gateway 50050, catalog 50051, sizing 50052, pricing 50053;
# Prometheus /metrics: 9460-9463 in the same order; the gateway's HTTP/JSON
# API and web page: 8080.
EXPOSE 50050-50053 9460-9463 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["gateway_server", "--host=0.0.0.0"]
