#include "services/gateway/http/json_print.h"

#include <cmath>
#include <limits>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gtest/gtest.h"

namespace gpuadvisor::gateway::http {
namespace {

std::string ProtobufJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &json, options).ok());
  return json;
}

// Byte for byte what protobuf's printer writes, over every kind of field an
// answer holds.
TEST(PrintJsonDirect, WritesWhatProtobufWrites) {
  v1::RecommendResponse response;
  EXPECT_EQ(
      [&] {
        std::string s;
        EXPECT_TRUE(PrintJsonDirect(response, &s));
        return s;
      }(),
      ProtobufJson(response));  // empty: zeros, empty lists, no messages
  v1::Recommendation* r = response.add_recommendations();
  r->set_rank(1);
  r->mutable_offer()->set_id("vast/1x-RTX_4090/Texas, US, NA");
  r->mutable_offer()->set_region("Quote \" backslash \\ newline \n tab \t bell \x07 é 東京");
  r->mutable_offer()->set_host_tier(catalog::v1::HOST_TIER_COMMUNITY);
  r->mutable_offer()->set_host_reliability(0.9985967);  // optional, set
  r->mutable_offer()->set_ram_bytes(515681000000);      // int64: a string
  r->mutable_offer()->set_on_demand_usd_per_hour(55.04);
  r->mutable_offer()->set_spot_usd_per_hour(0.1 + 0.2);  // needs 17 digits
  r->mutable_offer()->set_link_bytes_per_second(9e11);
  r->mutable_offer()->set_fabric_gbps(1e-7);
  r->mutable_offer()->set_spot_min_usd_per_hour(-0.0);
  r->set_purchase_option(static_cast<catalog::v1::PurchaseOption>(42));  // unknown: the number
  r->set_estimated_hours(std::numeric_limits<double>::infinity());
  r->set_tokens_per_second(std::nan(""));
  r->add_reasons("first");
  r->add_reasons("");
  r->add_also_in_regions("us-east-2");
  r->mutable_serving()->set_replicas(3);
  response.add_excluded()->set_reason(v1::EXCLUSION_REASON_FILTERED);
  response.set_catalog_age_seconds(-5);
  response.add_assumptions()->set_field("constraints.host_tier");
  v1::WhatIf* what_if = response.add_what_if();
  what_if->mutable_offer()->set_host_reliability(0.5);
  what_if->set_axis("spot");
  std::string direct;
  ASSERT_TRUE(PrintJsonDirect(response, &direct));
  EXPECT_EQ(direct, ProtobufJson(response));
}

TEST(PrintJsonDirect, LeavesMapsAndWellKnownTypesToProtobuf) {
  google::protobuf::Struct object;
  (*object.mutable_fields())["a"].set_number_value(1);
  std::string out;
  EXPECT_FALSE(PrintJsonDirect(object, &out));
}

}  // namespace
}  // namespace gpuadvisor::gateway::http
