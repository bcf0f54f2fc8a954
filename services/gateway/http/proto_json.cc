#include "services/gateway/http/proto_json.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "services/gateway/http/json_print.h"

namespace gpuadvisor::gateway::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool IsFieldPath(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '[' &&
        c != ']')
      return false;
  }
  return absl::ascii_isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_';
}

// Protobuf's JSON parser reports "(workload.task): invalid value ..." and
// "(workload) nope: Cannot find field."; rewrite both as "<path>: ...".
std::string NormalizeJsonError(absl::string_view message) {
  std::string path;
  absl::string_view rest = message;
  if (absl::ConsumePrefix(&rest, "(")) {
    const size_t close = rest.find(')');
    if (close != absl::string_view::npos) {
      path = std::string(rest.substr(0, close));
      rest.remove_prefix(close + 1);
      absl::ConsumePrefix(&rest, ":");
      absl::ConsumePrefix(&rest, " ");
    }
  }
  if (absl::ConsumeSuffix(&rest, ": Cannot find field.")) {
    std::string full = path.empty() ? std::string(rest) : absl::StrCat(path, ".", rest);
    return absl::StrCat(full, ": unknown field");
  }
  if (!path.empty()) return absl::StrCat(path, ": ", rest);
  return absl::StrCat("body: not valid JSON for this request: ", rest);
}

const FieldDescriptor* FindField(const Descriptor* descriptor, absl::string_view name) {
  const std::string key(name);
  if (const FieldDescriptor* f = descriptor->FindFieldByName(key)) return f;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (descriptor->field(i)->json_name() == key) return descriptor->field(i);
  }
  return nullptr;
}

// "PurchaseOption" -> "PURCHASE_OPTION_", the buf STANDARD value prefix.
std::string EnumValuePrefix(const std::string& enum_name) {
  std::string prefix;
  for (size_t i = 0; i < enum_name.size(); ++i) {
    const char c = enum_name[i];
    if (i > 0 && absl::ascii_isupper(static_cast<unsigned char>(c))) prefix += '_';
    prefix += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  return prefix + "_";
}

// Accepts what the CLI takes: "PURCHASE_OPTION_SPOT", "spot", "Spot",
// "on-demand", a unique prefix of the short name ("full" for
// TASK_FULL_FINETUNE, "batch"), or the number "2".
const EnumValueDescriptor* FindEnumValue(const google::protobuf::EnumDescriptor* e,
                                         absl::string_view text) {
  std::string upper = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  std::replace(upper.begin(), upper.end(), '-', '_');
  if (const EnumValueDescriptor* v = e->FindValueByName(upper)) return v;
  const std::string prefix = EnumValuePrefix(e->name());
  if (const EnumValueDescriptor* v = e->FindValueByName(prefix + upper)) return v;
  int number = 0;
  if (absl::SimpleAtoi(text, &number)) return e->FindValueByNumber(number);
  const EnumValueDescriptor* found = nullptr;
  for (int i = 0; i < e->value_count() && !upper.empty(); ++i) {
    const EnumValueDescriptor* v = e->value(i);
    if (v->number() == 0 || !absl::StartsWith(v->name(), prefix + upper)) continue;
    if (found != nullptr) return nullptr;  // ambiguous ("INT" of INT8 and INT4)
    found = v;
  }
  return found;
}

// Rewrites the enum values of a JSON body given in the CLI's short forms
// ("lora", "on-demand") to their full names, along `descriptor`.
void NormalizeEnums(const Descriptor* descriptor, google::protobuf::Struct* object);

void NormalizeEnumValue(const FieldDescriptor* field, google::protobuf::Value* value) {
  if (value->has_list_value()) {
    for (google::protobuf::Value& item : *value->mutable_list_value()->mutable_values()) {
      NormalizeEnumValue(field, &item);
    }
    return;
  }
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM && value->has_string_value()) {
    if (const EnumValueDescriptor* v = FindEnumValue(field->enum_type(), value->string_value())) {
      value->set_string_value(v->name());
    }
  } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && value->has_struct_value() &&
             !absl::StartsWith(field->message_type()->full_name(), "google.protobuf.")) {
    NormalizeEnums(field->message_type(), value->mutable_struct_value());
  }
}

void NormalizeEnums(const Descriptor* descriptor, google::protobuf::Struct* object) {
  for (auto& [key, value] : *object->mutable_fields()) {
    if (const FieldDescriptor* field = FindField(descriptor, key)) {
      if (!field->is_map()) NormalizeEnumValue(field, &value);
    }
  }
}

absl::Status SetScalar(const std::string& key, const FieldDescriptor* field, absl::string_view text,
                       Message* message) {
  const Reflection* r = message->GetReflection();
  const bool repeated = field->is_repeated();
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": \"", text, "\" is not ", what));
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v(text);
      repeated ? r->AddString(message, field, v) : r->SetString(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(text, &v)) return bad("an integer");
      repeated ? r->AddInt32(message, field, v) : r->SetInt32(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      double d;
      if (!absl::SimpleAtoi(text, &v)) {
        // "8e10" is a natural way to write bytes in a URL.
        if (!absl::SimpleAtod(text, &d) || d != static_cast<double>(static_cast<int64_t>(d)))
          return bad("an integer");
        v = static_cast<int64_t>(d);
      }
      repeated ? r->AddInt64(message, field, v) : r->SetInt64(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!absl::SimpleAtoi(text, &v)) return bad("a non-negative integer");
      repeated ? r->AddUInt32(message, field, v) : r->SetUInt32(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!absl::SimpleAtoi(text, &v)) return bad("a non-negative integer");
      repeated ? r->AddUInt64(message, field, v) : r->SetUInt64(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      if (!absl::SimpleAtod(text, &v)) return bad("a number");
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        repeated ? r->AddDouble(message, field, v) : r->SetDouble(message, field, v);
      } else {
        const float f = static_cast<float>(v);
        repeated ? r->AddFloat(message, field, f) : r->SetFloat(message, field, f);
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(text, &v)) return bad("true or false");
      repeated ? r->AddBool(message, field, v) : r->SetBool(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumValueDescriptor* v = FindEnumValue(field->enum_type(), text);
      if (v == nullptr) return bad(absl::StrCat("a ", field->enum_type()->full_name(), " value"));
      repeated ? r->AddEnum(message, field, v) : r->SetEnum(message, field, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(key, ": a message; set its fields as ", key, ".<field>"));
}

}  // namespace

absl::Status ParseJsonBody(const std::string& body, Message* message) {
  message->Clear();
  if (absl::StripAsciiWhitespace(body).empty()) return absl::OkStatus();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(body, message, options);
  if (status.ok()) return absl::OkStatus();
  // Perhaps enums in the CLI's short forms ("task": "lora"): rewrite them and
  // parse again. Only failed bodies pay for the second pass.
  google::protobuf::Struct object;
  if (google::protobuf::util::JsonStringToMessage(body, &object).ok()) {
    NormalizeEnums(message->GetDescriptor(), &object);
    std::string rewritten;
    if (google::protobuf::util::MessageToJsonString(object, &rewritten).ok()) {
      message->Clear();
      const auto again = google::protobuf::util::JsonStringToMessage(rewritten, message, options);
      if (again.ok()) return absl::OkStatus();
    }
  }
  message->Clear();
  return absl::InvalidArgumentError(NormalizeJsonError(status.message().as_string()));
}

std::string ToJson(const Message& message) {
  // The direct printer (json_print.h: ten times faster on an answer), unless
  // the message holds a map or a well-known type.
  std::string direct;
  if (PrintJsonDirect(message, &direct)) return direct;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

absl::Status SetFieldsFromQuery(const std::vector<std::pair<std::string, std::string>>& params,
                                const std::vector<std::string>& ignored, Message* message) {
  for (const auto& [key, value] : params) {
    if (std::find(ignored.begin(), ignored.end(), key) != ignored.end()) continue;
    Message* target = message;
    const FieldDescriptor* field = nullptr;
    const std::vector<std::string> parts = absl::StrSplit(key, '.');
    for (size_t i = 0; i < parts.size(); ++i) {
      field = FindField(target->GetDescriptor(), parts[i]);
      if (field == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(key, ": unknown parameter; ",
                                                       target->GetDescriptor()->full_name(),
                                                       " has no field \"", parts[i], "\""));
      }
      if (i + 1 < parts.size()) {
        if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) {
          return absl::InvalidArgumentError(
              absl::StrCat(key, ": \"", parts[i], "\" is not a message field"));
        }
        target = target->GetReflection()->MutableMessage(target, field);
      }
    }
    if (field->is_repeated()) {
      for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        RETURN_IF_ERROR(SetScalar(key, field, absl::StripAsciiWhitespace(item), target));
      }
    } else {
      RETURN_IF_ERROR(SetScalar(key, field, absl::StripAsciiWhitespace(value), target));
    }
  }
  return absl::OkStatus();
}

std::string FieldOf(const std::string& message) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) return "";
  const std::string candidate = message.substr(0, colon);
  return IsFieldPath(candidate) ? candidate : "";
}

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnknown:
      return 500;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kFailedPrecondition:
      return 400;
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kInternal:
      return 500;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDataLoss:
      return 500;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    default:
      return 500;
  }
}

std::string CodeName(absl::StatusCode code) {
  // absl spells them "INVALID_ARGUMENT" etc., as google.rpc.Code does.
  return absl::StatusCodeToString(code);
}

std::string ErrorJson(const absl::Status& status) {
  google::protobuf::Struct root;
  auto& fields = *root.mutable_fields();
  fields["code"].set_number_value(static_cast<int>(status.code()));
  const std::string message(status.message());
  fields["message"].set_string_value(message);
  auto& details = *fields["details"].mutable_list_value();
  const std::string field = FieldOf(message);
  if (!field.empty()) {
    auto& bad_request = *details.add_values()->mutable_struct_value()->mutable_fields();
    bad_request["@type"].set_string_value("type.googleapis.com/google.rpc.BadRequest");
    auto& violation = *bad_request["field_violations"]
                           .mutable_list_value()
                           ->add_values()
                           ->mutable_struct_value()
                           ->mutable_fields();
    violation["field"].set_string_value(field);
    absl::string_view description = message;
    absl::ConsumePrefix(&description, field);
    absl::ConsumePrefix(&description, ":");
    violation["description"].set_string_value(
        std::string(absl::StripLeadingAsciiWhitespace(description)));
  }
  auto& info = *details.add_values()->mutable_struct_value()->mutable_fields();
  info["@type"].set_string_value("type.googleapis.com/google.rpc.ErrorInfo");
  info["reason"].set_string_value(CodeName(status.code()));
  info["domain"].set_string_value("gpuadvisor");
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(root, &json);
  return json;
}

}  // namespace gpuadvisor::gateway::http
