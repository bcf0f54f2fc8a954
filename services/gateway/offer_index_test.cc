#include "services/gateway/offer_index.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

std::shared_ptr<const catalog::Catalog> ThreeOffers(const std::string& version = "v") {
  catalog::v1::CatalogSnapshot s;
  s.set_version(version);
  catalog::v1::Gpu* gpu = s.add_gpus();
  gpu->set_name("H100-SXM");
  gpu->add_aliases("H100");
  gpu->set_memory_bytes(80'000'000'000);
  auto offer = [&](const std::string& id, const std::string& provider, const std::string& region,
                   catalog::v1::FabricType fabric, int max_nodes, double reserved) {
    catalog::v1::Offer* o = s.add_offers();
    o->set_id(id);
    o->set_provider(provider);
    o->set_instance_type("p5");
    o->set_region(region);
    o->set_gpu_model("H100-SXM");
    o->set_gpus_per_node(8);
    o->set_nodes(1);
    o->set_link(catalog::v1::LINK_TYPE_NVLINK);
    o->set_link_bytes_per_second(900e9);
    o->set_fabric(fabric);
    o->set_fabric_gbps(fabric == catalog::v1::FABRIC_TYPE_NONE ? 0 : 3200);
    o->set_max_nodes(max_nodes);
    o->set_on_demand_usd_per_hour(55);
    o->set_reserved_usd_per_hour(reserved);
  };
  offer("aws/p5/us-east-1", "aws", "us-east-1", catalog::v1::FABRIC_TYPE_EFA, 64, 39);
  offer("aws/p5/us-west-2", "aws", "us-west-2", catalog::v1::FABRIC_TYPE_EFA, 64, 0);
  offer("lambda/p5/us-east-1", "lambda", "us-east-1", catalog::v1::FABRIC_TYPE_NONE, 1, 0);
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

TEST(OfferIndex, GroupsOffersByShapeAndInternsNames) {
  const OfferIndex index(ThreeOffers());
  ASSERT_EQ(index.offers().size(), 3u);
  EXPECT_EQ(index.shapes().size(), 2u);  // with EFA, and single-node
  std::map<std::string, const OfferFacts*> by_id;
  for (size_t i = 0; i < index.offers().size(); ++i) {
    by_id[index.catalog().snapshot().offers(static_cast<int>(i)).id()] = &index.offers()[i];
  }
  EXPECT_EQ(by_id["aws/p5/us-east-1"]->shape, by_id["aws/p5/us-west-2"]->shape);
  EXPECT_NE(by_id["aws/p5/us-east-1"]->shape, by_id["lambda/p5/us-east-1"]->shape);
  EXPECT_EQ(by_id["aws/p5/us-east-1"]->max_nodes, 64);
  EXPECT_EQ(by_id["lambda/p5/us-east-1"]->max_nodes, 1);
  EXPECT_EQ(by_id["aws/p5/us-east-1"]->region, by_id["lambda/p5/us-east-1"]->region);
  EXPECT_EQ(index.providers(), 2);
  EXPECT_EQ(index.regions(), 2);
}

// An instance type's offers share a kind when they differ only in region
// and price; a type with a region unlike the others, or two offers in one
// region, has none, and neither has an offer whose availability is dated.
TEST(OfferIndex, KindsAreInstanceTypesSoldAlikeInEachRegion) {
  const OfferIndex three(ThreeOffers());
  EXPECT_GE(three.kind(0), 0);
  EXPECT_EQ(three.kind(0), three.kind(1));  // aws p5 in two regions
  EXPECT_GE(three.kind(2), 0);
  EXPECT_NE(three.kind(0), three.kind(2));  // lambda's p5

  catalog::v1::CatalogSnapshot s = ThreeOffers()->snapshot();
  catalog::v1::Offer limited = s.offers(0);
  limited.set_id("aws/p5/eu-west-1");
  limited.set_region("eu-west-1");
  limited.set_availability(catalog::v1::AVAILABILITY_LIMITED);
  *s.add_offers() = limited;
  catalog::v1::Offer twice = s.offers(2);
  twice.set_id("lambda/p5/us-east-1b");
  *s.add_offers() = twice;
  s.mutable_offers(1)->set_last_seen_available_unix_seconds(1);
  s.mutable_offers(1)->set_stale_after_seconds(60);
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  ASSERT_OK(catalog);
  const OfferIndex index(*catalog);
  ASSERT_EQ(index.offers().size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(index.kind(i), -1) << i;
}

TEST(OfferIndex, IdsAndOffersByRegion) {
  const OfferIndex index(ThreeOffers());
  ASSERT_EQ(index.offers().size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(index.id(i), index.catalog().snapshot().offers(i).id());
  const int east = index.RegionId("us-east-1");
  ASSERT_GE(east, 0);
  EXPECT_THAT(index.OffersOfRegion(east), ::testing::ElementsAre(0, 2));
  EXPECT_THAT(index.OffersOfRegion(index.RegionId("us-west-2")), ::testing::ElementsAre(1));
  ASSERT_FALSE(index.shapes().empty());
  for (const OfferShape& shape : index.shapes()) EXPECT_EQ(shape.gpu, index.GpuId(shape.gpu_model));
}

TEST(OfferIndex, ReservedFallsBackToOnDemandForPricingToDiscount) {
  const OfferIndex index(ThreeOffers());
  double published = 0, fallback = 0;
  for (size_t i = 0; i < index.offers().size(); ++i) {
    const std::string& id = index.catalog().snapshot().offers(static_cast<int>(i)).id();
    if (id == "aws/p5/us-east-1") published = index.offers()[i].reserved_usd_per_hour;
    if (id == "aws/p5/us-west-2") fallback = index.offers()[i].reserved_usd_per_hour;
  }
  EXPECT_EQ(published, 39);
  EXPECT_EQ(fallback, 55);
}

TEST(OfferIndex, LooksUpNamesAndGpuAliases) {
  const OfferIndex index(ThreeOffers());
  EXPECT_GE(index.ProviderId("lambda"), 0);
  EXPECT_EQ(index.ProviderId("gcp"), -1);
  EXPECT_EQ(index.GpuId("H100"), index.GpuId("H100-SXM"));
  EXPECT_GE(index.GpuId("H100"), 0);
  EXPECT_EQ(index.GpuId("T4"), -1);
}

TEST(OfferIndexCache, RebuildsOnlyForANewCatalog) {
  OfferIndexCache cache;
  EXPECT_EQ(cache.Get(nullptr), nullptr);
  std::shared_ptr<const catalog::Catalog> first = ThreeOffers();
  std::shared_ptr<const OfferIndex> a = cache.Get(first);
  EXPECT_EQ(cache.Get(first), a);
  std::shared_ptr<const OfferIndex> b = cache.Get(ThreeOffers());
  EXPECT_NE(b, a);
  EXPECT_EQ(&a->catalog(), first.get());  // a request holding the old index keeps its catalog
}

TEST(OfferIndexCache, GetReturnsTheIndexPreparedBeforeTheSwap) {
  OfferIndexCache cache;
  std::shared_ptr<const catalog::Catalog> first = ThreeOffers();
  cache.Prepare(first);
  std::shared_ptr<const OfferIndex> prepared = cache.Get(first);
  ASSERT_NE(prepared, nullptr);
  EXPECT_EQ(&prepared->catalog(), first.get());
  cache.Prepare(first);  // already indexed: kept as it is
  EXPECT_EQ(cache.Get(first), prepared);
  cache.Prepare(nullptr);
  EXPECT_EQ(cache.Get(first), prepared);
}

// After a swap the replica holds the new catalog before the local price book
// for it has arrived: answers come from the previous catalog (and its book)
// until the new version is priced, then from the new one only.
TEST(OfferIndexCache, AnswersFromThePreviousCatalogUntilTheNewOneIsPriced) {
  OfferIndexCache cache;
  std::shared_ptr<const catalog::Catalog> v1 = ThreeOffers("v1");
  std::shared_ptr<const catalog::Catalog> v2 = ThreeOffers("v2");
  std::set<std::string> priced = {"v1"};  // the versions the local book copy holds
  const OfferIndexCache::Priced is_priced = [&](const std::string& version) {
    return priced.count(version) > 0;
  };
  auto answered_from = [&](const std::shared_ptr<const catalog::Catalog>& current) {
    return cache.Get(current, is_priced)->catalog().snapshot().version();
  };
  cache.Prepare(v1);
  EXPECT_EQ(answered_from(v1), "v1");
  cache.Prepare(v2);
  EXPECT_EQ(answered_from(v1), "v1");  // prepared, not swapped in yet
  EXPECT_EQ(answered_from(v2), "v1");  // swapped in, its book not here yet
  priced = {};                         // neither priced (the copy went stale)
  EXPECT_EQ(answered_from(v2), "v2");  // the newest: its answers ask pricing's Quote
  priced = {"v1", "v2"};
  EXPECT_EQ(answered_from(v2), "v2");
  priced = {"v1"};  // v1's index was dropped once v2 was priced
  EXPECT_EQ(answered_from(v2), "v2");
  EXPECT_EQ(cache.Get(v2)->catalog().snapshot().version(), "v2");  // no books at all
}

// The topology the catalog states per offer reaches sizing: the embedded data
// (topology.textproto applied) through the index into a GpuConfiguration.
TEST(OfferIndex, PassesTheOfferTopologyIntoTheSizingConfiguration) {
  absl::StatusOr<catalog::v1::CatalogSnapshot> snapshot = catalog::LoadCatalogSnapshot(
      catalog::CatalogSourcesFor(GPUADVISOR_SOURCE_DIR "/data", "", ""));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
      catalog::Catalog::Create(*snapshot);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const OfferIndex index(*catalog);
  auto config_of = [&](const std::string& id, int nodes) {
    sizing::v1::GpuConfiguration config;
    for (size_t i = 0; i < index.offers().size(); ++i) {
      if (index.catalog().snapshot().offers(static_cast<int>(i)).id() == id) {
        index.shapes()[static_cast<size_t>(index.offers()[i].shape)].FillConfiguration(nodes,
                                                                                       &config);
      }
    }
    return config;
  };
  const sizing::v1::GpuConfiguration p5 = config_of("aws/p5.48xlarge/us-east-1", 4);
  EXPECT_EQ(p5.gpu_model(), "H100-SXM");
  EXPECT_EQ(p5.nodes(), 4);
  EXPECT_EQ(p5.scale_up().kind(), catalog::v1::SCALE_UP_KIND_NVSWITCH);
  EXPECT_EQ(p5.scale_up().domain_size(), 8);
  EXPECT_EQ(p5.scale_out().type(), catalog::v1::FABRIC_TYPE_EFA);
  EXPECT_EQ(p5.scale_out().gbps_per_node(), 3200);
  EXPECT_EQ(p5.scale_out().max_nodes(), 64);
  EXPECT_EQ(p5.fabric_gbps(), 3200);
  // The offer's host link (PCIe Gen5 x16, one way) goes to sizing; T4 is Gen3.
  ASSERT_TRUE(p5.has_host_link_bytes_per_second());
  EXPECT_EQ(p5.host_link_bytes_per_second(), 64e9);
  EXPECT_EQ(config_of("aws/g4dn.xlarge/us-east-1", 1).host_link_bytes_per_second(), 16e9);

  const sizing::v1::GpuConfiguration pairs = config_of("hyperstack/n3-H100x8-NVLink/CANADA-1", 1);
  EXPECT_EQ(pairs.scale_up().kind(), catalog::v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS);
  EXPECT_EQ(pairs.scale_up().domain_size(), 2);
  EXPECT_GT(pairs.scale_up().cross_domain_bytes_per_second_per_gpu(), 0);

  // Same GPU, count and legacy link but another topology: another shape.
  int bridged = -1, plain = -1;
  for (size_t i = 0; i < index.offers().size(); ++i) {
    const std::string& id = index.catalog().snapshot().offers(static_cast<int>(i)).id();
    if (id == "hyperstack/n3-H100x8-NVLink/CANADA-1") bridged = index.offers()[i].shape;
    if (id == "hyperstack/n3-H100x8/CANADA-1") plain = index.offers()[i].shape;
  }
  ASSERT_GE(bridged, 0);
  ASSERT_GE(plain, 0);
  EXPECT_NE(bridged, plain);
}

// A provider's (a region's) cell parts hold exactly its offers, each part
// one cell's, and each part's by-price list is its cell's by_price order
// restricted to the part: what a name-filtered request streams.
TEST(OfferIndex, CellPartsAreTheCellsRestrictedToOneProviderOrRegion) {
  catalog::CatalogSources sources;
  sources.gpus_path = GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto";
  sources.offer_paths = {GPUADVISOR_SOURCE_DIR "/data/catalog/offers.textproto"};
  absl::StatusOr<catalog::v1::CatalogSnapshot> snapshot = catalog::LoadCatalogSnapshot(sources);
  ASSERT_OK(snapshot);
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
      catalog::Catalog::Create(*std::move(snapshot));
  ASSERT_OK(catalog);
  const OfferIndex index(*catalog);
  ASSERT_GT(index.providers(), 1);
  ASSERT_GT(index.regions(), 1);
  for (const bool by_region : {false, true}) {
    SCOPED_TRACE(by_region ? "regions" : "providers");
    std::vector<int> seen(index.offers().size(), 0);
    int parts = 0;
    for (int id = 0; id < (by_region ? index.regions() : index.providers()); ++id) {
      int previous_cell = -1;
      for (const CellPart& part :
           by_region ? index.CellPartsOfRegion(id) : index.CellPartsOfProvider(id)) {
        ++parts;
        EXPECT_GT(part.cell, previous_cell);  // by cell, one part per cell
        previous_cell = part.cell;
        const OfferCell& cell = index.cells()[part.cell];
        std::vector<int32_t> expected;
        for (int32_t offer : cell.offers) {
          if ((by_region ? index.offers()[offer].region : index.offers()[offer].provider) == id) {
            expected.push_back(offer);
          }
        }
        ASSERT_THAT(expected, ::testing::Not(::testing::IsEmpty()));
        const absl::Span<const int32_t> offers = index.PartOffers(part, by_region);
        EXPECT_EQ(std::vector<int32_t>(offers.begin(), offers.end()), expected);
        EXPECT_EQ(part.count, static_cast<int>(expected.size()));
        EXPECT_EQ(part.first, expected.front());
        for (int32_t offer : expected) ++seen[offer];
        for (int slot = 0; slot < 3; ++slot) {
          std::vector<int32_t> by_price;
          for (int32_t offer : cell.by_price[slot]) {
            if (std::find(expected.begin(), expected.end(), offer) != expected.end())
              by_price.push_back(offer);
          }
          const absl::Span<const int32_t> got = index.PartByPrice(part, slot, by_region);
          EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), by_price) << "slot " << slot;
          EXPECT_EQ(cell.price[slot].size(), cell.by_price[slot].size());
        }
      }
    }
    EXPECT_GT(parts, 1);
    EXPECT_THAT(seen, ::testing::Each(1));  // every offer in exactly one part
  }
}

}  // namespace
}  // namespace gpuadvisor::gateway
