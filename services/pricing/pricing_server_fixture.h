#ifndef GPUADVISOR_SERVICES_PRICING_PRICING_SERVER_FIXTURE_H_
#define GPUADVISOR_SERVICES_PRICING_PRICING_SERVER_FIXTURE_H_

// Tests only: a real pricing server on a port-0 loopback address, pricing
// the offers a test gives with the shipped billing rules
// (data/pricing/billing.textproto), and a stub to call it.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc/server.h"
#include "common/metrics/metrics.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/pricing_service_impl.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {

class PricingServerTest : public ::testing::Test {
 protected:
  // Loads the book over `offers` and serves it; a test calls it from SetUp
  // (a failure stops the test there).
  void StartServing(const catalog::v1::CatalogSnapshot& offers, const std::string& admin_token) {
    absl::StatusOr<std::shared_ptr<const PriceBook>> book = LoadPriceBook(
        absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/pricing/billing.textproto"), offers);
    ASSERT_OK(book);
    store_.Set(*book);
    service_ = std::make_unique<PricingServiceImpl>(
        &store_, &metrics_, PricingServiceImpl::Options{.admin_token = admin_token});
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service_.get()});
    ASSERT_OK(started);
    server_ = std::move(started->server);
    stub_ = v1::PricingService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", started->port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (service_ != nullptr) service_->Shutdown();
    if (server_ != nullptr) ShutdownServer(*server_, 1);
  }

  Metrics metrics_{"pricing"};
  PriceStore store_;
  std::unique_ptr<PricingServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::PricingService::Stub> stub_;
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICING_SERVER_FIXTURE_H_
