#include "services/catalog/located_text_proto.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"

namespace gpuadvisor::catalog {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::TextFormat;

namespace {
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace

absl::Status ParseWithLocations(const std::string& text, const std::string& path, Message* message,
                                TextFormat::ParseInfoTree* tree) {
  FirstError errors;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  if (!parser.ParseFromString(text, message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", errors.error().empty() ? "0:0: parse error" : errors.error()));
  }
  return absl::OkStatus();
}

absl::Status Located(const std::string& path, const TextFormat::ParseInfoTree& tree,
                     const FieldDescriptor* list, int index, const absl::Status& status) {
  TextFormat::ParseLocation where = tree.GetLocation(list, index);
  const absl::string_view message = status.message();
  const size_t end = message.find_first_of(":[.");
  if (end != absl::string_view::npos) {
    const std::string field_name(message.substr(0, end));
    const FieldDescriptor* field = list->message_type()->FindFieldByName(field_name);
    const TextFormat::ParseInfoTree* nested = tree.GetTreeForNested(list, index);
    if (field != nullptr && nested != nullptr) {
      int field_index = -1;
      if (field->is_repeated()) {
        field_index = 0;
        if (message[end] == '[') {
          const size_t close = message.find(']', end);
          (void)absl::SimpleAtoi(message.substr(end + 1, close - end - 1), &field_index);
        }
      }
      TextFormat::ParseLocation at = nested->GetLocation(field, field_index);
      if (at.line >= 0) where = at;
    }
  }
  return absl::Status(status.code(), absl::StrCat(path, ":", where.line + 1, ":", where.column + 1,
                                                  ": ", list->name(), "[", index, "].", message));
}

int LineOf(const TextFormat::ParseInfoTree& tree, const FieldDescriptor* list, int index) {
  const TextFormat::ParseLocation where = tree.GetLocation(list, index);
  return where.line >= 0 ? where.line + 1 : 0;
}

}  // namespace gpuadvisor::catalog
