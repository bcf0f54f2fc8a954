#include "common/io/text_proto.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace gpuadvisor {
namespace {

// Keeps the first error with its position; the parser reports lines from 0.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
    }
  }
  const std::string& error() const { return error_; }
  bool has_error() const { return has_error_; }

 private:
  bool has_error_ = false;
  std::string error_;
};

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  // Read in blocks straight into the result: no stream copy of a file that
  // may be tens of MB (the refresher's published offers).
  std::string contents;
  in.seekg(0, std::ios::end);  // a pipe or /proc file has no size: read as it comes
  if (const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1; size > 0) {
    contents.reserve(static_cast<size_t>(size));
  }
  in.clear();
  in.seekg(0, std::ios::beg);
  in.clear();
  char block[1 << 16];
  while (in.read(block, sizeof(block)) || in.gcount() > 0) {
    contents.append(block, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": read error"));
  return contents;
}

absl::Status ParseTextProto(absl::string_view text, absl::string_view name,
                            google::protobuf::Message* message) {
  message->Clear();
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ":", errors.has_error() ? errors.error() : "0:0: parse error"));
  }
  return absl::OkStatus();
}

absl::Status LoadTextProtoFile(const std::string& path, google::protobuf::Message* message) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseTextProto(*text, path, message);
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  return WriteFileAtomically(path, {contents});
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::initializer_list<absl::string_view> pieces) {
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat(tmp, ": ", std::strerror(errno)));
    for (absl::string_view piece : pieces) {
      out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    }
    if (!out) return absl::UnavailableError(absl::StrCat(tmp, ": write error"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat(path, ": rename: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace gpuadvisor
