#include "services/cli/proto_flags.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace gpuadvisor::cli {
namespace {

// "UpfrontPayment" -> "upfront payment": an enum type's name in an error.
std::string Words(absl::string_view camel) {
  std::string words;
  for (char c : camel) {
    if (absl::ascii_isupper(c) && !words.empty()) words.push_back(' ');
    words.push_back(absl::ascii_tolower(c));
  }
  return words;
}

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// "TASK" for Task, "PURCHASE_OPTION" for PurchaseOption: the common prefix of
// the value names (proto style: ENUM_NAME_VALUE).
std::string EnumPrefix(const EnumDescriptor* type) {
  if (type->value_count() == 0) return "";
  std::string prefix = type->value(0)->name();
  for (int i = 1; i < type->value_count(); ++i) {
    const std::string& name = type->value(i)->name();
    size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n]) ++n;
    prefix.resize(n);
  }
  // Cut back to a whole word: "OFFLOAD_OPTIMIZER_" shared by some values only
  // cannot happen here because the UNSPECIFIED value is in the set.
  const size_t underscore = prefix.rfind('_');
  return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
}

std::string Normalize(absl::string_view text) {
  return absl::StrReplaceAll(absl::AsciiStrToLower(absl::StripAsciiWhitespace(text)), {{"-", "_"}});
}

std::string TypeName(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return "BOOL";
    case FieldDescriptor::CPPTYPE_ENUM:
      return absl::StrCat("{", absl::StrJoin(EnumChoices(field->enum_type()), ","), "}");
    case FieldDescriptor::CPPTYPE_STRING:
      return "TEXT";
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return UnitOf(field) == Unit::kCount ? "INT" : "SIZE";
    default:
      return UnitOf(field) == Unit::kCount ? "NUM" : "SIZE";
  }
}

std::string GeneratedHelp(const FieldDescriptor* field) {
  return absl::StrCat(field->containing_type()->name(), ".", field->name());
}

void Walk(const Descriptor* message, const std::string& path_prefix, const std::string& name_prefix,
          const std::string& group, std::vector<const FieldDescriptor*>& stack,
          std::vector<const Descriptor*>& open, const WalkOptions& options,
          std::vector<FlagSpec>& out) {
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    const std::string path = absl::StrCat(path_prefix, field->name());
    if (options.skip.contains(path)) continue;
    stack.push_back(field);
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const Descriptor* type = field->message_type();
      const bool recurs = std::find(open.begin(), open.end(), type) != open.end();
      if (!field->is_repeated() && !recurs) {
        open.push_back(type);
        const bool flat = options.flatten.contains(path);
        Walk(type, absl::StrCat(path, "."),
             flat ? name_prefix : absl::StrCat(name_prefix, field->name(), "."),
             flat || name_prefix.empty() ? type->name() : group, stack, open, options, out);
        open.pop_back();
      }
    } else {
      FlagSpec flag;
      flag.name = absl::StrCat(name_prefix, field->name());
      flag.path = path;
      flag.fields = stack;
      flag.group = group.empty() ? message->name() : group;
      flag.repeated = field->is_repeated();
      flag.is_bool = field->cpp_type() == FieldDescriptor::CPPTYPE_BOOL && !flag.repeated;
      flag.type_name = TypeName(field);
      flag.help = GeneratedHelp(field);
      if (auto doc = options.docs.find(path); doc != options.docs.end()) {
        flag.aliases = doc->second.aliases;
        if (!doc->second.help.empty()) flag.help = doc->second.help;
        if (!doc->second.group.empty()) flag.group = doc->second.group;
      }
      if (flag.repeated) absl::StrAppend(&flag.help, " (comma-separated; repeatable)");
      out.push_back(std::move(flag));
    }
    stack.pop_back();
  }
}

absl::Status FlagError(const FlagSpec& flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag.name, ": ", message));
}

absl::StatusOr<bool> ParseBool(absl::string_view text) {
  const std::string t = Normalize(text);
  if (t == "true" || t == "yes" || t == "1" || t == "on") return true;
  if (t == "false" || t == "no" || t == "0" || t == "off") return false;
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not true or false"));
}

absl::Status SetOne(Message* message, const FieldDescriptor* field, const FlagSpec& flag,
                    const std::string& text) {
  const Reflection* r = message->GetReflection();
  const bool rep = field->is_repeated();
  auto number = [&]() -> absl::StatusOr<double> {
    absl::StatusOr<double> value = ParseQuantity(text, UnitOf(field));
    if (!value.ok()) return FlagError(flag, value.status().message());
    return value;
  };
  auto integer = [&](double lo, double hi) -> absl::StatusOr<double> {
    ASSIGN_OR_RETURN(const double value, number());
    if (value != std::floor(value))
      return FlagError(flag, absl::StrCat("\"", text, "\" is not a whole number"));
    if (value < lo || value > hi)
      return FlagError(flag, absl::StrCat("\"", text, "\" is out of range"));
    return value;
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      ASSIGN_OR_RETURN(const double v, number());
      rep ? r->AddDouble(message, field, v) : r->SetDouble(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      ASSIGN_OR_RETURN(const double v, number());
      rep ? r->AddFloat(message, field, static_cast<float>(v))
          : r->SetFloat(message, field, static_cast<float>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      ASSIGN_OR_RETURN(const double v, integer(std::numeric_limits<int32_t>::min(),
                                               std::numeric_limits<int32_t>::max()));
      rep ? r->AddInt32(message, field, static_cast<int32_t>(v))
          : r->SetInt32(message, field, static_cast<int32_t>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      ASSIGN_OR_RETURN(const double v, integer(-9.2e18, 9.2e18));
      rep ? r->AddInt64(message, field, static_cast<int64_t>(v))
          : r->SetInt64(message, field, static_cast<int64_t>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      ASSIGN_OR_RETURN(const double v, integer(0, std::numeric_limits<uint32_t>::max()));
      rep ? r->AddUInt32(message, field, static_cast<uint32_t>(v))
          : r->SetUInt32(message, field, static_cast<uint32_t>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      ASSIGN_OR_RETURN(const double v, integer(0, 1.8e19));
      rep ? r->AddUInt64(message, field, static_cast<uint64_t>(v))
          : r->SetUInt64(message, field, static_cast<uint64_t>(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      absl::StatusOr<bool> v = ParseBool(text);
      if (!v.ok()) return FlagError(flag, v.status().message());
      rep ? r->AddBool(message, field, *v) : r->SetBool(message, field, *v);
      break;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      absl::StatusOr<const EnumValueDescriptor*> v = ParseEnum(field->enum_type(), text);
      if (!v.ok()) return FlagError(flag, v.status().message());
      rep ? r->AddEnum(message, field, *v) : r->SetEnum(message, field, *v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      rep ? r->AddString(message, field, text) : r->SetString(message, field, text);
      break;
    default:
      return FlagError(flag, "this field type has no flag syntax");
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<FlagSpec> WalkFlags(const Descriptor* root, const WalkOptions& options) {
  std::vector<FlagSpec> out;
  std::vector<const FieldDescriptor*> stack;
  std::vector<const Descriptor*> open = {root};
  Walk(root, "", "", options.root_group, stack, open, options, out);
  return out;
}

absl::Status ApplyFlag(Message* root, const FlagSpec& flag, const std::vector<std::string>& raw) {
  if (raw.empty() || flag.fields.empty()) return absl::OkStatus();
  Message* message = root;
  for (size_t i = 0; i + 1 < flag.fields.size(); ++i) {
    message = message->GetReflection()->MutableMessage(message, flag.fields[i]);
  }
  const FieldDescriptor* leaf = flag.fields.back();
  if (!leaf->is_repeated()) return SetOne(message, leaf, flag, raw.back());
  message->GetReflection()->ClearField(message, leaf);
  for (const std::string& occurrence : raw) {
    for (const std::string& item : SplitList(occurrence))
      RETURN_IF_ERROR(SetOne(message, leaf, flag, item));
  }
  return absl::OkStatus();
}

Unit UnitOf(const FieldDescriptor* field) {
  if (absl::EndsWith(field->name(), "_bytes")) return Unit::kBytes;
  if (absl::EndsWith(field->name(), "_gb")) return Unit::kGigabytes;
  return Unit::kCount;
}

absl::StatusOr<double> ParseQuantity(absl::string_view text, Unit unit) {
  const std::string t(absl::StripAsciiWhitespace(text));
  const char* begin = t.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin || t.empty() || !std::isfinite(number)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a number"));
  }
  const std::string suffix =
      absl::AsciiStrToUpper(absl::StripAsciiWhitespace(absl::string_view(end)));
  if (suffix.empty()) return number;
  double scale = 0;
  if (unit == Unit::kCount) {
    if (suffix == "K") scale = 1e3;
    if (suffix == "M") scale = 1e6;
    if (suffix == "B" || suffix == "G") scale = 1e9;
    if (suffix == "T") scale = 1e12;
    if (suffix == "P") scale = 1e15;
    if (scale == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\": unknown suffix \"", suffix, "\" (use K, M, B or G, T, P)"));
    }
    return number * scale;
  }
  // Byte sizes: decimal (KB, MB, GB, TB, PB) or binary (KiB .. PiB).
  const std::vector<std::pair<std::string, double>> units = {{"B", 1},
                                                             {"KB", 1e3},
                                                             {"MB", 1e6},
                                                             {"GB", 1e9},
                                                             {"TB", 1e12},
                                                             {"PB", 1e15},
                                                             {"KIB", 1024.0},
                                                             {"MIB", 1048576.0},
                                                             {"GIB", 1073741824.0},
                                                             {"TIB", 1099511627776.0},
                                                             {"PIB", 1125899906842624.0}};
  for (const auto& [name, bytes] : units) {
    if (suffix == name) scale = bytes;
  }
  if (scale == 0) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": unknown size unit \"", suffix,
                                                   "\" (use B, KB, MB, GB, TB or KiB .. TiB)"));
  }
  const double bytes = number * scale;
  return unit == Unit::kBytes ? bytes : bytes / 1e9;
}

absl::StatusOr<const EnumValueDescriptor*> ParseEnum(const EnumDescriptor* type,
                                                     absl::string_view text) {
  const std::string want = Normalize(text);
  const std::string prefix = absl::AsciiStrToLower(EnumPrefix(type));
  std::vector<const EnumValueDescriptor*> prefixed;
  for (int i = 0; i < type->value_count(); ++i) {
    const EnumValueDescriptor* value = type->value(i);
    if (value->number() == 0) continue;
    const std::string full = absl::AsciiStrToLower(value->name());
    const std::string short_name = EnumShortName(value);
    if (want == full || want == short_name) return value;
    if (!want.empty() && absl::StartsWith(short_name, want)) prefixed.push_back(value);
  }
  if (prefixed.size() == 1) return prefixed[0];
  return absl::InvalidArgumentError(
      absl::StrCat(prefixed.empty() ? "unknown " : "ambiguous ", Words(type->name()), " \"", text,
                   "\"; use one of: ", absl::StrJoin(EnumChoices(type), ", ")));
}

std::string EnumShortName(const EnumValueDescriptor* value) {
  const std::string prefix = EnumPrefix(value->type());
  absl::string_view name = value->name();
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

std::string EnumShortName(const EnumDescriptor* type, int number) {
  if (number == 0) return "";
  const EnumValueDescriptor* value = type->FindValueByNumber(number);
  return value == nullptr ? "-" : EnumShortName(value);
}

std::vector<std::string> EnumChoices(const EnumDescriptor* type) {
  std::vector<std::string> choices;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() != 0) choices.push_back(EnumShortName(type->value(i)));
  }
  return choices;
}

std::vector<std::string> SplitList(absl::string_view list) {
  std::vector<std::string> items;
  std::string current;
  auto flush = [&] {
    absl::string_view item = absl::StripAsciiWhitespace(current);
    if (!item.empty()) items.emplace_back(item);
    current.clear();
  };
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '\\' && i + 1 < list.size() && list[i + 1] == ',') {
      current.push_back(',');
      ++i;
    } else if (list[i] == ',') {
      flush();
    } else {
      current.push_back(list[i]);
    }
  }
  flush();
  return items;
}

absl::Status ParseJson(absl::string_view json, absl::string_view file_name, Message* message) {
  const auto status = google::protobuf::util::JsonStringToMessage(
      std::string(json), message, google::protobuf::util::JsonParseOptions());
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": not a ", message->GetDescriptor()->name(),
                     " in protobuf JSON: ", status.message().ToString()));
  }
  return absl::OkStatus();
}

}  // namespace gpuadvisor::cli
