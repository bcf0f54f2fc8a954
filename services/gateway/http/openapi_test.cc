#include "services/gateway/http/openapi.h"

#include <set>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gtest/gtest.h"
#include "services/gateway/http/web_assets.h"

namespace gpuadvisor::gateway::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Struct;
using ::testing::HasSubstr;

Struct Document(const google::protobuf::DescriptorPool* documented) {
  const std::string json = OpenApiJson(GatewayRoutes(GatewayServiceDescriptor()),
                                       {"skypilot", "dstack", "karpenter"}, documented);
  Struct doc;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &doc).ok()) << json.substr(0, 400);
  return doc;
}

const Struct& Obj(const Struct& s, const std::string& key) {
  return s.fields().at(key).struct_value();
}

// Every field of `message` and of every message it reaches is a property of
// its schema.
void ExpectAllFields(const Struct& schemas, const Descriptor* message,
                     std::set<std::string>* seen) {
  if (!seen->insert(message->full_name()).second) return;
  ASSERT_EQ(schemas.fields().count(message->full_name()), 1u) << message->full_name();
  const Struct& properties = Obj(Obj(schemas, message->full_name()), "properties");
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    EXPECT_EQ(properties.fields().count(field->name()), 1u) << field->full_name();
    if (field->message_type() != nullptr) ExpectAllFields(schemas, field->message_type(), seen);
    if (field->enum_type() != nullptr) {
      EXPECT_EQ(schemas.fields().count(field->enum_type()->full_name()), 1u) << field->full_name();
    }
  }
}

TEST(OpenApi, RoutesCallGatewayMethods) {
  const std::vector<ApiRoute> routes = GatewayRoutes(GatewayServiceDescriptor());
  ASSERT_GE(routes.size(), 2u);
  EXPECT_EQ(routes[0].path, "/v1/recommend");
  EXPECT_EQ(routes[0].method->name(), "Recommend");
  EXPECT_TRUE(routes[0].exports);
  EXPECT_EQ(routes[1].path, "/v1/estimate");
  ASSERT_EQ(routes.size(), 6u);
  EXPECT_EQ(routes[2].path, "/v1/offers");
  EXPECT_EQ(routes[2].http_method, "GET");
  EXPECT_EQ(routes[2].method->name(), "ListOffers");
  bool sources = false;
  for (const ApiRoute& route : routes) {
    if (route.path != "/v1/sources") continue;
    sources = true;
    EXPECT_EQ(route.http_method, "GET");
    EXPECT_EQ(route.method->name(), "ListSources");
  }
  EXPECT_TRUE(sources);
}

TEST(OpenApi, GetRoutesDocumentEveryRequestFieldAsAQueryParameter) {
  const Struct doc = Document(nullptr);
  const Struct& get = Obj(Obj(Obj(doc, "paths"), "/v1/offers"), "get");
  std::set<std::string> names;
  for (const auto& p : get.fields().at("parameters").list_value().values()) {
    names.insert(p.struct_value().fields().at("name").string_value());
  }
  const Descriptor* request = catalog::v1::ListOffersRequest::descriptor();
  ASSERT_GT(request->field_count(), 0);
  for (int i = 0; i < request->field_count(); ++i) {
    EXPECT_EQ(names.count(request->field(i)->name()), 1u) << request->field(i)->name();
  }
}

TEST(OpenApi, EveryFieldOfEveryRouteMessageIsDocumented) {
  const Struct doc = Document(nullptr);
  EXPECT_EQ(doc.fields().at("openapi").string_value(), "3.0.3");
  const Struct& schemas = Obj(Obj(doc, "components"), "schemas");
  std::set<std::string> seen;
  for (const ApiRoute& route : GatewayRoutes(GatewayServiceDescriptor())) {
    ExpectAllFields(schemas, route.method->input_type(), &seen);
    ExpectAllFields(schemas, route.method->output_type(), &seen);
    EXPECT_EQ(Obj(doc, "paths").fields().count(route.path), 1u) << route.path;
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(OpenApi, TypesFollowTheJsonMapping) {
  const Struct doc = Document(nullptr);
  const Struct& schemas = Obj(Obj(doc, "components"), "schemas");
  const Struct& memory = Obj(Obj(schemas, "gpuadvisor.sizing.v1.MemoryBreakdown"), "properties");
  EXPECT_EQ(Obj(memory, "weights_bytes").fields().at("type").string_value(), "string");
  EXPECT_EQ(Obj(memory, "weights_bytes").fields().at("format").string_value(), "int64");
  const Struct& constraints = Obj(Obj(schemas, "gpuadvisor.gateway.v1.Constraints"), "properties");
  EXPECT_EQ(Obj(constraints, "providers").fields().at("type").string_value(), "array");
  EXPECT_EQ(Obj(constraints, "max_usd_per_hour").fields().at("type").string_value(), "number");
  const Struct& task = Obj(schemas, "gpuadvisor.sizing.v1.Task");
  EXPECT_EQ(task.fields().at("enum").list_value().values(0).string_value(), "TASK_UNSPECIFIED");
}

TEST(OpenApi, RecommendTakesFormatAndAlternative) {
  const Struct doc = Document(nullptr);
  const Struct& post = Obj(Obj(Obj(doc, "paths"), "/v1/recommend"), "post");
  const auto& parameters = post.fields().at("parameters").list_value().values();
  ASSERT_EQ(parameters.size(), 3);
  EXPECT_EQ(parameters[0].struct_value().fields().at("name").string_value(), "format");
  EXPECT_EQ(parameters[1].struct_value().fields().at("name").string_value(), "alternative");
  EXPECT_EQ(parameters[2].struct_value().fields().at("name").string_value(), "X-Request-Id");
  // Every status path the route can answer, each a google.rpc.Status.
  const Struct& responses = Obj(post, "responses");
  for (const char* code :
       {"200", "400", "404", "405", "408", "413", "429", "431", "503", "504", "default"}) {
    EXPECT_EQ(responses.fields().count(code), 1u) << code;
  }
  const Struct& error = Obj(Obj(doc, "components"), "schemas").fields().at("Error").struct_value();
  EXPECT_EQ(Obj(Obj(error, "properties"), "code").fields().at("type").string_value(), "integer");
  EXPECT_EQ(Obj(error, "properties").fields().count("details"), 1u);
}

TEST(OpenApi, DescriptionsComeFromProtoComments) {
  std::unique_ptr<google::protobuf::DescriptorPool> pool =
      PoolFromDescriptorSet(GatewayDescriptorSet());
  ASSERT_NE(pool, nullptr);
  const Struct doc = Document(pool.get());
  const Struct& schemas = Obj(Obj(doc, "components"), "schemas");
  const Struct& constraints = Obj(Obj(schemas, "gpuadvisor.gateway.v1.Constraints"), "properties");
  // "optional double vram_margin = 9; // fraction kept free; default 0.1"
  EXPECT_THAT(Obj(constraints, "vram_margin").fields().at("description").string_value(),
              HasSubstr("fraction kept free"));
  EXPECT_THAT(Obj(constraints, "vram_margin").fields().at("description").string_value(),
              HasSubstr("Optional"));
}

TEST(OpenApi, BadDescriptorSetGivesNoPool) {
  EXPECT_EQ(PoolFromDescriptorSet("not a descriptor set"), nullptr);
  EXPECT_EQ(PoolFromDescriptorSet(""), nullptr);
}

}  // namespace
}  // namespace gpuadvisor::gateway::http
