#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_PYTHON_LITERAL_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_PYTHON_LITERAL_H_

// A reader for the Python literals that catalog CSVs embed in a cell
// (SkyPilot's `GpuInfo` is a Python repr dict): dicts, lists, tuples,
// single- or double-quoted strings, numbers, None/True/False - and the JSON
// spellings null/true/false, which some fetchers leave inside a Python dict
// (Hyperstack), so neither `json` nor `ast.literal_eval` would read it.
// Pure; thread-safe.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor::catalog {

struct PyValue {
  enum class Kind { kNone, kBool, kNumber, kString, kList, kDict };
  Kind kind = Kind::kNone;
  double number = 0;           // kNumber; kBool as 0/1
  std::string str;             // kString
  std::vector<PyValue> items;  // kList (and tuples)
  // kDict, in file order. A struct of its own, not std::pair<std::string,
  // PyValue>: clang with libstdc++ 12 cannot instantiate that pair while
  // PyValue is still incomplete (C++20), so the clang build would fail.
  struct Entry;
  std::vector<Entry> entries;

  // The value of dict key `key`; nullptr if absent or not a dict.
  const PyValue* Get(absl::string_view key) const;
};

struct PyValue::Entry {
  std::string first;  // the key
  PyValue second;     // its value
};

// Parses one literal filling all of `text` (surrounding spaces allowed).
// kInvalidArgument "<problem> at offset <n>" otherwise (unterminated string,
// unknown word, trailing characters, nesting deeper than 32, ...).
absl::StatusOr<PyValue> ParsePythonLiteral(absl::string_view text);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_PYTHON_LITERAL_H_
