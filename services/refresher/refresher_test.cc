// The refresher's guards and imports on real recorded files
// (vendored under tests/data, see their SOURCE.md). The fetch over HTTPS, faults included, is
// tested end to end by tests/integration/refresh_test.sh against a local replay server.

#include "services/refresher/refresher.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/offer_list_file.h"
#include "services/refresher/http_fetch.h"
#include "services/refresher/source_import.h"
#include "services/refresher/zip_archive.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::refresher {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/tests/data";

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
                GPUADVISOR_SOURCE_DIR "/data/catalog/gcp_billing_families.csv"};
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

constexpr char kTestData[] = GPUADVISOR_SOURCE_DIR "/tests/data";

const Offer* Find(const std::vector<Offer>& offers, const std::string& id) {
  for (const Offer& o : offers) {
    if (o.id() == id) return &o;
  }
  return nullptr;
}

TEST_F(RefresherImport, AzureRetailPagesSpotAndReservations) {
  const std::string page0 = Read(std::string(kTestData) + "/azure-retail/prices.json");
  const std::string page1 = Read(std::string(kTestData) + "/azure-retail/prices.skip100.json");
  absl::StatusOr<ImportedCopy> copy =
      ImportBodies(Source("azure-retail"), {page0, page1}, context_);
  ASSERT_OK(copy);
  ASSERT_FALSE(copy->offers.empty());
  EXPECT_EQ(copy->rows.read, 16);
  EXPECT_EQ(copy->rows.kept, 11);
  EXPECT_THAT(
      copy->rows.rejected,
      ::testing::UnorderedElementsAre(
          ::testing::Pair("Windows", 1), ::testing::Pair("reservation term 3 Years", 1),
          ::testing::Pair("Low Priority meter", 1), ::testing::Pair("type DevTestConsumption", 1),
          ::testing::Pair("size not in the catalog (GPU model unknown)", 1)));
  EXPECT_EQ(copy->offers.size(), 6u);
  const Offer* a100 = Find(copy->offers, "azure/Standard_ND96amsr_A100_v4/eastus");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->gpu_model(), "A100-80GB");
  EXPECT_EQ(a100->gpus_per_node(), 8);
  EXPECT_DOUBLE_EQ(a100->on_demand_usd_per_hour(), 32.77);
  EXPECT_DOUBLE_EQ(a100->spot_usd_per_hour(), 3.6047);
  EXPECT_NEAR(a100->reserved_usd_per_hour(), 32.77 * 0.6, 1e-9);  // whole term / 8760 h
  const Offer* h100 = Find(copy->offers, "azure/Standard_ND96isr_H100_v5/eastus");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->spot_usd_per_hour(), 0);  // no spot meter: none
  // A size known in East US, priced in another region: a new offer there.
  const Offer* west = Find(copy->offers, "azure/Standard_NC6s_v3/westus2");
  ASSERT_NE(west, nullptr);
  EXPECT_EQ(west->gpu_model(), "V100");
  EXPECT_OK(GuardCopy(Source("azure-retail"), {}, copy->offers, PriceBounds()));

  // A changed schema (retailPrice renamed) fails the import, not only its rows.
  EXPECT_THAT(
      ImportBodies(Source("azure-retail"),
                   {absl::StrReplaceAll(page0, {{"\"retailPrice\"", "\"price\""}})}, context_),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("retailPrice")));
  EXPECT_THAT(ImportBodies(Source("azure-retail"), {"{\"value\": []}"}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Items")));
}

TEST_F(RefresherImport, OciPriceListPerGpuPricesAndKnownSpot) {
  const std::string body = Read(std::string(kTestData) + "/oci-price-list/products.json");
  absl::StatusOr<ImportedCopy> copy = ImportBodies(Source("oci-price-list"), {body}, context_);
  ASSERT_OK(copy);
  ASSERT_FALSE(copy->offers.empty());
  EXPECT_EQ(copy->rows.read, 9);
  EXPECT_EQ(copy->rows.kept, 7);
  EXPECT_THAT(copy->rows.rejected,
              ::testing::UnorderedElementsAre(::testing::Pair("no known shape for the GPU part", 1),
                                              ::testing::Pair("metric OCPU Per Hour", 1)));
  EXPECT_EQ(copy->offers.size(), 7u);
  const Offer* h100 = Find(copy->offers, "oci/BM.GPU.H100.8/global");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->on_demand_usd_per_hour(), 80);  // 8 x $10
  // The list has no preemptible price: the catalog's spot price is kept.
  EXPECT_DOUBLE_EQ(h100->spot_usd_per_hour(), 40);
  // ... with its own source and date: it was not fetched (C-OCI, 2026-11-29).
  EXPECT_EQ(h100->spot_price_source(), "C-OCI");
  EXPECT_EQ(h100->spot_as_of(), "2026-11-29");
  EXPECT_EQ(h100->spot_priced_at_unix_seconds(), 1795910400);
  // The machine is the curated row's, none of its price facts are.
  EXPECT_EQ(h100->gpus_per_node(), 8);
  EXPECT_EQ(h100->commitments_size(), 0);
  EXPECT_EQ(h100->warnings_size(), 0);
  const Offer* a100 = Find(copy->offers, "oci/BM.GPU.A100-v2.8/global");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->on_demand_usd_per_hour(), 32);
  EXPECT_NE(Find(copy->offers, "oci/VM.GPU.A10.1/global"), nullptr);
  EXPECT_THAT(ImportBodies(Source("oci-price-list"),
                           {absl::StrReplaceAll(body, {{"currencyCodeLocalizations", "prices"}})},
                           context_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("changed schema")));
  // Every page needs its "items" list (json::PageItems, shared with Azure's "Items").
  EXPECT_THAT(
      ImportBodies(Source("oci-price-list"), {"[{\"items\": []}, {\"value\": []}]"}, context_),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("page 1: no \"items\" list (not an OCI price list)")));
}

TEST_F(RefresherImport, GpuhuntPublishedZip) {
  const std::string zip = Read(std::string(kTestData) + "/gpuhunt/catalog.zip");
  ASSERT_FALSE(zip.empty());
  absl::StatusOr<std::vector<ZipMember>> members = ReadZip(zip, "catalog.zip", 1 << 20);
  ASSERT_OK(members);
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].name, "lambdalabs.csv");
  EXPECT_EQ((*members)[0].data, Read(std::string(kTestData) + "/gpuhunt/lambdalabs.csv"));

  absl::StatusOr<ImportedCopy> copy = ImportBodies(Source("gpuhunt-zip"), {zip}, context_);
  ASSERT_OK(copy);
  ASSERT_FALSE(copy->offers.empty());
  EXPECT_EQ(copy->rows.read, 6);
  EXPECT_EQ(copy->rows.kept, 5);
  const Offer* h100 = Find(copy->offers, "lambda/gpu_1x_h100_pcie/us-east-1");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->gpu_model(), "H100-PCIE");
  EXPECT_DOUBLE_EQ(h100->on_demand_usd_per_hour(), 3.29);

  // A body cut short, a corrupt member, a provider the archive lacks.
  EXPECT_THAT(ImportBodies(Source("gpuhunt-zip"), {zip.substr(0, zip.size() / 2)}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a whole ZIP")));
  std::string corrupt = zip;
  corrupt[60] = static_cast<char>(corrupt[60] ^ 0x55);
  EXPECT_THAT(ImportBodies(Source("gpuhunt-zip"), {corrupt}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ImportBodies(Source("gpuhunt-zip", "aws"), {zip}, context_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("aws.csv")));
  EXPECT_THAT(ReadZip(zip, "catalog.zip", 10), StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST_F(RefresherImport, ShippedSourcesAreWellFormed) {
  RefresherConfig config;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/refresher/sources.textproto", &config));
  ASSERT_FALSE(config.sources().empty());
  std::set<std::string> names, formats;
  for (const RefreshSource& s : config.sources()) {
    EXPECT_TRUE(names.insert(s.name()).second) << s.name();
    formats.insert(s.format());
    EXPECT_FALSE(s.urls().empty()) << s.name();
    for (const std::string& url : s.urls()) EXPECT_TRUE(absl::StartsWith(url, "https://")) << url;
    EXPECT_GT(s.interval_seconds(), 0) << s.name();
    EXPECT_GT(s.stale_after_seconds(), s.interval_seconds()) << s.name();
    absl::StatusOr<ImportedCopy> none = ImportBodies(s, {}, context_);
    if (!none.ok()) {
      EXPECT_THAT(none.status().message(), Not(HasSubstr("unknown"))) << s.name();
    }
  }
  for (const char* f : {"skypilot", "vast", "gcp-billing", "aws-price-list", "azure-retail",
                        "oci-price-list", "gpuhunt-zip"}) {
    EXPECT_TRUE(formats.contains(f)) << f;
  }
}

TEST_F(RefresherImport, NotModifiedConfirmsTheCopyServingWithoutAReload) {
  const std::string body = Read(std::string(kTestData) + "/oci-price-list/products.json");
  std::vector<std::string> sent_etags;
  FetchFn fetch = [&](const std::string&, const FetchOptions& o) -> absl::StatusOr<FetchResult> {
    sent_etags.push_back(o.etag);
    FetchResult r;
    r.etag = "\"v1\"";
    if (o.etag == r.etag) {
      r.status = 304;
      r.not_modified = true;
    } else {
      r.status = 200;
      r.body = body;
    }
    return r;
  };
  int publishes = 0;
  absl::Status verdict = absl::UnavailableError("catalog down");  // the first reload fails
  RefresherConfig config;
  *config.add_sources() = Source("oci-price-list");
  config.mutable_sources(0)->set_interval_seconds(60);
  config.mutable_sources(0)->add_urls("https://oci.example/products");
  RefresherOptions options;
  options.output_path = ::testing::TempDir() + "/not-modified.textproto";
  options.import = context_;
  Refresher refresher(config, options, fetch, [&] {
    ++publishes;
    return verdict;
  });
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0));
  ASSERT_EQ(refresher.States().size(), 1u);
  EXPECT_EQ(refresher.States()[0].result, "rejected by the catalog")
      << refresher.States()[0].reason;
  // A copy the catalog rejected is not "the copy serving": no validators sent.
  verdict = absl::OkStatus();
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0 + absl::Seconds(60)));
  EXPECT_EQ(refresher.States()[0].result, "ok");
  EXPECT_EQ(publishes, 2);
  // Now a 304: confirmed, its age restarts, no reload.
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0 + absl::Seconds(120)));
  EXPECT_EQ(refresher.States()[0].result, "not modified");
  EXPECT_EQ(refresher.States()[0].last_success_unix, absl::ToUnixSeconds(t0) + 120);
  EXPECT_EQ(publishes, 2);
  EXPECT_THAT(sent_etags, ::testing::ElementsAre("", "", "\"v1\""));
}

// A marketplace answering 304 still lists the offers: they are seen
// available at that time (republished), their prices keep their fetch time.
TEST_F(RefresherImport, NotModifiedMarketplaceListingIsSeenAvailableNow) {
  const std::string file = std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  const std::string body = Read(file);
  FetchFn fetch = [&](const std::string&, const FetchOptions& o) -> absl::StatusOr<FetchResult> {
    FetchResult r;
    r.etag = "\"v1\"";
    r.status = o.etag == r.etag ? 304 : 200;
    r.not_modified = o.etag == r.etag;
    if (!r.not_modified) r.body = body;
    return r;
  };
  int publishes = 0;
  RefresherConfig config;
  *config.add_sources() = Source("vast");
  config.mutable_sources(0)->set_interval_seconds(60);
  config.mutable_sources(0)->set_stale_after_seconds(600);
  config.mutable_sources(0)->add_urls("https://vast.example/search");
  RefresherOptions options;
  options.output_path = ::testing::TempDir() + "/not-modified-vast.textproto";
  options.import = context_;
  Refresher refresher(config, options, fetch, [&] {
    ++publishes;
    return absl::OkStatus();
  });
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  ASSERT_OK(refresher.RefreshNow("vast-test", t0));
  ASSERT_OK(refresher.RefreshNow("vast-test", t0 + absl::Seconds(60)));
  EXPECT_EQ(refresher.States()[0].result, "not modified");
  EXPECT_EQ(publishes, 2);
  absl::StatusOr<std::string> text = ReadFile(options.output_path);
  ASSERT_OK(text);
  catalog::v1::OfferList published;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(*text, &published));
  ASSERT_GT(published.offers_size(), 0);
  for (const Offer& o : published.offers()) {
    EXPECT_EQ(o.last_seen_available_unix_seconds(), absl::ToUnixSeconds(t0) + 60) << o.id();
    EXPECT_EQ(o.priced_at_unix_seconds(), absl::ToUnixSeconds(t0)) << o.id();
  }
}

// A SkyPilot CSV has no price date: its prices are dated by the fetch, or
// by the response's Last-Modified when that is earlier, and say which.
TEST_F(RefresherImport, DatelessFileIsPricedAtItsFetchOrLastModified) {
  const std::string file = std::string(kFixtures) + "/skypilot/lambda/vms.csv";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  const std::string body = Read(file);
  std::string last_modified;
  FetchFn fetch = [&](const std::string&, const FetchOptions&) -> absl::StatusOr<FetchResult> {
    FetchResult r;
    r.status = 200;
    r.body = body;
    r.last_modified = last_modified;
    return r;
  };
  RefresherConfig config;
  *config.add_sources() = Source("skypilot", "lambda");
  config.mutable_sources(0)->set_interval_seconds(60);
  config.mutable_sources(0)->set_stale_after_seconds(600);
  config.mutable_sources(0)->add_urls("https://raw.example/lambda/vms.csv");
  RefresherOptions options;
  options.output_path = ::testing::TempDir() + "/dateless-lambda.textproto";
  options.import = context_;
  Refresher refresher(config, options, fetch, [] { return absl::OkStatus(); });
  auto published = [&] {
    catalog::v1::OfferList list;
    absl::StatusOr<std::string> text = ReadFile(options.output_path);
    EXPECT_OK(text);
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.ok() ? *text : "", &list));
    return list;
  };
  const absl::Time fetched = absl::FromUnixSeconds(1796378400);  // 2026-12-04T10:00:00Z
  last_modified = "Fri, 04 Dec 2026 12:00:00 GMT";               // later: the fetch dates it
  ASSERT_OK(refresher.RefreshNow("skypilot-test", fetched));
  catalog::v1::OfferList first = published();
  ASSERT_GT(first.offers_size(), 0);
  for (const Offer& o : first.offers()) {
    EXPECT_EQ(o.priced_at_unix_seconds(), 1796378400) << o.id();
    EXPECT_EQ(o.as_of(), "2026-12-04") << o.id();
    EXPECT_THAT(o.source(), HasSubstr("refresh skypilot-test at 2026-12-04T10:00:00Z, stale"));
  }
  last_modified = "Thu, 03 Dec 2026 06:30:00 GMT";  // published before the fetch: its date
  ASSERT_OK(refresher.RefreshNow("skypilot-test", fetched + absl::Hours(1)));
  catalog::v1::OfferList second = published();
  ASSERT_GT(second.offers_size(), 0);
  for (const Offer& o : second.offers()) {
    EXPECT_EQ(o.priced_at_unix_seconds(), 1796279400) << o.id();  // 2026-12-03T06:30:00Z
    EXPECT_EQ(o.as_of(), "2026-12-03") << o.id();
    EXPECT_THAT(o.source(), HasSubstr("refresh skypilot-test at 2026-12-04T11:00:00Z, "
                                      "Last-Modified 2026-12-03T06:30:00Z"));
  }
}

TEST(NextPage, GcpTokenAzureLinkAndForeignOrigins) {
  EXPECT_EQ(*NextPage("https://h/v1/skus?pageSize=5000", "https://h/v1/skus?pageSize=5000",
                      R"({"skus": [], "nextPageToken": "abc"})"),
            "https://h/v1/skus?pageSize=5000&pageToken=abc");
  const std::string first = "https://prices.azure.com/api/retail/prices?$filter=x";
  const std::string link = "https://prices.azure.com:443/api/retail/prices?$filter=x&$skip=100";
  EXPECT_EQ(
      *NextPage(first, first, absl::StrCat(R"({"Items": [], "NextPageLink": ")", link, R"("})")),
      link);
  EXPECT_EQ(*NextPage(first, first, R"({"Items": [], "NextPageLink": null})"), "");
  EXPECT_EQ(*NextPage(first, first, "not json"), "");
  EXPECT_THAT(NextPage(first, first, R"({"NextPageLink": "https://elsewhere.example/p?key=S"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("leaves the source")));
}

TEST(GuardCopy, ShrinkShareAndBoundsAreConfigurable) {
  std::vector<Offer> before(10);
  for (size_t i = 0; i < before.size(); ++i) {
    before[i].set_id(absl::StrCat("p/t", i, "/r"));
    before[i].set_gpus_per_node(1);
    before[i].set_on_demand_usd_per_hour(2);
  }
  const std::vector<Offer> half(before.begin(), before.begin() + 5);
  RefreshSource source;
  EXPECT_THAT(GuardCopy(source, before, half, PriceBounds()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("shrinks")));
  source.set_max_shrink_fraction(0.6);
  EXPECT_OK(GuardCopy(source, before, half, PriceBounds()));
  const std::vector<Offer> third(before.begin(), before.begin() + 3);
  EXPECT_THAT(GuardCopy(source, before, third, PriceBounds()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("shrinks more than 60%")));
  PriceBounds narrow;
  narrow.max_usd_per_gpu_hour = 1.5;
  EXPECT_THAT(GuardCopy(source, {}, before, narrow),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("outside")));
  // A 2.9x move is within the default x3; x2 is not when the limit is 2.
  std::vector<Offer> moved = before;
  for (Offer& o : moved) o.set_on_demand_usd_per_hour(5.8);
  EXPECT_OK(GuardCopy(RefreshSource(), before, moved, PriceBounds()));
  source.set_max_price_ratio(2);
  EXPECT_THAT(GuardCopy(source, before, moved, PriceBounds()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("limit x2")));
}

TEST(RedactUrl, HidesKeys) {
  EXPECT_EQ(RedactUrl("https://h/v1/skus?key=SECRET&pageSize=5000"),
            "https://h/v1/skus?key=<redacted>&pageSize=5000");
  EXPECT_EQ(RedactUrl("https://h/p?a=1&API_KEY=x"), "https://h/p?a=1&API_KEY=<redacted>");
  EXPECT_EQ(RedactUrl("https://h/p"), "https://h/p");
}

}  // namespace
}  // namespace gpuadvisor::refresher

namespace gpuadvisor::refresher {
namespace {

// The binary file (a name not ending in .textproto): what the catalog reads,
// and a reload the catalog rejects puts the previous file back byte for byte,
// with no second name left behind.
TEST_F(RefresherImport, BinaryOutputAndARejectedReloadPutsThePreviousFileBack) {
  const std::string body = Read(std::string(kTestData) + "/oci-price-list/products.json");
  FetchFn fetch = [&](const std::string&, const FetchOptions&) -> absl::StatusOr<FetchResult> {
    FetchResult r;
    r.status = 200;
    r.body = body;
    return r;
  };
  absl::Status verdict = absl::OkStatus();
  RefresherConfig config;
  *config.add_sources() = Source("oci-price-list");
  config.mutable_sources(0)->add_urls("https://oci.example/products");
  RefresherOptions options;
  options.output_path = ::testing::TempDir() + "/rejected.binpb";
  options.import = context_;
  std::remove(options.output_path.c_str());
  Refresher refresher(config, options, fetch, [&] { return verdict; });
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0));
  ASSERT_EQ(refresher.States()[0].result, "ok") << refresher.States()[0].reason;
  const std::string first = Read(options.output_path);
  absl::StatusOr<catalog::v1::OfferList> published =
      catalog::DecodeOfferListFile(first, options.output_path);
  ASSERT_OK(published);
  ASSERT_GT(published->offers_size(), 0);
  EXPECT_TRUE(absl::StartsWith(first, "gpuadvisor-offer-list 1 "));

  verdict = absl::InvalidArgumentError("reload rejected");
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0 + absl::Seconds(60)));
  EXPECT_EQ(refresher.States()[0].result, "rejected by the catalog");
  EXPECT_EQ(Read(options.output_path), first);
  EXPECT_FALSE(std::filesystem::exists(options.output_path + ".before"));
  // The good copy still serves: the next accepted refresh publishes it again.
  verdict = absl::OkStatus();
  ASSERT_OK(refresher.RefreshNow("oci-price-list-test", t0 + absl::Seconds(120)));
  EXPECT_EQ(refresher.States()[0].result, "ok");
  EXPECT_FALSE(std::filesystem::exists(options.output_path + ".before"));
}

}  // namespace
}  // namespace gpuadvisor::refresher
