#include "services/cli/table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
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
  return RenderTable(rows, 0);
}

size_t TerminalWidth() {
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  size_t columns = 0;
  if (const char* env = std::getenv("COLUMNS");
      env != nullptr && absl::SimpleAtoi(env, &columns) && columns > 0) {
    return columns;
  }
  return 160;
}

size_t DisplayWidth(absl::string_view text) {
  size_t width = 0;
  for (const char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

std::string CutToWidth(absl::string_view text, size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width <= 3) return std::string(width, '.');
  // Keep width - 3 characters (UTF-8 sequences whole), then "...".
  size_t kept = 0, end = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    if (kept + 1 > width - 3) break;
    ++kept;
    end = next;
  }
  return absl::StrCat(absl::StripTrailingAsciiWhitespace(text.substr(0, end)), "...");
}

std::string RenderTable(const std::vector<std::vector<std::string>>& rows, size_t max_width) {
  std::vector<size_t> widths;
  size_t columns = 0;
  for (const auto& row : rows) columns = std::max(columns, row.size());
  widths.resize(columns, 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  // The last column gets what the others leave of max_width, at least kMinLast.
  constexpr size_t kMinLast = 24;
  size_t last = columns == 0 ? 0 : widths[columns - 1];
  if (max_width > 0 && columns > 0) {
    size_t before = 0;
    for (size_t i = 0; i + 1 < columns; ++i) before += widths[i] + 2;
    last = std::min(last, std::max(kMinLast, max_width > before ? max_width - before : 0));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool is_last = i + 1 == columns;
      const std::string cell = is_last ? CutToWidth(row[i], last) : row[i];
      absl::StrAppend(&line, cell);
      if (i + 1 < row.size()) line.append(widths[i] - DisplayWidth(cell) + 2, ' ');
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
