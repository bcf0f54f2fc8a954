#include "services/catalog/import/python_literal.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuadvisor::catalog {
namespace {

class PyLiteralParser {
 public:
  explicit PyLiteralParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<PyValue> ParseAll() {
    PyValue value;
    if (absl::Status s = Parse(value, 0); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " at offset ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  absl::Status Parse(PyValue& out, int depth) {
    if (depth > 32) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseDict(out, depth);
    if (c == '[' || c == '(') return ParseList(out, depth, c == '[' ? ']' : ')');
    if (c == '\'' || c == '"') {
      out.kind = PyValue::Kind::kString;
      return ParseString(out.str);
    }
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
              text_[pos_] == '-' || text_[pos_] == '+')) {
        ++pos_;
      }
      if (!absl::SimpleAtod(text_.substr(start, pos_ - start), &out.number)) {
        pos_ = start;
        return Error("bad number");
      }
      out.kind = PyValue::Kind::kNumber;
      return absl::OkStatus();
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      const absl::string_view word = text_.substr(start, pos_ - start);
      if (word == "None" || word == "null") {
        out.kind = PyValue::Kind::kNone;
      } else if (word == "True" || word == "true" || word == "False" || word == "false") {
        out.kind = PyValue::Kind::kBool;
        out.number = (word == "True" || word == "true") ? 1 : 0;
      } else {
        pos_ = start;
        return Error(absl::StrCat("unknown word \"", word, "\""));
      }
      return absl::OkStatus();
    }
    return Error(absl::StrCat("unexpected character '", absl::string_view(&text_[pos_], 1), "'"));
  }

  absl::Status ParseString(std::string& out) {
    const char quote = text_[pos_++];
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote) return absl::OkStatus();
      if (c == '\\' && pos_ < text_.size()) c = text_[pos_++];
      out.push_back(c);
    }
    return Error("unterminated string");
  }

  absl::Status ParseList(PyValue& out, int depth, char close) {
    ++pos_;
    out.kind = PyValue::Kind::kList;
    if (Consume(close)) return absl::OkStatus();
    while (true) {
      out.items.emplace_back();
      if (absl::Status s = Parse(out.items.back(), depth + 1); !s.ok()) return s;
      if (Consume(close)) return absl::OkStatus();
      if (!Consume(',')) return Error("expected ',' in list");
      if (Consume(close)) return absl::OkStatus();  // trailing comma
    }
  }

  absl::Status ParseDict(PyValue& out, int depth) {
    ++pos_;
    out.kind = PyValue::Kind::kDict;
    if (Consume('}')) return absl::OkStatus();
    while (true) {
      PyValue key;
      if (absl::Status s = Parse(key, depth + 1); !s.ok()) return s;
      if (key.kind != PyValue::Kind::kString) return Error("dict key is not a string");
      if (!Consume(':')) return Error("expected ':' in dict");
      out.entries.push_back({std::move(key.str), PyValue()});
      if (absl::Status s = Parse(out.entries.back().second, depth + 1); !s.ok()) return s;
      if (Consume('}')) return absl::OkStatus();
      if (!Consume(',')) return Error("expected ',' in dict");
      if (Consume('}')) return absl::OkStatus();
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const PyValue* PyValue::Get(absl::string_view key) const {
  if (kind != Kind::kDict) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<PyValue> ParsePythonLiteral(absl::string_view text) {
  return PyLiteralParser(text).ParseAll();
}

}  // namespace gpuadvisor::catalog
