#include "services/gateway/http/openapi.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/validation/field_ranges.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gpuadvisor::gateway::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::ListValue;
using google::protobuf::Value;

Value Str(const std::string& s) {
  Value v;
  v.set_string_value(s);
  return v;
}
Value Num(double d) {
  Value v;
  v.set_number_value(d);
  return v;
}
Value Bool(bool b) {
  Value v;
  v.set_bool_value(b);
  return v;
}
Value Obj(std::initializer_list<std::pair<std::string, Value>> members) {
  Value v;
  auto& fields = *v.mutable_struct_value()->mutable_fields();
  for (const auto& [key, value] : members) fields[key] = value;
  return v;
}
Value Arr(const std::vector<Value>& items) {
  Value v;
  ListValue* list = v.mutable_list_value();
  for (const Value& item : items) *list->add_values() = item;
  return v;
}
void Set(Value* object, const std::string& key, Value value) {
  (*object->mutable_struct_value()->mutable_fields())[key] = std::move(value);
}
Value Ref(const std::string& name) { return Obj({{"$ref", Str("#/components/schemas/" + name)}}); }

std::string CleanComment(const google::protobuf::SourceLocation& location) {
  std::string text = location.leading_comments;
  if (!location.trailing_comments.empty()) {
    if (!text.empty()) text += "\n";
    text += location.trailing_comments;
  }
  return std::string(absl::StripAsciiWhitespace(text));
}

std::string FieldComment(const DescriptorPool* documented, const FieldDescriptor* field) {
  if (documented == nullptr) return "";
  const FieldDescriptor* doc = documented->FindFieldByName(field->full_name());
  google::protobuf::SourceLocation location;
  if (doc == nullptr || !doc->GetSourceLocation(&location)) return "";
  return CleanComment(location);
}
std::string MessageComment(const DescriptorPool* documented, const Descriptor* message) {
  if (documented == nullptr) return "";
  const Descriptor* doc = documented->FindMessageTypeByName(message->full_name());
  google::protobuf::SourceLocation location;
  if (doc == nullptr || !doc->GetSourceLocation(&location)) return "";
  return CleanComment(location);
}
std::string EnumComment(const DescriptorPool* documented, const EnumDescriptor* e) {
  if (documented == nullptr) return "";
  const EnumDescriptor* doc = documented->FindEnumTypeByName(e->full_name());
  google::protobuf::SourceLocation location;
  if (doc == nullptr || !doc->GetSourceLocation(&location)) return "";
  std::string text = CleanComment(location);
  for (int i = 0; i < doc->value_count(); ++i) {
    google::protobuf::SourceLocation value_location;
    if (!doc->value(i)->GetSourceLocation(&value_location)) continue;
    const std::string value_text = CleanComment(value_location);
    if (value_text.empty()) continue;
    absl::StrAppend(&text, text.empty() ? "" : "\n", "- ", doc->value(i)->name(), ": ", value_text);
  }
  return text;
}

// Schemas of well-known types, as their JSON mapping writes them.
bool WellKnownSchema(const std::string& full_name, Value* schema) {
  static const std::map<std::string, std::pair<const char*, const char*>> kTypes = {
      {"google.protobuf.Timestamp", {"string", "date-time"}},
      {"google.protobuf.Duration", {"string", ""}},
      {"google.protobuf.FieldMask", {"string", ""}},
      {"google.protobuf.Struct", {"object", ""}},
      {"google.protobuf.ListValue", {"array", ""}},
      {"google.protobuf.Any", {"object", ""}},
      {"google.protobuf.DoubleValue", {"number", "double"}},
      {"google.protobuf.FloatValue", {"number", "float"}},
      {"google.protobuf.Int64Value", {"string", "int64"}},
      {"google.protobuf.UInt64Value", {"string", "uint64"}},
      {"google.protobuf.Int32Value", {"integer", "int32"}},
      {"google.protobuf.UInt32Value", {"integer", "int64"}},
      {"google.protobuf.BoolValue", {"boolean", ""}},
      {"google.protobuf.StringValue", {"string", ""}},
      {"google.protobuf.BytesValue", {"string", "byte"}},
  };
  if (full_name == "google.protobuf.Value") {
    *schema = Obj({});
    return true;
  }
  auto it = kTypes.find(full_name);
  if (it == kTypes.end()) return false;
  *schema = Obj({{"type", Str(it->second.first)}});
  if (*it->second.second) Set(schema, "format", Str(it->second.second));
  if (std::string(it->second.first) == "array") Set(schema, "items", Obj({}));
  return true;
}

// minimum / maximum of a number with a row in the range table every service
// checks (common/validation/field_ranges.h): the HTTP document states the
// same ranges the gRPC side enforces. 64-bit integers are strings in JSON.
void AddRange(const FieldDescriptor* field, Value* schema) {
  const validation::FieldRange* range = validation::FindRange(field);
  if (range == nullptr || field->is_repeated() ||
      field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
      field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
    return;
  }
  Set(schema, "minimum", Num(range->zero_is_unset ? std::min(0.0, range->min) : range->min));
  Set(schema, "maximum", Num(range->max));
}

class SchemaBuilder {
 public:
  explicit SchemaBuilder(const DescriptorPool* documented) : documented_(documented) {}

  // The schema of one value of `field` (not the array around a repeated one).
  Value Single(const FieldDescriptor* field) {
    switch (field->type()) {
      case FieldDescriptor::TYPE_DOUBLE:
        return Obj({{"type", Str("number")}, {"format", Str("double")}});
      case FieldDescriptor::TYPE_FLOAT:
        return Obj({{"type", Str("number")}, {"format", Str("float")}});
      case FieldDescriptor::TYPE_INT32:
      case FieldDescriptor::TYPE_SINT32:
      case FieldDescriptor::TYPE_SFIXED32:
        return Obj({{"type", Str("integer")}, {"format", Str("int32")}});
      case FieldDescriptor::TYPE_UINT32:
      case FieldDescriptor::TYPE_FIXED32:
        return Obj({{"type", Str("integer")}, {"format", Str("int64")}, {"minimum", Num(0)}});
      case FieldDescriptor::TYPE_INT64:
      case FieldDescriptor::TYPE_SINT64:
      case FieldDescriptor::TYPE_SFIXED64:
        // Protobuf's JSON mapping writes 64-bit integers as decimal strings.
        return Obj({{"type", Str("string")}, {"format", Str("int64")}});
      case FieldDescriptor::TYPE_UINT64:
      case FieldDescriptor::TYPE_FIXED64:
        return Obj({{"type", Str("string")}, {"format", Str("uint64")}});
      case FieldDescriptor::TYPE_BOOL:
        return Obj({{"type", Str("boolean")}});
      case FieldDescriptor::TYPE_STRING:
        return Obj({{"type", Str("string")}});
      case FieldDescriptor::TYPE_BYTES:
        return Obj({{"type", Str("string")}, {"format", Str("byte")}});
      case FieldDescriptor::TYPE_ENUM:
        AddEnum(field->enum_type());
        return Ref(field->enum_type()->full_name());
      case FieldDescriptor::TYPE_MESSAGE:
      case FieldDescriptor::TYPE_GROUP: {
        Value wkt;
        if (WellKnownSchema(field->message_type()->full_name(), &wkt)) return wkt;
        AddMessage(field->message_type());
        return Ref(field->message_type()->full_name());
      }
    }
    return Obj({});
  }

  Value Field(const FieldDescriptor* field) {
    Value schema;
    if (field->is_map()) {
      schema = Obj({{"type", Str("object")},
                    {"additionalProperties", Single(field->message_type()->map_value())}});
    } else if (field->is_repeated()) {
      schema = Obj({{"type", Str("array")}, {"items", Single(field)}});
    } else {
      schema = Single(field);
      AddRange(field, &schema);
    }
    std::string description = FieldComment(documented_, field);
    if (field->has_presence() && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      absl::StrAppend(&description, description.empty() ? "" : "\n",
                      "Optional: leaving it out differs from sending zero.");
    }
    if (!description.empty()) {
      if (schema.struct_value().fields().count("$ref") > 0) {
        // OpenAPI 3.0 ignores siblings of $ref; wrap it so the text shows.
        schema = Obj({{"allOf", Arr({schema})}});
      }
      Set(&schema, "description", Str(description));
    }
    return schema;
  }

  void AddMessage(const Descriptor* message) {
    if (!seen_.insert(message->full_name()).second) return;
    Value properties = Obj({});
    for (int i = 0; i < message->field_count(); ++i) {
      Set(&properties, message->field(i)->name(), Field(message->field(i)));
    }
    Value schema = Obj({{"type", Str("object")},
                        {"properties", properties},
                        {"additionalProperties", Bool(false)}});
    const std::string description = MessageComment(documented_, message);
    if (!description.empty()) Set(&schema, "description", Str(description));
    schemas_[message->full_name()] = std::move(schema);
  }

  void AddEnum(const EnumDescriptor* e) {
    if (!seen_.insert(e->full_name()).second) return;
    std::vector<Value> names;
    for (int i = 0; i < e->value_count(); ++i) names.push_back(Str(e->value(i)->name()));
    Value schema = Obj({{"type", Str("string")}, {"enum", Arr(names)}});
    const std::string description = EnumComment(documented_, e);
    if (!description.empty()) Set(&schema, "description", Str(description));
    schemas_[e->full_name()] = std::move(schema);
  }

  // One query parameter per scalar leaf of `message`, depth-first.
  void QueryParameters(const Descriptor* message, const std::string& prefix, int depth,
                       std::vector<Value>* out) {
    for (int i = 0; i < message->field_count(); ++i) {
      const FieldDescriptor* field = message->field(i);
      const std::string name = prefix + field->name();
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (!field->is_repeated() && depth < 4) {
          QueryParameters(field->message_type(), name + ".", depth + 1, out);
        }
        continue;
      }
      Value schema = field->is_repeated() ? Obj({{"type", Str("array")}, {"items", Single(field)}})
                                          : Single(field);
      AddRange(field, &schema);
      Value parameter = Obj({{"name", Str(name)},
                             {"in", Str("query")},
                             {"required", Bool(false)},
                             {"schema", schema}});
      if (field->is_repeated()) {
        Set(&parameter, "style", Str("form"));
        Set(&parameter, "explode", Bool(true));
      }
      std::string description = FieldComment(documented_, field);
      if (field->is_repeated()) {
        absl::StrAppend(&description, description.empty() ? "" : "\n",
                        "Repeat the parameter or separate values with commas.");
      }
      if (field->type() == FieldDescriptor::TYPE_ENUM) {
        absl::StrAppend(
            &description, description.empty() ? "" : "\n",
            "Enum values by full name, without their prefix (case-insensitive) or by number.");
      }
      if (!description.empty()) Set(&parameter, "description", Str(description));
      out->push_back(std::move(parameter));
    }
  }

  Value Schemas() {
    Value all = Obj({});
    for (auto& [name, schema] : schemas_) Set(&all, name, schema);
    return all;
  }

 private:
  const DescriptorPool* documented_;
  std::set<std::string> seen_;
  std::map<std::string, Value> schemas_;
};

// google.rpc.Status as grpc-gateway writes it: the gRPC code, the message,
// and details (a BadRequest naming the field at fault, an ErrorInfo whose
// reason is the code's name).
Value ErrorSchema() {
  Value violation = Obj({{"type", Str("object")},
                         {"properties", Obj({{"field", Obj({{"type", Str("string")}})},
                                             {"description", Obj({{"type", Str("string")}})}})}});
  Value detail = Obj({
      {"type", Str("object")},
      {"required", Arr({Str("@type")})},
      {"description", Str("google.rpc.BadRequest (field_violations: the field at fault) or "
                          "google.rpc.ErrorInfo (reason: the gRPC code's name, domain "
                          "gpuadvisor).")},
      {"properties",
       Obj({{"@type", Obj({{"type", Str("string")}})},
            {"field_violations", Obj({{"type", Str("array")}, {"items", violation}})},
            {"reason", Obj({{"type", Str("string")}})},
            {"domain", Obj({{"type", Str("string")}})},
            {"metadata", Obj({{"type", Str("object")},
                              {"additionalProperties", Obj({{"type", Str("string")}})}})}})},
  });
  return Obj({
      {"type", Str("object")},
      {"description", Str("google.rpc.Status. The HTTP status is grpc-gateway's for the code "
                          "(INVALID_ARGUMENT 400, NOT_FOUND 404, RESOURCE_EXHAUSTED 429, "
                          "UNAVAILABLE 503, ...), or the transport's own: 405, 408, 413, 431.")},
      {"required", Arr({Str("code"), Str("message")})},
      {"properties",
       Obj({{"code", Obj({{"type", Str("integer")},
                          {"description", Str("gRPC status code, e.g. 3 (INVALID_ARGUMENT).")}})},
            {"message", Obj({{"type", Str("string")}})},
            {"details", Obj({{"type", Str("array")}, {"items", detail}})}})},
  });
}

Value ErrorResponse(const std::string& description) {
  return Obj({{"description", Str(description)},
              {"content", Obj({{"application/json", Obj({{"schema", Ref("Error")}})}})}});
}

// Every error status a route can answer besides the gRPC-mapped default.
void AddErrorResponses(Value* responses) {
  static constexpr std::pair<const char*, const char*> kErrors[] = {
      {"400", "A bad field (google.rpc.BadRequest names it) or a malformed request"},
      {"404", "Not found (an unknown preset, nothing to export) or an unknown path"},
      {"405", "Another method than the route's; the Allow header lists the allowed ones"},
      {"408",
       "Headers or body not received within --http_header_timeout_seconds / "
       "--http_body_timeout_seconds; the connection is closed"},
      {"413", "Body over --http_max_body_bytes (chunked bodies too)"},
      {"429", "Rate limited: over --rate_limit_per_second for this client"},
      {"431", "Headers over --http_max_header_bytes or --http_max_header_count"},
      {"503", "A backend is unavailable, or --http_max_connections are open"},
      {"504", "The call's deadline passed"},
  };
  for (const auto& [code, description] : kErrors) Set(responses, code, ErrorResponse(description));
  Set(responses, "default", ErrorResponse("Any other error, with its gRPC code"));
}

}  // namespace

std::unique_ptr<DescriptorPool> PoolFromDescriptorSet(const std::string& bytes) {
  google::protobuf::FileDescriptorSet set;
  if (bytes.empty() || !set.ParseFromString(bytes)) return nullptr;
  auto pool = std::make_unique<DescriptorPool>();
  for (const google::protobuf::FileDescriptorProto& file : set.file()) {
    if (pool->BuildFile(file) == nullptr) return nullptr;  // imports come first in the set
  }
  return pool;
}

namespace {

// ?format= and ?alternative= of a route that exports orchestrator files.
void AddExportParameters(const std::vector<std::string>& export_formats,
                         std::vector<Value>* parameters, Value* ok_content) {
  std::vector<Value> formats = {Str("json")};
  for (const std::string& f : export_formats) formats.push_back(Str(f));
  parameters->push_back(
      Obj({{"name", Str("format")},
           {"in", Str("query")},
           {"required", Bool(false)},
           {"description", Str("json (default): the response message. Otherwise the answer as the "
                               "named orchestrator's YAML, offers in rank order.")},
           {"schema",
            Obj({{"type", Str("string")}, {"enum", Arr(formats)}, {"default", Str("json")}})}}));
  parameters->push_back(
      Obj({{"name", Str("alternative")},
           {"in", Str("query")},
           {"required", Bool(false)},
           {"description", Str("With an orchestrator format: 1 (default) is the file of rank 1's "
                               "shape, N the N-th other shape's file (node count or replicas); "
                               "the X-Export-Alternatives header says how many there are.")},
           {"schema", Obj({{"type", Str("integer")}, {"minimum", Num(1)}, {"default", Num(1)}})}}));
  Set(ok_content, "application/yaml", Obj({{"schema", Obj({{"type", Str("string")}})}}));
}

Value RequestIdParameter() {
  return Obj({{"name", Str("X-Request-Id")},
              {"in", Str("header")},
              {"required", Bool(false)},
              {"description", Str("Kept when plain (letters, digits, - _ ., up to 128) and echoed "
                                  "in the answer and the gateway's log; otherwise one is made.")},
              {"schema", Obj({{"type", Str("string")}})}});
}

// "Calls gRPC <method> in-process." and the method's own comment.
std::string OperationDescription(const ApiRoute& route, const DescriptorPool* documented) {
  std::string description = absl::StrCat("Calls gRPC ", route.method->full_name(), " in-process.");
  google::protobuf::SourceLocation location;
  const google::protobuf::MethodDescriptor* doc_method =
      documented ? documented->FindMethodByName(route.method->full_name()) : nullptr;
  if (doc_method != nullptr && doc_method->GetSourceLocation(&location)) {
    const std::string comment = CleanComment(location);
    if (!comment.empty()) absl::StrAppend(&description, " ", comment);
  }
  return description;
}

// The operation of one API route: its input (body or query), answers and
// errors.
Value Operation(const ApiRoute& route, const std::vector<std::string>& export_formats,
                const DescriptorPool* documented, SchemaBuilder& builder) {
  const Descriptor* input = route.method->input_type();
  const Descriptor* output = route.method->output_type();
  builder.AddMessage(input);
  builder.AddMessage(output);
  Value operation = Obj({{"operationId", Str(route.method->name())},
                         {"summary", Str(route.summary)},
                         {"tags", Arr({Str("gateway")})},
                         {"description", Str(OperationDescription(route, documented))}});
  std::vector<Value> parameters;
  if (route.http_method == "POST") {
    Set(&operation, "requestBody",
        Obj({{"required", Bool(true)},
             {"content",
              Obj({{"application/json", Obj({{"schema", Ref(input->full_name())}})}})}}));
  } else {
    builder.QueryParameters(input, "", 0, &parameters);
  }
  Value ok_content = Obj({{"application/json", Obj({{"schema", Ref(output->full_name())}})}});
  if (route.exports) AddExportParameters(export_formats, &parameters, &ok_content);
  parameters.push_back(RequestIdParameter());
  Set(&operation, "parameters", Arr(parameters));
  Value responses = Obj(
      {{"200", Obj({{"description", Str("OK")},
                    {"headers",
                     Obj({{"X-Request-Id", Obj({{"description", Str("The request's id")},
                                                {"schema", Obj({{"type", Str("string")}})}})}})},
                    {"content", ok_content}})}});
  AddErrorResponses(&responses);
  Set(&operation, "responses", responses);
  Value item = Obj({});
  Set(&item, absl::AsciiStrToLower(route.http_method), operation);
  return item;
}

// GET /v1/health and GET /v1/openapi.json.
void AddFixedPaths(Value* paths) {
  Set(paths, kHealthPath,
      Obj({{"get",
            Obj({{"operationId", Str("Health")},
                 {"summary", Str("grpc.health.v1 status of the gateway")},
                 {"tags", Arr({Str("gateway")})},
                 {"responses",
                  Obj({{"200", Obj({{"description", Str("SERVING")},
                                    {"content", Obj({{"application/json",
                                                      Obj({{"schema", Ref("Health")}})}})}})},
                       {"503",
                        Obj({{"description",
                              Str("Not serving yet (no catalog replica) or shutting down")},
                             {"content", Obj({{"application/json",
                                               Obj({{"schema", Ref("Health")}})}})}})}})}})}}));
  Set(paths, kOpenApiPath,
      Obj({{"get",
            Obj({{"operationId", Str("OpenApi")},
                 {"summary", Str("This document")},
                 {"tags", Arr({Str("gateway")})},
                 {"responses",
                  Obj({{"200", Obj({{"description", Str("OpenAPI 3.0 document")},
                                    {"content",
                                     Obj({{"application/json",
                                           Obj({{"schema",
                                                 Obj({{"type", Str("object")}})}})}})}})}})}})}}));
}

Value HealthSchema() {
  return Obj({{"type", Str("object")},
              {"required", Arr({Str("status")})},
              {"properties", Obj({{"status", Obj({{"type", Str("string")},
                                                  {"enum", Arr({Str("SERVING"), Str("NOT_SERVING"),
                                                                Str("UNKNOWN")})}})}})}});
}

// The whole document around its paths and schemas, as indented JSON.
std::string Document(Value paths, Value schemas) {
  Value doc = Obj({
      {"openapi", Str("3.0.3")},
      {"info",
       Obj({{"title", Str("GPU Advisor HTTP/JSON API")},
            {"version", Str("v1")},
            {"description",
             Str("The gateway's gRPC contract (gpuadvisor.gateway.v1) over HTTP: bodies are "
                 "protobuf's JSON mapping of the same messages (proto field names; "
                 "lowerCamelCase is accepted on input), 64-bit integers are decimal "
                 "strings, enums are value names. Errors carry the gRPC code, the message "
                 "and the field at fault.")}})},
      {"paths", std::move(paths)},
      {"components", Obj({{"schemas", std::move(schemas)}})},
  });
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(doc.struct_value(), &json, options);
  return json;
}

}  // namespace

std::string OpenApiJson(const std::vector<ApiRoute>& routes,
                        const std::vector<std::string>& export_formats,
                        const DescriptorPool* documented) {
  SchemaBuilder builder(documented);
  Value paths = Obj({});
  for (const ApiRoute& route : routes) {
    Set(&paths, route.path, Operation(route, export_formats, documented, builder));
  }
  AddFixedPaths(&paths);
  Value schemas = builder.Schemas();
  Set(&schemas, "Error", ErrorSchema());
  Set(&schemas, "Health", HealthSchema());
  return Document(std::move(paths), std::move(schemas));
}

}  // namespace gpuadvisor::gateway::http
