#include "services/catalog/import/price_import.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kDataDir[] = GPUADVISOR_SOURCE_DIR "/data";
constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/../shared/fixtures";

// The embedded catalog plus the real price files, through the loader the
// catalog server uses: imported offers pass the whole-snapshot validation,
// and each import's report lands in the snapshot's source.
TEST(PriceImportLoader, EmbeddedCatalogPlusRealPriceFiles) {
  const std::string vast = std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(vast);
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  const absl::StatusOr<CatalogSnapshot> base = LoadCatalogSnapshot(sources);
  ASSERT_OK(base);
  sources.price_imports = PriceImportSources("vast", vast);
  ASSERT_EQ(sources.price_imports.size(), 1u);
  const absl::StatusOr<CatalogSnapshot> loaded = LoadCatalogSnapshot(sources);
  ASSERT_OK(loaded);
  EXPECT_GE(loaded->offers_size(), base->offers_size() + 21);
  EXPECT_THAT(loaded->source(), HasSubstr("vast " + vast + ": read 30, kept "));
  int imported = 0;
  for (const Offer& o : loaded->offers()) {
    if (absl::StrContains(o.source(), "vast:")) {
      ++imported;
      EXPECT_THAT(o.region(), ::testing::EndsWith(", NA")) << o.id();
      break;
    }
  }
  EXPECT_EQ(imported, 1);
}

TEST(PriceImportLoader, BadSourcesAreErrors) {
  PriceImportContext context;
  EXPECT_THAT(ImportPriceFile({"vast", "/nonexistent/search.json"}, context),
              StatusIs(absl::StatusCode::kNotFound));
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  sources.price_imports.push_back({"nope", sources.gpus_path});
  EXPECT_THAT(LoadCatalogSnapshot(sources),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown import format")));
  EXPECT_TRUE(PriceImportSources("vast", "").empty());
  EXPECT_EQ(PriceImportSources("vast", "a.json,b.json")[1].path, "b.json");
}

}  // namespace
}  // namespace gpuadvisor::catalog
