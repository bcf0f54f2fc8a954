#include "services/catalog/catalog.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/gpu_name_resolver.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::Gpu;
using ::gpuadvisor::catalog::v1::GpuList;
using ::gpuadvisor::catalog::v1::ListOffersRequest;
using ::gpuadvisor::catalog::v1::ListOffersResponse;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

GpuList TestGpus() {
  GpuList list;
  auto add = [&](const char* name, std::vector<const char*> aliases, double gb, v1::MemoryType type,
                 double nvlink) {
    Gpu* gpu = list.add_gpus();
    gpu->set_name(name);
    for (const char* a : aliases) gpu->add_aliases(a);
    gpu->set_vendor("NVIDIA");
    gpu->set_memory_bytes(static_cast<int64_t>(gb * 1e9));
    gpu->set_memory_type(type);
    gpu->set_nvlink_bytes_per_second(nvlink);
  };
  add("H100-SXM", {"H100", "H100-80GB", "H100 SXM5", "H100-MEGA"}, 80, v1::MEMORY_TYPE_HBM, 900e9);
  add("H100-PCIE", {"H100-80GB-PCIE"}, 80, v1::MEMORY_TYPE_HBM, 600e9);
  add("H100-NVL", {"H100NVL"}, 94, v1::MEMORY_TYPE_HBM, 600e9);
  add("A100-80GB", {"A100-SXM4-80GB"}, 80, v1::MEMORY_TYPE_HBM, 600e9);
  add("A100-80GB-PCIE", {"A100-80GB-PCIe"}, 80, v1::MEMORY_TYPE_HBM, 600e9);
  add("A100-40GB", {"A100"}, 40, v1::MEMORY_TYPE_HBM, 600e9);
  add("L4", {}, 24, v1::MEMORY_TYPE_GDDR, 0);
  add("L40S", {}, 48, v1::MEMORY_TYPE_GDDR, 0);
  add("RTX-A6000", {"A6000"}, 48, v1::MEMORY_TYPE_GDDR, 112.5e9);
  add("RTX-6000-ADA", {"RTX6000Ada"}, 48, v1::MEMORY_TYPE_GDDR, 0);
  add("RTX-4090", {"RTX4090"}, 24, v1::MEMORY_TYPE_GDDR, 0);
  add("V100", {}, 16, v1::MEMORY_TYPE_HBM, 300e9);
  add("V100-32GB", {}, 32, v1::MEMORY_TYPE_HBM, 300e9);
  return list;
}

Offer MakeOffer(const std::string& provider, const std::string& type, const std::string& region,
                const std::string& gpu, int count, double on_demand, double spot = 0) {
  Offer offer;
  offer.set_id(absl::StrCat(provider, "/", type, "/", region));
  offer.set_provider(provider);
  offer.set_instance_type(type);
  offer.set_region(region);
  offer.set_gpu_model(gpu);
  offer.set_gpus_per_node(count);
  offer.set_nodes(1);
  offer.set_max_nodes(1);
  offer.set_link(count == 1 ? v1::LINK_TYPE_NONE : v1::LINK_TYPE_NVLINK);
  offer.set_fabric(v1::FABRIC_TYPE_NONE);
  offer.set_on_demand_usd_per_hour(on_demand);
  offer.set_spot_usd_per_hour(spot);
  return offer;
}

CatalogSnapshot TestSnapshot() {
  CatalogSnapshot snapshot;
  snapshot.set_version("test-1");
  *snapshot.mutable_gpus() = TestGpus().gpus();
  *snapshot.add_offers() = MakeOffer("aws", "p5.48xlarge", "us-east-1", "H100", 8, 55.04, 20);
  *snapshot.add_offers() = MakeOffer("aws", "p5.4xlarge", "us-east-1", "H100-SXM", 1, 6.88);
  *snapshot.add_offers() =
      MakeOffer("lambda", "gpu_1x_h100_pcie", "us-east-1", "H100-PCIE", 1, 3.29);
  *snapshot.add_offers() = MakeOffer("gcp", "g2-standard-4", "us-central1", "L4", 1, 0.707, 0.282);
  *snapshot.add_offers() = MakeOffer("gcp", "g2-standard-4", "europe-west4", "L4", 1, 0.78);
  *snapshot.add_offers() = MakeOffer("vast", "1x-RTX_4090", "Texas, US, NA", "rtx 4090", 1, 0.40);
  *snapshot.add_offers() = MakeOffer("runpod", "A6000", "US", "A6000", 1, 0, 0.232);
  Offer a100 =
      MakeOffer("azure", "Standard_ND96amsr_A100_v4", "eastus", "A100-80GB", 8, 32.77, 3.6047);
  a100.set_fabric(v1::FABRIC_TYPE_INFINIBAND);
  a100.set_fabric_gbps(1600);
  a100.set_max_nodes(128);
  *snapshot.add_offers() = a100;
  Offer l40s = MakeOffer("aws", "g6e.48xlarge", "us-east-1", "L40S", 8, 30.13118);
  l40s.set_link(v1::LINK_TYPE_PCIE);
  l40s.set_reserved_usd_per_hour(20);
  *snapshot.add_offers() = l40s;
  return snapshot;
}

std::shared_ptr<const Catalog> MustCreate(CatalogSnapshot snapshot) {
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::Create(std::move(snapshot));
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return catalog.ok() ? *catalog : nullptr;
}

std::vector<std::string> Ids(const ListOffersResponse& response) {
  std::vector<std::string> ids;
  for (const Offer& o : response.offers()) ids.push_back(o.id());
  return ids;
}

// ---------------------------------------------------------------------------
// GpuNameResolver

TEST(GpuNameResolver, TableOfSpellings) {
  const GpuNameResolver resolver(TestGpus());
  const std::pair<const char*, const char*> cases[] = {
      {"H100-SXM", "H100-SXM"},
      {"h100_sxm", "H100-SXM"},
      {"H100", "H100-SXM"},
      {"h100 sxm5", "H100-SXM"},
      {"NVIDIA H100", "H100-SXM"},
      {"H100-80G-SXM5", "H100-SXM"},
      {"H100-MEGA", "H100-SXM"},
      {"H100-80G-PCIe", "H100-PCIE"},
      {"H100-80G-PCIe-NVLink", "H100-PCIE"},
      {"H100_NVL", "H100-NVL"},
      {"A100-80GB", "A100-80GB"},
      {"A100-80G-PCIe", "A100-80GB-PCIE"},
      {"A100-80G-PCIe-NVLink", "A100-80GB-PCIE"},
      {"A100", "A100-40GB"},
      {"a6000", "RTX-A6000"},
      {"RTXA6000", "RTX-A6000"},
      {"RTX-A6000", "RTX-A6000"},
      {"RTX A6000", "RTX-A6000"},
      {"RTX6000-Ada", "RTX-6000-ADA"},
      {"RTX6000Ada", "RTX-6000-ADA"},
      {"RTX4090", "RTX-4090"},
      {"GeForce RTX 4090", "RTX-4090"},
      {"Tesla V100", "V100"},
      {"V100-32GB", "V100-32GB"},
      {"l40s", "L40S"},
  };
  for (const auto& [spelling, canonical] : cases) {
    EXPECT_EQ(resolver.Canonical(spelling), std::optional<std::string>(canonical)) << spelling;
  }
}

TEST(GpuNameResolver, UnknownStaysUnknown) {
  const GpuNameResolver resolver(TestGpus());
  for (const char* name :
       {"RTX6000", "A40", "RTX5090", "", "-", "L40", "RTXPRO6000S", "A4000", "H200", "RTX-A4000"}) {
    EXPECT_EQ(resolver.Canonical(name), std::nullopt) << name;
  }
}

TEST(GpuNameResolver, Families) {
  EXPECT_EQ(GpuFamily("A100-80GB-PCIE"), "A100");
  EXPECT_EQ(GpuFamily("A100-40GB"), "A100");
  EXPECT_EQ(GpuFamily("H100-NVL"), "H100");
  EXPECT_EQ(GpuFamily("V100-32GB"), "V100");
  EXPECT_EQ(GpuFamily("RTX-6000-ADA"), "RTX-6000-ADA");
  EXPECT_EQ(GpuFamily("L40S"), "L40S");
  const GpuNameResolver resolver(TestGpus());
  std::vector<std::string> names;
  for (const auto* f : resolver.Variants("H100-PCIE")) names.push_back(f->name);
  EXPECT_THAT(names, ElementsAre("H100-SXM", "H100-PCIE", "H100-NVL"));
}

// With the real data file, every fixture spelling resolves as SOURCE.md says.
TEST(GpuNameResolver, RealGpuListKnowsFixtureSpellings) {
  GpuList gpus;
  const absl::Status loaded =
      LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &gpus);
  ASSERT_OK(loaded);
  const GpuNameResolver resolver(gpus);
  const std::pair<const char*, const char*> cases[] = {
      {"A100-80GB", "A100-80GB"},      {"A100-80G-PCIe", "A100-80GB-PCIE"},
      {"RTX6000-Ada", "RTX-6000-ADA"}, {"RTX6000Ada", "RTX-6000-ADA"},
      {"A6000", "RTX-A6000"},          {"RTXA6000", "RTX-A6000"},
      {"RTX-A6000", "RTX-A6000"},      {"H100-80G-SXM5", "H100-SXM"},
      {"H100-80G-PCIe", "H100-PCIE"},  {"GAUDI2", "GAUDI2"},
      {"V100-32GB", "V100-32GB"},      {"H100-MEGA", "H100-SXM"},
  };
  for (const auto& [spelling, canonical] : cases) {
    EXPECT_EQ(resolver.Canonical(spelling), std::optional<std::string>(canonical)) << spelling;
  }
  EXPECT_EQ(resolver.Canonical("RTX6000"), std::nullopt);  // Quadro RTX 6000 (Turing)
}

// ---------------------------------------------------------------------------
// Validation: each broken snapshot names the offending field.

struct BadCase {
  const char* name;
  std::function<void(CatalogSnapshot&)> mutate;
  const char* message;
};

TEST(CatalogCreate, ValidationErrorsNameTheField) {
  const BadCase cases[] = {
      {"unknown gpu", [](CatalogSnapshot& s) { s.mutable_offers(3)->set_gpu_model("X"); },
       "offers[3].gpu_model: unknown GPU \"X\""},
      {"duplicate id", [](CatalogSnapshot& s) { s.mutable_offers(2)->set_id(s.offers(0).id()); },
       "offers[2].id: \"aws/p5.48xlarge/us-east-1\" duplicates offers[0]"},
      {"empty id", [](CatalogSnapshot& s) { s.mutable_offers(1)->clear_id(); },
       "offers[1].id: must not be empty"},
      {"zero gpus", [](CatalogSnapshot& s) { s.mutable_offers(0)->set_gpus_per_node(0); },
       "offers[0].gpus_per_node: must be >= 1"},
      {"negative max nodes", [](CatalogSnapshot& s) { s.mutable_offers(0)->set_max_nodes(-1); },
       "offers[0].max_nodes: must be >= 0"},
      {"spot median below its minimum",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->set_spot_usd_per_hour(2);
         s.mutable_offers(0)->set_spot_min_usd_per_hour(3);
       },
       "offers[0].spot_min_usd_per_hour: must be <= spot_usd_per_hour"},
      {"spot median above its maximum",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->set_spot_usd_per_hour(2);
         s.mutable_offers(0)->set_spot_max_usd_per_hour(1);
       },
       "offers[0].spot_max_usd_per_hour: must be >= spot_usd_per_hour"},
      {"scale-up domain larger than the node",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->mutable_scale_up()->set_domain_size(s.offers(0).gpus_per_node() + 1);
       },
       "offers[0].scale_up.domain_size: must be <= gpus_per_node"},
      {"multi-node on no fabric",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->mutable_scale_out()->set_type(v1::FABRIC_TYPE_NONE);
         s.mutable_offers(0)->mutable_scale_out()->set_max_nodes(4);
       },
       "offers[0].scale_out.max_nodes: must be 1 with FABRIC_TYPE_NONE"},
      {"no fabric but multi-node",
       [](CatalogSnapshot& s) { s.mutable_offers(0)->set_max_nodes(4); },
       "offers[0].max_nodes: must be 1 with FABRIC_TYPE_NONE"},
      {"spot date without a spot price",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->set_spot_usd_per_hour(0);
         s.mutable_offers(0)->set_spot_as_of("2024-09-16");
       },
       "offers[0].spot_as_of: set on an offer without a spot price"},
      {"spot source without its date",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->set_spot_usd_per_hour(2);
         s.mutable_offers(0)->set_spot_price_source("C-GCPB");
       },
       "offers[0].spot_as_of: must be set with spot_price_source \"C-GCPB\""},
      {"spot date not a date",
       [](CatalogSnapshot& s) {
         s.mutable_offers(0)->set_spot_usd_per_hour(2);
         s.mutable_offers(0)->set_spot_as_of("March 2026");
       },
       "offers[0].spot_as_of: must be an ISO date (2026-11-29), got \"March 2026\""},
      {"negative price", [](CatalogSnapshot& s) { s.mutable_offers(4)->set_spot_usd_per_hour(-1); },
       "offers[4].spot_usd_per_hour: must be >= 0"},
      {"nan price",
       [](CatalogSnapshot& s) { s.mutable_offers(4)->set_on_demand_usd_per_hour(NAN); },
       "offers[4].on_demand_usd_per_hour: must be finite"},
      {"infinite price",
       [](CatalogSnapshot& s) { s.mutable_offers(4)->set_reserved_usd_per_hour(INFINITY); },
       "offers[4].reserved_usd_per_hour: must be finite"},
      {"no price at all",
       [](CatalogSnapshot& s) { s.mutable_offers(2)->set_on_demand_usd_per_hour(0); },
       "offers[2].on_demand_usd_per_hour: no price"},
      {"bad enum", [](CatalogSnapshot& s) { s.mutable_offers(1)->set_link(v1::LinkType(42)); },
       "offers[1].link: unknown value 42"},
      {"nodes", [](CatalogSnapshot& s) { s.mutable_offers(1)->set_nodes(2); },
       "offers[1].nodes: must be 1 in the catalog"},
      {"gpu memory", [](CatalogSnapshot& s) { s.mutable_gpus(6)->set_memory_bytes(0); },
       "gpus[6].memory_bytes: must be > 0"},
      {"gpu alias clash", [](CatalogSnapshot& s) { s.mutable_gpus(7)->add_aliases("h100"); },
       "gpus[7].aliases[0]: \"h100\" is already a name of H100-SXM"},
      {"gpu name clash", [](CatalogSnapshot& s) { s.mutable_gpus(7)->set_name("L4"); },
       "gpus[7].name: \"L4\" is already a name of L4"},
  };
  for (const BadCase& c : cases) {
    CatalogSnapshot snapshot = TestSnapshot();
    c.mutate(snapshot);
    EXPECT_THAT(Catalog::Create(snapshot),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
}

TEST(CatalogCreate, NormalisesAliasesAndNodes) {
  CatalogSnapshot snapshot = TestSnapshot();
  snapshot.mutable_offers(0)->set_nodes(0);
  std::shared_ptr<const Catalog> catalog = MustCreate(snapshot);
  ASSERT_NE(catalog, nullptr);
  const Offer* p5 = catalog->FindOffer("aws/p5.48xlarge/us-east-1");
  ASSERT_NE(p5, nullptr);
  EXPECT_EQ(p5->gpu_model(), "H100-SXM");
  EXPECT_EQ(p5->nodes(), 1);
  EXPECT_EQ(catalog->FindOffer("vast/1x-RTX_4090/Texas, US, NA")->gpu_model(), "RTX-4090");
  EXPECT_EQ(catalog->FindOffer("nope"), nullptr);
}

// Ids in long sorted runs (imports, refreshed sources), short runs and
// scattered ids (curated files), reversed, one id: OrderById gives the order
// a full sort gives.
TEST(OrderById, MergesSortedRunsIntoTheSortedOrder) {
  auto ids_of = [](const std::vector<std::string>& ids) {
    google::protobuf::RepeatedPtrField<Offer> offers;
    for (const std::string& id : ids) offers.Add()->set_id(id);
    return offers;
  };
  auto check = [&](const std::vector<std::string>& ids) {
    ASSERT_FALSE(ids.empty());
    const google::protobuf::RepeatedPtrField<Offer> offers = ids_of(ids);
    std::vector<int32_t> expected(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) expected[i] = static_cast<int32_t>(i);
    std::sort(expected.begin(), expected.end(),
              [&](int32_t a, int32_t b) { return ids[a] < ids[b]; });
    EXPECT_EQ(OrderById(offers), expected) << ids.size() << " ids from " << ids.front();
  };
  std::vector<std::string> mixed;
  for (int i = 0; i < 300; ++i) mixed.push_back(absl::StrCat("zz/", 7919 * i % 1000));  // scattered
  for (int run = 0; run < 5; ++run) {  // long sorted runs that interleave
    for (int i = 0; i < 700; ++i) mixed.push_back(absl::StrCat("m/", 100000 + i * 7 + run));
  }
  for (int i = 0; i < 40; ++i) mixed.push_back(absl::StrCat("a/", i % 3, "/", i));  // short runs
  check(mixed);
  std::vector<std::string> reversed(mixed.rbegin(), mixed.rend());
  check(reversed);
  std::vector<std::string> sorted = mixed;
  std::sort(sorted.begin(), sorted.end());
  check(sorted);
  check({"only"});
  EXPECT_TRUE(OrderById(ids_of({})).empty());
}

TEST(Catalog, FindGpuByAnyAlias) {
  std::shared_ptr<const Catalog> catalog = MustCreate(TestSnapshot());
  ASSERT_NE(catalog, nullptr);
  for (const char* name : {"H100", "h100-sxm", "H100 SXM5", "NVIDIA H100", "H100_80G_SXM5"}) {
    const Gpu* gpu = catalog->FindGpu(name);
    ASSERT_NE(gpu, nullptr) << name;
    EXPECT_EQ(gpu->name(), "H100-SXM");
  }
  EXPECT_EQ(catalog->FindGpu("A6000")->name(), "RTX-A6000");
  EXPECT_EQ(catalog->FindGpu("MI300X"), nullptr);
  EXPECT_EQ(catalog->OffersForGpu("H100-SXM").size(), 2u);
  EXPECT_TRUE(catalog->OffersForGpu("nope").empty());
}

// ---------------------------------------------------------------------------
// ListOffers

struct FilterCase {
  const char* name;
  std::function<void(ListOffersRequest&)> set;
  std::vector<std::string> ids;  // in id order
};

TEST(CatalogListOffers, Filters) {
  std::shared_ptr<const Catalog> catalog = MustCreate(TestSnapshot());
  ASSERT_NE(catalog, nullptr);
  const FilterCase cases[] = {
      {"gpu aliases",
       [](ListOffersRequest& r) {
         r.add_gpu_models("h100");
         r.add_gpu_models("RTXA6000");
       },
       {"aws/p5.48xlarge/us-east-1", "aws/p5.4xlarge/us-east-1", "runpod/A6000/US"}},
      {"min memory per gpu",
       [](ListOffersRequest& r) { r.set_min_gpu_memory_bytes(48'000'000'000); },
       {"aws/g6e.48xlarge/us-east-1", "aws/p5.48xlarge/us-east-1", "aws/p5.4xlarge/us-east-1",
        "azure/Standard_ND96amsr_A100_v4/eastus", "lambda/gpu_1x_h100_pcie/us-east-1",
        "runpod/A6000/US"}},
      {"gpu count range",
       [](ListOffersRequest& r) {
         r.set_min_gpus(2);
         r.set_max_gpus(8);
       },
       {"aws/g6e.48xlarge/us-east-1", "aws/p5.48xlarge/us-east-1",
        "azure/Standard_ND96amsr_A100_v4/eastus"}},
      {"providers ignore case",
       [](ListOffersRequest& r) {
         r.add_providers("GCP");
         r.add_providers("vast");
       },
       {"gcp/g2-standard-4/europe-west4", "gcp/g2-standard-4/us-central1",
        "vast/1x-RTX_4090/Texas, US, NA"}},
      {"regions",
       [](ListOffersRequest& r) { r.add_regions("europe-west4"); },
       {"gcp/g2-standard-4/europe-west4"}},
      {"links",
       [](ListOffersRequest& r) { r.add_links(v1::LINK_TYPE_PCIE); },
       {"aws/g6e.48xlarge/us-east-1"}},
      {"fabrics",
       [](ListOffersRequest& r) { r.add_fabrics(v1::FABRIC_TYPE_INFINIBAND); },
       {"azure/Standard_ND96amsr_A100_v4/eastus"}},
      {"spot only",
       [](ListOffersRequest& r) { r.set_purchase_option(v1::PURCHASE_OPTION_SPOT); },
       {"aws/p5.48xlarge/us-east-1", "azure/Standard_ND96amsr_A100_v4/eastus",
        "gcp/g2-standard-4/us-central1", "runpod/A6000/US"}},
      {"reserved only",
       [](ListOffersRequest& r) { r.set_purchase_option(v1::PURCHASE_OPTION_RESERVED); },
       {"aws/g6e.48xlarge/us-east-1"}},
      {"max price on demand",
       [](ListOffersRequest& r) {
         r.set_purchase_option(v1::PURCHASE_OPTION_ON_DEMAND);
         r.set_max_usd_per_hour(0.75);
       },
       {"gcp/g2-standard-4/us-central1", "vast/1x-RTX_4090/Texas, US, NA"}},
      {"max price any option uses the cheapest",
       [](ListOffersRequest& r) { r.set_max_usd_per_hour(4); },
       {"azure/Standard_ND96amsr_A100_v4/eastus", "gcp/g2-standard-4/europe-west4",
        "gcp/g2-standard-4/us-central1", "lambda/gpu_1x_h100_pcie/us-east-1", "runpod/A6000/US",
        "vast/1x-RTX_4090/Texas, US, NA"}},
      {"combined",
       [](ListOffersRequest& r) {
         r.add_gpu_models("H100-SXM");
         r.set_min_gpus(8);
         r.add_fabrics(v1::FABRIC_TYPE_NONE);
         r.set_purchase_option(v1::PURCHASE_OPTION_SPOT);
         r.set_max_usd_per_hour(25);
       },
       {"aws/p5.48xlarge/us-east-1"}},
  };
  for (const FilterCase& c : cases) {
    ListOffersRequest request;
    c.set(request);
    absl::StatusOr<ListOffersResponse> response = catalog->ListOffers(request);
    ASSERT_TRUE(response.ok()) << c.name << ": " << response.status();
    EXPECT_EQ(Ids(*response), c.ids) << c.name;
    EXPECT_EQ(response->total_size(), static_cast<int>(c.ids.size())) << c.name;
    EXPECT_EQ(response->catalog_version(), "test-1");
    EXPECT_TRUE(response->next_page_token().empty()) << c.name;
  }
}

TEST(CatalogListOffers, BadArgumentsNameTheField) {
  std::shared_ptr<const Catalog> catalog = MustCreate(TestSnapshot());
  ASSERT_NE(catalog, nullptr);
  const std::pair<std::function<void(ListOffersRequest&)>, const char*> cases[] = {
      {[](ListOffersRequest& r) { r.set_page_size(-1); }, "page_size"},
      {[](ListOffersRequest& r) { r.set_min_gpus(-1); }, "min_gpus"},
      {[](ListOffersRequest& r) { r.set_max_gpus(-2); }, "max_gpus"},
      {[](ListOffersRequest& r) {
         r.set_min_gpus(4);
         r.set_max_gpus(2);
       },
       "max_gpus: must be >= min_gpus"},
      {[](ListOffersRequest& r) { r.set_min_gpu_memory_bytes(-5); }, "min_gpu_memory_bytes"},
      {[](ListOffersRequest& r) { r.set_max_usd_per_hour(-1); }, "max_usd_per_hour"},
      {[](ListOffersRequest& r) { r.set_max_usd_per_hour(NAN); }, "max_usd_per_hour"},
      {[](ListOffersRequest& r) {
         r.add_gpu_models("H100");
         r.add_gpu_models("TPU-v5");
       },
       "gpu_models[1]: unknown GPU \"TPU-v5\""},
      {[](ListOffersRequest& r) { r.set_page_token("not a token!"); }, "page_token: malformed"},
      {[](ListOffersRequest& r) { r.set_page_token("MXxhYmN8"); }, "page_token: malformed"},
      {[](ListOffersRequest& r) { r.add_links(v1::LinkType(77)); }, "links"},
  };
  for (const auto& [set, message] : cases) {
    ListOffersRequest request;
    set(request);
    EXPECT_THAT(catalog->ListOffers(request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << message;
  }
}

// A catalog of `n` offers over a few GPUs, providers and regions.
CatalogSnapshot BigSnapshot(int n) {
  CatalogSnapshot snapshot;
  snapshot.set_version("big");
  *snapshot.mutable_gpus() = TestGpus().gpus();
  const char* gpus[] = {"H100", "A100", "L4", "L40S", "RTX4090", "A6000"};
  const char* providers[] = {"aws", "gcp", "azure", "lambda", "vast"};
  for (int i = 0; i < n; ++i) {
    Offer offer =
        MakeOffer(providers[i % 5], absl::StrCat("type-", i % 97), absl::StrCat("region-", i / 97),
                  gpus[i % 6], 1 << (i % 4), 0.5 + (i % 50));
    if (i % 3 == 0) offer.set_spot_usd_per_hour(0.2 + (i % 20));
    *snapshot.add_offers() = offer;
  }
  return snapshot;
}

TEST(CatalogListOffers, PaginationReturnsEachOfferExactlyOnce) {
  std::shared_ptr<const Catalog> catalog = MustCreate(BigSnapshot(2500));
  ASSERT_NE(catalog, nullptr);
  for (int page_size : {0, 1, 7, 100, 999, 1000, 5000}) {
    for (bool filtered : {false, true}) {
      ListOffersRequest request;
      request.set_page_size(page_size);
      if (filtered) {
        request.add_gpu_models("H100");
        request.add_gpu_models("L4");
        request.set_purchase_option(v1::PURCHASE_OPTION_SPOT);
      }
      const int expected_page = page_size == 0 ? 100 : std::min(page_size, 1000);
      std::vector<std::string> seen;
      int total = -1;
      int pages = 0;
      while (true) {
        absl::StatusOr<ListOffersResponse> response = catalog->ListOffers(request);
        ASSERT_TRUE(response.ok()) << response.status();
        ++pages;
        if (total < 0) total = response->total_size();
        EXPECT_EQ(response->total_size(), total);
        EXPECT_LE(response->offers_size(), expected_page);
        for (const Offer& o : response->offers()) seen.push_back(o.id());
        if (response->next_page_token().empty()) break;
        EXPECT_EQ(response->offers_size(), expected_page);
        request.set_page_token(response->next_page_token());
        ASSERT_LT(pages, 3000);
      }
      EXPECT_EQ(static_cast<int>(seen.size()), total) << page_size;
      EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
      EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
      EXPECT_EQ(total, filtered ? 417 : 2500) << "page_size " << page_size;
    }
  }
}

TEST(CatalogListOffers, TokenIsBoundToTheFilters) {
  std::shared_ptr<const Catalog> catalog = MustCreate(BigSnapshot(300));
  ASSERT_NE(catalog, nullptr);
  ListOffersRequest request;
  request.set_page_size(10);
  absl::StatusOr<ListOffersResponse> first = catalog->ListOffers(request);
  ASSERT_OK(first);
  ASSERT_FALSE(first->next_page_token().empty());
  request.set_page_token(first->next_page_token());
  request.add_providers("aws");
  EXPECT_THAT(catalog->ListOffers(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("different filters")));
}

TEST(CatalogListOffers, TokenSurvivesANewCatalogVersion) {
  CatalogSnapshot snapshot = BigSnapshot(50);
  std::shared_ptr<const Catalog> old_catalog = MustCreate(snapshot);
  ListOffersRequest request;
  request.set_page_size(20);
  absl::StatusOr<ListOffersResponse> first = old_catalog->ListOffers(request);
  ASSERT_OK(first);
  // The next version drops an offer from the first page and adds one after it.
  snapshot.mutable_offers()->DeleteSubrange(0, 1);
  *snapshot.add_offers() = MakeOffer("zzz", "x", "y", "L4", 1, 1);
  std::shared_ptr<const Catalog> new_catalog = MustCreate(snapshot);
  request.set_page_token(first->next_page_token());
  std::set<std::string> seen;
  for (const Offer& o : first->offers()) seen.insert(o.id());
  while (true) {
    absl::StatusOr<ListOffersResponse> page = new_catalog->ListOffers(request);
    ASSERT_OK(page);
    for (const Offer& o : page->offers()) EXPECT_TRUE(seen.insert(o.id()).second) << o.id();
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(seen.size(), 51u);
  EXPECT_TRUE(seen.count("zzz/x/y"));
}

// Indexing and filtering at 10k offers; their speed is measured in
// bench/catalog_pricing_bench.cc, not here.
TEST(CatalogAtScale, TenThousandOffersIndexedAndFiltered) {
  std::shared_ptr<const Catalog> catalog = MustCreate(BigSnapshot(10000));
  ASSERT_NE(catalog, nullptr);
  ListOffersRequest request;
  request.add_gpu_models("H100");
  request.set_max_usd_per_hour(20);
  absl::StatusOr<ListOffersResponse> response = catalog->ListOffers(request);
  ASSERT_OK(response);
  ASSERT_EQ(response->offers_size(), 100);  // the default page
  for (const Offer& offer : response->offers()) {
    EXPECT_EQ(offer.gpu_model(), "H100-SXM");  // "H100" is an alias
    // Sold at 20 USD/h or less in some way (on demand or spot).
    const bool spot_under = offer.spot_usd_per_hour() > 0 && offer.spot_usd_per_hour() <= 20;
    EXPECT_TRUE(offer.on_demand_usd_per_hour() <= 20 || spot_under) << offer.id();
  }
}

}  // namespace
}  // namespace gpuadvisor::catalog
