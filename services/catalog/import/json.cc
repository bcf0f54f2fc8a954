#include "services/catalog/import/json.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"

namespace gpuadvisor::catalog::json {

absl::StatusOr<Value> Parse(absl::string_view text, absl::string_view file_name) {
  Value value;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), &value, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": not JSON: ", std::string(status.message())));
  }
  return value;
}

const Value* Get(const Value& v, absl::string_view key) {
  if (v.kind_case() != Value::kStructValue) return nullptr;
  const auto& fields = v.struct_value().fields();
  auto it = fields.find(std::string(key));
  return it == fields.end() ? nullptr : &it->second;
}

const Value* Path(const Value& v, std::initializer_list<absl::string_view> keys) {
  const Value* at = &v;
  for (absl::string_view key : keys) {
    at = Get(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

bool IsNull(const Value* v) { return v == nullptr || v->kind_case() == Value::kNullValue; }

std::string String(const Value& v, absl::string_view key) {
  const Value* member = Get(v, key);
  if (member == nullptr || member->kind_case() != Value::kStringValue) return "";
  return member->string_value();
}

std::optional<double> AsNumber(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->kind_case() == Value::kNumberValue) {
    if (!std::isfinite(v->number_value())) return std::nullopt;
    return v->number_value();
  }
  if (v->kind_case() == Value::kStringValue) {
    double d = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(v->string_value()), &d) && std::isfinite(d)) {
      return d;
    }
  }
  return std::nullopt;
}

std::optional<double> Number(const Value& v, absl::string_view key) {
  return AsNumber(Get(v, key));
}

std::optional<bool> Bool(const Value& v, absl::string_view key) {
  const Value* member = Get(v, key);
  if (member == nullptr || member->kind_case() != Value::kBoolValue) return std::nullopt;
  return member->bool_value();
}

absl::StatusOr<std::vector<const Value*>> PageItems(const Value& root, absl::string_view list_key,
                                                    absl::string_view file_name,
                                                    absl::string_view not_what) {
  std::vector<const Value*> pages;
  if (root.kind_case() == Value::kListValue) {
    for (const Value& page : root.list_value().values()) pages.push_back(&page);
  } else {
    pages.push_back(&root);
  }
  std::vector<const Value*> items;
  for (size_t p = 0; p < pages.size(); ++p) {
    const Value* list = Get(*pages[p], list_key);
    if (list == nullptr || list->kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ": page ", p, ": no \"", list_key, "\" list (", not_what, ")"));
    }
    for (const Value& item : list->list_value().values()) items.push_back(&item);
  }
  return items;
}

}  // namespace gpuadvisor::catalog::json
