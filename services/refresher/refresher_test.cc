// The refresher's guards and imports on real recorded files
// (../shared/fixtures). The fetch over HTTPS, faults included, is tested
// end to end by tests/integration/refresh_test.sh against a local replay
// server.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/refresher/http_fetch.h"
#include "services/refresher/source_import.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::refresher {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/../shared/fixtures";

class RefresherImport : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<catalog::v1::CatalogSnapshot> s = catalog::LoadCatalogSnapshot(
        catalog::CatalogSourcesFor(GPUADVISOR_SOURCE_DIR "/data", "", ""));
    ASSERT_OK(s);
    curated_ = *std::move(s);
    gpus_ = std::make_unique<catalog::GpuNameResolver>(curated_.gpus());
    context_ = {gpus_.get(), &curated_.offers(),
                GPUADVISOR_SOURCE_DIR "/data/catalog/country_continents.csv",
                GPUADVISOR_SOURCE_DIR "/data/catalog/gcp_billing_families.csv",
                ::testing::TempDir()};
  }
  static std::string Read(const std::string& path) {
    absl::StatusOr<std::string> text = ReadFile(path);
    EXPECT_OK(text);
    return text.ok() ? *text : "";
  }
  catalog::v1::CatalogSnapshot curated_;
  std::unique_ptr<catalog::GpuNameResolver> gpus_;
  ImportContext context_;
};

RefreshSource Source(const std::string& format, const std::string& provider = "") {
  RefreshSource s;
  s.set_name(format + "-test");
  s.set_format(format);
  s.set_provider(provider);
  return s;
}

TEST_F(RefresherImport, VastSearchAndGuards) {
  const std::string file = std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  const std::string body = Read(file);
  absl::StatusOr<ImportedCopy> copy = ImportBodies(Source("vast"), {body}, context_);
  ASSERT_OK(copy);
  ASSERT_FALSE(copy->offers.empty());
  EXPECT_EQ(copy->rows.read, 30);
  EXPECT_GT(copy->rows.kept, 0);
  EXPECT_FALSE(copy->rows.rejected.empty());
  const PriceBounds bounds;
  EXPECT_OK(GuardCopy(Source("vast"), {}, copy->offers, bounds));
  EXPECT_OK(GuardCopy(Source("vast"), copy->offers, copy->offers, bounds));

  // Every price x10: held back against the previous good copy.
  std::vector<Offer> jumped = copy->offers;
  for (Offer& o : jumped) o.set_on_demand_usd_per_hour(o.on_demand_usd_per_hour() * 10);
  EXPECT_THAT(GuardCopy(Source("vast"), copy->offers, jumped, bounds),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("against the previous")));
  // An empty page, and a copy cut to half.
  EXPECT_THAT(GuardCopy(Source("vast"), copy->offers, {}, bounds),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no offer")));
  std::vector<Offer> half(copy->offers.begin(),
                          copy->offers.begin() + static_cast<long>(copy->offers.size() / 2));
  EXPECT_THAT(GuardCopy(Source("vast"), copy->offers, half, bounds),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("shrinks more than 25%")));
  // A price outside the physical range, even with no previous copy.
  std::vector<Offer> absurd = copy->offers;
  absurd[0].set_on_demand_usd_per_hour(1e6);
  EXPECT_THAT(GuardCopy(Source("vast"), {}, absurd, bounds),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("outside")));
}

TEST_F(RefresherImport, ChangedSchemaAndTruncatedBodiesFail) {
  const std::string file = std::string(kFixtures) + "/skypilot-catalog/catalogs/v8/lambda/vms.csv";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  const std::string body = Read(file);
  absl::StatusOr<ImportedCopy> good = ImportBodies(Source("skypilot", "lambda"), {body}, context_);
  ASSERT_OK(good);
  EXPECT_GT(good->offers.size(), 100u);
  // A renamed column (a schema change) is rejected whole.
  const std::string renamed = absl::StrReplaceAll(body, {{"InstanceType", "Instance"}});
  EXPECT_THAT(ImportBodies(Source("skypilot", "lambda"), {renamed}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // A Vast body cut in the middle is not JSON.
  const std::string vast = Read(std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json");
  EXPECT_THAT(ImportBodies(Source("vast"), {vast.substr(0, vast.size() / 2)}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ImportBodies(Source("azure-html"), {body}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format")));
}

TEST_F(RefresherImport, GcpBillingPagesAreOneImport) {
  const std::string file =
      std::string(kFixtures) + "/gcp-billing-catalog/compute-engine-skus.a3-h100.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  const std::string body = Read(file);
  absl::StatusOr<ImportedCopy> copy = ImportBodies(Source("gcp-billing"), {body}, context_);
  ASSERT_OK(copy);
  ASSERT_FALSE(copy->offers.empty());
  bool eu = false;
  for (const Offer& o : copy->offers) eu |= o.region() == "europe-west4";
  EXPECT_TRUE(eu);
}

TEST(RedactUrl, HidesKeys) {
  EXPECT_EQ(RedactUrl("https://h/v1/skus?key=SECRET&pageSize=5000"),
            "https://h/v1/skus?key=<redacted>&pageSize=5000");
  EXPECT_EQ(RedactUrl("https://h/p?a=1&API_KEY=x"), "https://h/p?a=1&API_KEY=<redacted>");
  EXPECT_EQ(RedactUrl("https://h/p"), "https://h/p");
}

}  // namespace
}  // namespace gpuadvisor::refresher
