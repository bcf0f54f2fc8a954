// The replica's cache file: written whole with a header (offers, GPUs, bytes,
// checksum), and an empty, cut or corrupt cache is never served.

#include "services/catalog/catalog_replica.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

v1::CatalogSnapshot EmbeddedSnapshot() {
  CatalogSources sources;
  sources.gpus_path = absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/gpus.textproto");
  sources.offer_paths = {absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/offers.textproto")};
  absl::StatusOr<v1::CatalogSnapshot> snapshot = LoadCatalogSnapshot(sources);
  EXPECT_OK(snapshot);
  return *snapshot;
}

std::string CachePath() {
  return absl::StrCat(::testing::TempDir(), "/replica_test_",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".",
                      getpid(), ".cache");
}

// A replica whose catalog service is unreachable: it has only its cache.
struct OfflineReplica {
  explicit OfflineReplica(const std::string& cache) {
    CatalogReplica::Options options;
    options.cache_path = cache;
    options.on_rejected = [this](const absl::Status&) { ++rejected; };
    replica =
        std::make_unique<CatalogReplica>(v1::CatalogService::NewStub(grpc::CreateChannel(
                                             "127.0.0.1:1", grpc::InsecureChannelCredentials())),
                                         options);
    replica->Start();
  }
  std::atomic<int> rejected{0};
  std::unique_ptr<CatalogReplica> replica;
};

TEST(CatalogReplicaCache, RoundTripsWithCountsAndChecksum) {
  const v1::CatalogSnapshot snapshot = EmbeddedSnapshot();
  ASSERT_GT(snapshot.offers_size(), 10);
  const std::string encoded = CatalogReplica::EncodeCache(snapshot);
  EXPECT_THAT(encoded.substr(0, encoded.find('\n')),
              HasSubstr(absl::StrCat("offers=", snapshot.offers_size())));
  absl::StatusOr<v1::CatalogSnapshot> decoded = CatalogReplica::DecodeCache(encoded);
  ASSERT_OK(decoded);
  EXPECT_EQ(decoded->offers_size(), snapshot.offers_size());
  EXPECT_EQ(decoded->version(), snapshot.version());
}

TEST(CatalogReplicaCache, EmptyCutOrCorruptCachesAreRejected) {
  v1::CatalogSnapshot snapshot = EmbeddedSnapshot();
  const std::string encoded = CatalogReplica::EncodeCache(snapshot);
  EXPECT_THAT(CatalogReplica::DecodeCache(""),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("empty")));
  // Cut anywhere in the body, including at an offer boundary.
  EXPECT_THAT(CatalogReplica::DecodeCache(encoded.substr(0, encoded.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated")));
  v1::CatalogSnapshot half = snapshot;
  half.mutable_offers()->DeleteSubrange(half.offers_size() / 2,
                                        half.offers_size() - half.offers_size() / 2);
  std::string half_body;
  half.SerializeToString(&half_body);
  const std::string header = encoded.substr(0, encoded.find('\n') + 1);
  EXPECT_THAT(CatalogReplica::DecodeCache(header + half_body),
              StatusIs(absl::StatusCode::kDataLoss));
  // The old format (bare snapshot bytes) cut at an offer boundary parses as a
  // smaller catalog under the full catalog's version; it is refused.
  EXPECT_THAT(CatalogReplica::DecodeCache(half_body), StatusIs(absl::StatusCode::kDataLoss));
  // One flipped byte.
  std::string flipped = encoded;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_THAT(CatalogReplica::DecodeCache(flipped), StatusIs(absl::StatusCode::kDataLoss));
}

// Before: a 0-byte cache parsed as an empty snapshot, the gateway reported
// SERVING and answered every Recommend with INVALID_ARGUMENT.
TEST(CatalogReplicaCache, ReplicaIgnoresAnEmptyCache) {
  const std::string path = CachePath();
  ASSERT_OK(WriteFileAtomically(path, ""));
  OfflineReplica offline(path);
  EXPECT_FALSE(offline.replica->WaitUntilLoaded(absl::Milliseconds(300)));
  EXPECT_EQ(offline.replica->Current(), nullptr);
  EXPECT_EQ(offline.rejected.load(), 1);
}

TEST(CatalogReplicaCache, ReplicaIgnoresACacheCutAtAnOfferBoundary) {
  v1::CatalogSnapshot half = EmbeddedSnapshot();
  half.mutable_offers()->DeleteSubrange(half.offers_size() / 2,
                                        half.offers_size() - half.offers_size() / 2);
  std::string bare;
  half.SerializeToString(&bare);
  const std::string path = CachePath();
  ASSERT_OK(WriteFileAtomically(path, bare));
  OfflineReplica offline(path);
  EXPECT_FALSE(offline.replica->WaitUntilLoaded(absl::Milliseconds(300)));
  EXPECT_EQ(offline.replica->Current(), nullptr);
}

TEST(CatalogReplicaCache, ReplicaServesAWholeCache) {
  const v1::CatalogSnapshot snapshot = EmbeddedSnapshot();
  const std::string path = CachePath();
  ASSERT_OK(WriteFileAtomically(path, CatalogReplica::EncodeCache(snapshot)));
  OfflineReplica offline(path);
  ASSERT_TRUE(offline.replica->WaitUntilLoaded(absl::Seconds(5)));
  EXPECT_EQ(offline.replica->Current()->snapshot().offers_size(), snapshot.offers_size());
  EXPECT_EQ(offline.rejected.load(), 0);
}

}  // namespace
}  // namespace gpuadvisor::catalog
