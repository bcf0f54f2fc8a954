#include "services/gateway/response_cache.h"

#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::gateway {
namespace {

v1::RecommendRequest Request(const std::string& preset, int max_results) {
  v1::RecommendRequest request;
  request.mutable_workload()->mutable_model()->set_preset(preset);
  request.set_max_results(max_results);
  return request;
}

v1::RecommendResponse Response(const std::string& catalog, const std::string& prices,
                               int candidates) {
  v1::RecommendResponse response;
  response.set_catalog_version(catalog);
  response.set_price_book_version(prices);
  response.set_candidates_considered(candidates);
  return response;
}

std::shared_ptr<const EncodedAnswer> Answer(const std::string& catalog, const std::string& prices,
                                            int candidates) {
  return std::make_shared<const EncodedAnswer>(
      EncodedAnswer::From(Response(catalog, prices, candidates)));
}

// What a client parses from the bytes the gateway sends.
v1::RecommendResponse Received(const EncodedAnswer& answer, int64_t price_book_age,
                               int64_t catalog_age) {
  grpc::ByteBuffer sent = answer.Send(price_book_age, catalog_age);
  grpc::Slice whole;
  EXPECT_TRUE(sent.DumpToSingleSlice(&whole).ok());
  v1::RecommendResponse response;
  EXPECT_TRUE(response.ParseFromArray(whole.begin(), static_cast<int>(whole.size())));
  return response;
}

TEST(EncodedAnswer, SendsTheAnswerWithTheAgesOfThisCall) {
  v1::RecommendResponse response = Response("c1", "p1", 42);
  response.add_recommendations()->mutable_offer()->set_id("lambda/gpu_1x_h100_sxm5/us-east-1");
  response.set_price_book_age_seconds(7);
  response.set_catalog_age_seconds(3);
  const EncodedAnswer encoded = EncodedAnswer::From(response);
  EXPECT_EQ(encoded.price_book_age_seconds, 7);
  EXPECT_FALSE(encoded.empty);
  v1::RecommendResponse received = Received(encoded, 9, 4);
  EXPECT_EQ(received.price_book_age_seconds(), 9);
  EXPECT_EQ(received.catalog_age_seconds(), 4);
  received.set_price_book_age_seconds(7);
  received.set_catalog_age_seconds(3);
  EXPECT_EQ(received.SerializeAsString(), response.SerializeAsString());  // nothing else changed
  // Ages of zero are absent, as in any proto3 encoding.
  EXPECT_EQ(Received(encoded, 0, 0).price_book_age_seconds(), 0);
  EXPECT_TRUE(EncodedAnswer::From(Response("c1", "p1", 0)).empty);
}

TEST(ResponseCacheKey, EqualRequestsShareAKeyAndEveryVersionOrFieldSeparatesThem) {
  const std::string key = ResponseCache::Key(Request("llama-3.1-8b", 5), "c1", "p1");
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(key, ResponseCache::Key(Request("llama-3.1-8b", 5), "c1", "p1"));
  EXPECT_NE(key, ResponseCache::Key(Request("llama-3.1-8b", 6), "c1", "p1"));
  EXPECT_NE(key, ResponseCache::Key(Request("llama-3.1-70b", 5), "c1", "p1"));
  EXPECT_NE(key, ResponseCache::Key(Request("llama-3.1-8b", 5), "c2", "p1"));
  EXPECT_NE(key, ResponseCache::Key(Request("llama-3.1-8b", 5), "c1", "p2"));
  // Version strings cannot run into each other ("c1"+"1p" vs "c11"+"p").
  EXPECT_NE(ResponseCache::Key(Request("m", 1), "c1", "1p"),
            ResponseCache::Key(Request("m", 1), "c11", "p"));
}

TEST(ResponseCacheKey, UnknownVersionMeansNoKey) {
  EXPECT_EQ(ResponseCache::Key(Request("m", 1), "", "p1"), "");
  EXPECT_EQ(ResponseCache::Key(Request("m", 1), "c1", ""), "");
}

TEST(ResponseCache, ReturnsWhatWasStoredUnderTheSameVersions) {
  ResponseCache cache({.max_entries = 8});
  const std::string key = ResponseCache::Key(Request("m", 1), "c1", "p1");
  EXPECT_EQ(cache.Lookup(key).response, nullptr);
  const absl::Time stored = absl::Now();
  cache.Insert(key, "c1", "p1", Answer("c1", "p1", 42), stored);
  ResponseCache::Hit hit = cache.Lookup(key);
  ASSERT_NE(hit.response, nullptr);
  EXPECT_EQ(Received(*hit.response, 0, 0).candidates_considered(), 42);
  EXPECT_EQ(hit.stored_at, stored);
  EXPECT_EQ(cache.Lookup("").response, nullptr);
}

TEST(ResponseCache, ANewVersionDropsEveryOlderEntry) {
  ResponseCache cache({.max_entries = 8});
  const std::string old_a = ResponseCache::Key(Request("a", 1), "c1", "p1");
  const std::string old_b = ResponseCache::Key(Request("b", 1), "c1", "p1");
  cache.Insert(old_a, "c1", "p1", Answer("c1", "p1", 1), absl::Now());
  cache.Insert(old_b, "c1", "p1", Answer("c1", "p1", 2), absl::Now());
  ASSERT_EQ(cache.size(), 2u);
  const std::string fresh = ResponseCache::Key(Request("a", 1), "c1", "p2");
  cache.Insert(fresh, "c1", "p2", Answer("c1", "p2", 3), absl::Now());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Lookup(old_a).response, nullptr);
  ASSERT_NE(cache.Lookup(fresh).response, nullptr);
  EXPECT_EQ(Received(*cache.Lookup(fresh).response, 0, 0).candidates_considered(), 3);
}

TEST(ResponseCache, EvictsTheLeastRecentlyUsedBeyondItsBound) {
  ResponseCache cache({.max_entries = 2});
  const std::string a = ResponseCache::Key(Request("a", 1), "c", "p");
  const std::string b = ResponseCache::Key(Request("b", 1), "c", "p");
  const std::string c = ResponseCache::Key(Request("c", 1), "c", "p");
  cache.Insert(a, "c", "p", Answer("c", "p", 1), absl::Now());
  cache.Insert(b, "c", "p", Answer("c", "p", 2), absl::Now());
  ASSERT_NE(cache.Lookup(a).response, nullptr);  // a is now the most recent
  cache.Insert(c, "c", "p", Answer("c", "p", 3), absl::Now());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.Lookup(a).response, nullptr);
  EXPECT_EQ(cache.Lookup(b).response, nullptr);
  EXPECT_NE(cache.Lookup(c).response, nullptr);
}

TEST(ResponseCache, ZeroEntriesTurnsItOff) {
  ResponseCache cache({.max_entries = 0});
  EXPECT_FALSE(cache.enabled());
  const std::string key = ResponseCache::Key(Request("m", 1), "c", "p");
  cache.Insert(key, "c", "p", Answer("c", "p", 1), absl::Now());
  EXPECT_EQ(cache.Lookup(key).response, nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

// Sizing's model is part of the key: another model, another entry.
TEST(ResponseCache, KeyNamesSizingsModel) {
  const v1::RecommendRequest request = Request("m", 1);
  EXPECT_NE(ResponseCache::Key(request, "c", "p", "model-a"),
            ResponseCache::Key(request, "c", "p", "model-b"));
  EXPECT_EQ(ResponseCache::Key(request, "c", "p", "model-a"),
            ResponseCache::Key(request, "c", "p", "model-a"));
}

// One call: the first caller of a key computes it, the next ones wait for
// its answer, and later callers hit the cache.
TEST(ResponseCache, LookupOrJoinCoalescesACallersKey) {
  ResponseCache cache({.max_entries = 8});
  const std::string key = ResponseCache::Key(Request("m", 1), "c", "p", "s");
  const std::string versions = ResponseCache::Versions("c", "p", "s");
  std::vector<int> answered;  // candidates_considered of what each waiter got
  auto waiter = [&answered](std::shared_ptr<const EncodedAnswer> answer, absl::Time) {
    answered.push_back(answer == nullptr ? -1 : Received(*answer, 0, 0).candidates_considered());
  };
  EXPECT_EQ(cache.LookupOrJoin(key, waiter).outcome, ResponseCache::Joined::kLeads);
  EXPECT_EQ(cache.LookupOrJoin(key, waiter).outcome, ResponseCache::Joined::kJoined);
  EXPECT_EQ(cache.LookupOrJoin(key, waiter).outcome, ResponseCache::Joined::kJoined);
  EXPECT_TRUE(answered.empty());
  cache.Complete(key, versions, Answer("c", "p", 7), absl::Now());
  EXPECT_EQ(answered, (std::vector<int>{7, 7}));
  const ResponseCache::Joined hit = cache.LookupOrJoin(key, waiter);
  ASSERT_EQ(hit.outcome, ResponseCache::Joined::kHit);
  EXPECT_EQ(Received(*hit.hit.response, 0, 0).candidates_considered(), 7);

  // A failed computation wakes its waiters with nothing: they compute their own.
  const std::string other = ResponseCache::Key(Request("other", 1), "c", "p", "s");
  answered.clear();
  EXPECT_EQ(cache.LookupOrJoin(other, waiter).outcome, ResponseCache::Joined::kLeads);
  EXPECT_EQ(cache.LookupOrJoin(other, waiter).outcome, ResponseCache::Joined::kJoined);
  cache.Complete(other, versions, nullptr, absl::Now());
  EXPECT_EQ(answered, (std::vector<int>{-1}));
  EXPECT_EQ(cache.LookupOrJoin(other, waiter).outcome, ResponseCache::Joined::kLeads);
}

}  // namespace
}  // namespace gpuadvisor::gateway
