// Load guards on real files: the embedded data passes with its outliers
// flagged, and the real files broken the ways the issue lists (a file cut at
// an offer boundary, prices x100, 2 KB of host RAM, 141 bytes of GPU memory)
// are rejected with file:line, unless forced; a rejected reload keeps the old
// catalog serving.

#include "services/catalog/catalog_guards.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/catalog_store.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::GpuList;
using ::gpuadvisor::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A copy of data/ in a temporary folder, to break one file at a time.
class GuardedData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/guards_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/catalog");
    std::filesystem::copy(GPUADVISOR_SOURCE_DIR "/data/catalog", dir_ + "/catalog",
                          std::filesystem::copy_options::recursive);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& file) const { return dir_ + "/catalog/" + file; }
  // Replaces `from` (which must occur) by `to` in one data file.
  void Break(const std::string& file, const std::string& from, const std::string& to) {
    std::string text = Read(Path(file));
    ASSERT_NE(text.find(from), std::string::npos) << from;
    Write(Path(file), absl::StrReplaceAll(text, {{from, to}}));
  }
  CatalogSources Sources() const { return CatalogSourcesFor(dir_, "", ""); }

  std::string dir_;
};

TEST_F(GuardedData, TheEmbeddedDataPassesAndItsOutliersAreFlagged) {
  absl::StatusOr<LoadedCatalog> loaded = LoadCatalog(Sources(), {});
  ASSERT_OK(loaded);
  ASSERT_FALSE(loaded->warnings.empty());
  // Azure T4 spot 0.062699 against 0.526 on demand: 88% off.
  EXPECT_THAT(loaded->warnings,
              Contains(AllOf(HasSubstr("offers.textproto:"),
                             HasSubstr("\"azure/Standard_NC4as_T4_v3/eastus\""),
                             HasSubstr("spot price 88% below on-demand: likely stale"))));
  int flagged = 0;
  for (const auto& offer : loaded->snapshot.offers()) {
    if (offer.id() == "azure/Standard_NC4as_T4_v3/eastus") {
      EXPECT_THAT(offer.warnings(), Contains("spot price 88% below on-demand: likely stale"));
      // The price it is about, flagged, so answers never rank on it.
      ASSERT_EQ(offer.price_flags_size(), 1);
      EXPECT_EQ(offer.price_flags(0).purchase_option(), v1::PURCHASE_OPTION_SPOT);
      EXPECT_EQ(offer.price_flags(0).listed_usd_per_hour(), offer.spot_usd_per_hour());
      EXPECT_EQ(offer.price_flags(0).reason(), "spot price 88% below on-demand: likely stale");
    }
    EXPECT_EQ(offer.price_flags_size(), offer.warnings_size()) << offer.id();
    flagged += offer.warnings_size() > 0;
  }
  EXPECT_EQ(flagged, 7);  // the seven spot prices of docs/catalog.md "Load guards"
  EXPECT_LT(flagged, loaded->snapshot.offers_size() / 10);  // outliers, not the norm
}

TEST_F(GuardedData, PricesTimesAHundredAreRejectedWithFileAndLine) {
  Break("offers.textproto",
        "on_demand_usd_per_hour: 55.04 spot_usd_per_hour: 21.1543 reserved_usd_per_hour: 39.33\n"
        "  spot_min_usd_per_hour: 10.2397 spot_max_usd_per_hour: 55.04",
        "on_demand_usd_per_hour: 5504 spot_usd_per_hour: 2115.43 reserved_usd_per_hour: 3933\n"
        "  spot_min_usd_per_hour: 1023.97 spot_max_usd_per_hour: 5504");
  absl::StatusOr<LoadedCatalog> loaded = LoadCatalog(Sources(), {});
  EXPECT_THAT(
      loaded,
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("load guards rejected the catalog"),
                     HasSubstr(Path("offers.textproto") + ":"),
                     HasSubstr("\"aws/p5.48xlarge/us-east-1\": on_demand_usd_per_hour 5504"),
                     HasSubstr("more than 5x outside the market range"))));
  // Forced: accepted, the finding kept as a warning.
  LoadOptions force;
  force.force = true;
  absl::StatusOr<LoadedCatalog> forced = LoadCatalog(Sources(), force);
  ASSERT_OK(forced);
  EXPECT_THAT(forced->warnings, Contains(AllOf(HasSubstr("forced: "), HasSubstr("5504"))));
}

TEST_F(GuardedData, HostRamOfTwoKilobytesIsRejected) {
  Break("offers.textproto", "vcpus: 192 ram_bytes: 2199023255552\n  availability",
        "vcpus: 192 ram_bytes: 2048\n  availability");
  absl::StatusOr<LoadedCatalog> loaded = LoadCatalog(Sources(), {});
  EXPECT_THAT(
      loaded.status().message(),
      AllOf(HasSubstr("ram_bytes 2048 (2 KiB) outside the physical range 1 GiB .. 64 TiB")));
  EXPECT_THAT(std::string(loaded.status().message()),
              MatchesRegex("(.|\n)*offers.textproto:[0-9]+: offers\\[[0-9]+\\](.|\n)*"));
}

TEST_F(GuardedData, GpuMemoryOf141BytesIsRejected) {
  Break("gpus.textproto", "memory_bytes: 151397597184", "memory_bytes: 141");
  absl::StatusOr<LoadedCatalog> loaded = LoadCatalog(Sources(), {});
  EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kInvalidArgument,
                               AllOf(HasSubstr(Path("gpus.textproto") + ":"),
                                     HasSubstr("\"H200\": memory_bytes 141 (141 B)"))));
}

TEST_F(GuardedData, SpotFarBelowOnDemandIsRejected) {
  // 97% off: not a market price.
  Break("offers.textproto", "on_demand_usd_per_hour: 0.526 spot_usd_per_hour: 0.062699",
        "on_demand_usd_per_hour: 0.526 spot_usd_per_hour: 0.0150");
  EXPECT_THAT(LoadCatalog(Sources(), {}).status().message(),
              HasSubstr("spot price 97% below on-demand: more than 95% off"));
}

// A reload that keeps half of the serving catalog (a file cut at an offer
// boundary) is rejected and the old catalog keeps serving; forced, it goes in.
TEST_F(GuardedData, AReloadCutInHalfIsRejectedUnlessForced) {
  CatalogStore store(Sources());
  ASSERT_OK(store.Reload());
  const int serving = store.Current()->snapshot().offers_size();
  const std::string version = store.Current()->snapshot().version();
  ASSERT_GT(serving, 250);

  const std::string text = Read(Path("offers.textproto"));
  size_t cut = text.find("\noffers {");
  for (int i = 0; i < serving / 2; ++i) cut = text.find("\noffers {", cut + 1);
  ASSERT_NE(cut, std::string::npos);
  Write(Path("offers.textproto"), text.substr(0, cut) + "\n");  // ends at an offer boundary

  const absl::Status rejected = store.Reload();
  EXPECT_THAT(rejected,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(absl::StrCat("the reload has ", serving / 2,
                                                    " offers where ", serving, " are serving")),
                             HasSubstr("more than the 25% a reload may drop"))));
  EXPECT_EQ(store.Current()->snapshot().offers_size(), serving);
  EXPECT_EQ(store.Current()->snapshot().version(), version);
  EXPECT_EQ(store.failed_reloads(), 1);

  ASSERT_OK(store.Reload(/*force=*/true));
  EXPECT_EQ(store.Current()->snapshot().offers_size(), serving / 2);
  EXPECT_THAT(store.last_warnings(), Contains(HasSubstr("forced: ")));
}

TEST(CatalogGuards, BadGuardFilesNameTheLine) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/guards_bad.textproto");
  GpuList gpus;
  gpus.add_gpus()->set_name("H100-SXM");
  const GpuNameResolver resolver(gpus);
  Write(path, "max_shrink_fraction: 1.5\n");
  EXPECT_THAT(LoadCatalogGuards(path, resolver),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(":1:1: max_shrink_fraction: must be a fraction <= 1")));
  Write(path, "warn_price_factor: 2\nprice_ranges {\n  gpu_model: \"X9\"\n}\n");
  EXPECT_THAT(LoadCatalogGuards(path, resolver),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(":3:3: price_ranges[0].gpu_model: unknown GPU \"X9\"")));
  absl::StatusOr<v1::CatalogGuards> none = LoadCatalogGuards("", resolver);
  ASSERT_OK(none);
}

}  // namespace
}  // namespace gpuadvisor::catalog
