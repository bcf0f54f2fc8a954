#include "services/gateway/http/json_print.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace gpuadvisor::gateway::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Whether `c` goes into a JSON string as it is (no escape).
bool Plain(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\'; }

void AppendString(absl::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // The run of plain bytes in one append: answers are mostly prose.
    size_t j = i;
    while (j < s.size() && Plain(static_cast<unsigned char>(s[j]))) ++j;
    out->append(s.data() + i, j - i);
    if (j == s.size()) break;
    const unsigned char c = static_cast<unsigned char>(s[j]);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out->append(buf);
      }
    }
    i = j + 1;
  }
  out->push_back('"');
}

// The shortest of a short and a full precision that reads back the same
// (printf's %.15g / %.17g for doubles, %.6g / %.9g for floats, as protobuf
// writes them), through to_chars and from_chars: no locale, no parsing of a
// format string.
template <typename T>
void AppendReal(T value, int short_digits, int full_digits, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
    return;
  }
  if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[40];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, short_digits);
  T back = 0;
  std::from_chars(buf, end, back, std::chars_format::general);
  if (ec != std::errc() || back != value) {
    end = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, full_digits).ptr;
  }
  out->append(buf, end);
}

// A message's fields in protobuf's order: outside a oneof by number, then
// the members of oneofs (proto3 `optional` fields too) by number. Cached
// per thread: a descriptor lives as long as the program.
const std::vector<const FieldDescriptor*>& FieldsInOrder(const Descriptor* d) {
  thread_local absl::flat_hash_map<const Descriptor*, std::vector<const FieldDescriptor*>> cache;
  auto [it, inserted] = cache.try_emplace(d);
  if (inserted) {
    std::vector<const FieldDescriptor*>& fields = it->second;
    for (int i = 0; i < d->field_count(); ++i) fields.push_back(d->field(i));
    std::sort(fields.begin(), fields.end(), [](const FieldDescriptor* a, const FieldDescriptor* b) {
      const bool a_oneof = a->containing_oneof() != nullptr;
      const bool b_oneof = b->containing_oneof() != nullptr;
      return a_oneof != b_oneof ? b_oneof : a->number() < b->number();
    });
  }
  return it->second;
}

bool PrintMessage(const Message& message, std::string* out);

// One value of `field` (element `index` when repeated, else -1).
bool PrintValue(const Message& m, const FieldDescriptor* f, int index, std::string* out) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(out, rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      return true;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(out, rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      return true;
    case FieldDescriptor::CPPTYPE_INT64:
      absl::StrAppend(out, "\"", rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f), "\"");
      return true;
    case FieldDescriptor::CPPTYPE_UINT64:
      absl::StrAppend(out, "\"", rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f),
                      "\"");
      return true;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      AppendReal(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f), 15, 17, out);
      return true;
    case FieldDescriptor::CPPTYPE_FLOAT:
      AppendReal(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f), 6, 9, out);
      return true;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->append((rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false");
      return true;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      const auto* value = f->enum_type()->FindValueByNumber(number);
      if (value != nullptr) {
        AppendString(value->name(), out);
      } else {
        absl::StrAppend(out, number);
      }
      return true;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                 : r->GetStringReference(m, f, &scratch);
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        AppendString(absl::Base64Escape(s), out);
      } else {
        AppendString(s, out);
      }
      return true;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return PrintMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), out);
  }
  return false;
}

bool PrintMessage(const Message& message, std::string* out) {
  const Descriptor* d = message.GetDescriptor();
  if (d->file()->package() == "google.protobuf") return false;  // well-known types
  const Reflection* r = message.GetReflection();
  const std::vector<const FieldDescriptor*>& fields = FieldsInOrder(d);
  out->push_back('{');
  bool first = true;
  for (const FieldDescriptor* f : fields) {
    if (f->is_map()) return false;
    if (!f->is_repeated() &&
        (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE || f->has_presence()) &&
        !r->HasField(message, f)) {
      continue;
    }
    if (!first) out->push_back(',');
    first = false;
    AppendString(f->name(), out);
    out->push_back(':');
    if (!f->is_repeated()) {
      if (!PrintValue(message, f, -1, out)) return false;
      continue;
    }
    out->push_back('[');
    const int n = r->FieldSize(message, f);
    for (int i = 0; i < n; ++i) {
      if (i > 0) out->push_back(',');
      if (!PrintValue(message, f, i, out)) return false;
    }
    out->push_back(']');
  }
  out->push_back('}');
  return true;
}

}  // namespace

bool PrintJsonDirect(const Message& message, std::string* out) {
  return PrintMessage(message, out);
}

}  // namespace gpuadvisor::gateway::http
