#include "services/cli/table.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "services/cli/proto_flags.h"

namespace gpuadvisor::cli {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string Scalar(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%.6g", rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrFormat("%.6g", rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return EnumShortName(rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f));
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    default:
      return "";
  }
}

void Collect(const Message& m, const std::string& prefix,
             const absl::flat_hash_set<std::string>& shown, std::vector<std::string>& out) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string path = absl::StrCat(prefix, f->name());
    if (shown.contains(path)) continue;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
          Collect(m.GetReflection()->GetRepeatedMessage(m, f, i), absl::StrCat(path, "[", i, "]."),
                  shown, out);
        }
      } else {
        Collect(m.GetReflection()->GetMessage(m, f), absl::StrCat(path, "."), shown, out);
      }
    } else if (f->is_repeated()) {
      std::vector<std::string> items;
      for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) items.push_back(Scalar(m, f, i));
      out.push_back(absl::StrCat(path, ": ", absl::StrJoin(items, ", ")));
    } else {
      out.push_back(absl::StrCat(path, ": ", Scalar(m, f, 0)));
    }
  }
}

}  // namespace

std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

std::vector<std::string> OtherFields(const Message& message,
                                     const absl::flat_hash_set<std::string>& shown) {
  std::vector<std::string> out;
  Collect(message, "", shown, out);
  return out;
}

}  // namespace gpuadvisor::cli
