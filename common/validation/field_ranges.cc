#include "common/validation/field_ranges.h"

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.pb.h"

namespace gpuadvisor::validation {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The rows by field, resolved once against the generated pool (a row whose
// field is not linked into this binary is simply never met).
const absl::flat_hash_map<const FieldDescriptor*, const FieldRange*>& RowsByField() {
  static const auto* rows = [] {
    auto* map = new absl::flat_hash_map<const FieldDescriptor*, const FieldRange*>();
    for (const FieldRange& range : kFieldRanges) {
      const FieldDescriptor* field =
          DescriptorPool::generated_pool()->FindFieldByName(std::string(range.field));
      if (field != nullptr) map->emplace(field, &range);
    }
    return map;
  }();
  return *rows;
}

std::string Number(double v) {
  // Integers as integers (1048576, not 1.04858e+06); others as %g.
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  return absl::StrCat(v);
}

std::string Join(absl::string_view path, const FieldDescriptor* f, int index) {
  std::string out = path.empty() ? f->name() : absl::StrCat(path, ".", f->name());
  if (index >= 0) absl::StrAppend(&out, "[", index, "]");
  return out;
}

}  // namespace

bool IsNumeric(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

double NumericValue(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    default:
      return 0;
  }
}

const FieldRange* FindRange(const FieldDescriptor* field) {
  const auto& rows = RowsByField();
  auto it = rows.find(field);
  return it == rows.end() ? nullptr : it->second;
}

absl::Status CheckValue(const FieldRange& range, double value, absl::string_view path) {
  if (InRange(range, value)) return absl::OkStatus();
  std::string unit(range.unit.empty() ? "" : " ");
  unit.append(range.unit.data(), range.unit.size());
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": must be finite, >= ", Number(range.min), " and <= ", Number(range.max), unit,
      range.zero_is_unset && range.min > 0 ? ", or 0 (unset)" : "", " (got ", Number(value), ")"));
}

namespace {

// A message type's fields that CheckRanges reads: sub-messages and fields
// with a row, in field order, with their rows; the others are never met.
// Resolved once per type: the walk runs on every request, so each thread
// keeps its own view of the shared table and locks only on a type it has
// not met yet.
using CheckedFields = std::vector<std::pair<const FieldDescriptor*, const FieldRange*>>;

const CheckedFields& ResolveCheckedFields(const Descriptor* d) {
  static std::mutex mu;
  static auto* by_type =
      new absl::flat_hash_map<const Descriptor*, std::unique_ptr<CheckedFields>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<CheckedFields>& fields = (*by_type)[d];
  if (fields == nullptr) {
    fields = std::make_unique<CheckedFields>();
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      const FieldRange* range =
          f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? nullptr : FindRange(f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE || range != nullptr) {
        fields->emplace_back(f, range);
      }
    }
  }
  return *fields;
}

const CheckedFields& CheckedFieldsOf(const Descriptor* d) {
  thread_local absl::flat_hash_map<const Descriptor*, const CheckedFields*> seen;
  const CheckedFields*& fields = seen[d];
  if (fields == nullptr) fields = &ResolveCheckedFields(d);
  return *fields;
}

// Where a message sits under the caller's path: a chain up to the root,
// spelled ("workload.model.architecture") only for an error.
struct Place {
  const Place* parent;     // null at the root
  absl::string_view root;  // the caller's path, at the root
  const FieldDescriptor* field;
  int index;  // -1: a singular field
};

std::string Spell(const Place& at) {
  return at.parent == nullptr ? std::string(at.root) : Join(Spell(*at.parent), at.field, at.index);
}

absl::Status CheckAt(const Message& message, const Place& at) {
  const Reflection* r = message.GetReflection();
  for (const auto& [f, range] : CheckedFieldsOf(message.GetDescriptor())) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(message, f); ++k) {
          const Place place{&at, {}, f, k};
          if (absl::Status s = CheckAt(r->GetRepeatedMessage(message, f, k), place); !s.ok()) {
            return s;
          }
        }
      } else if (r->HasField(message, f)) {
        const Place place{&at, {}, f, -1};
        if (absl::Status s = CheckAt(r->GetMessage(message, f), place); !s.ok()) return s;
      }
      continue;
    }
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(message, f); ++k) {
        const double value = NumericValue(message, f, k);
        if (!InRange(*range, value)) return CheckValue(*range, value, Join(Spell(at), f, k));
      }
    } else if (!f->has_presence() || r->HasField(message, f)) {
      const double value = NumericValue(message, f, -1);
      if (!InRange(*range, value)) return CheckValue(*range, value, Join(Spell(at), f, -1));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRanges(const Message& message, absl::string_view path) {
  return CheckAt(message, Place{nullptr, path, nullptr, -1});
}

}  // namespace gpuadvisor::validation
