#include "services/catalog/gpu_name_resolver.h"

#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Gpu;

// Splits at every non-alphanumeric character; tokens are upper case.
std::vector<std::string> Tokens(absl::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "80GB" (or "80G" when allow_g).
bool IsMemoryToken(absl::string_view t) {
  return (absl::EndsWith(t, "GB") && AllDigits(t.substr(0, t.size() - 2))) ||
         (absl::EndsWith(t, "G") && AllDigits(t.substr(0, t.size() - 1)));
}

bool IsVendorWord(absl::string_view t) {
  return t == "NVIDIA" || t == "TESLA" || t == "GEFORCE" || t == "QUADRO" || t == "AMD" ||
         t == "INSTINCT" || t == "INTEL" || t == "HABANA";
}

template <typename Pred>
std::vector<std::string> Without(const std::vector<std::string>& tokens, Pred drop) {
  std::vector<std::string> out;
  for (const std::string& t : tokens) {
    if (!drop(t)) out.push_back(t);
  }
  return out;
}

}  // namespace

GpuNameResolver::GpuNameResolver(const v1::GpuList& gpus) : GpuNameResolver(gpus.gpus()) {}

GpuNameResolver::GpuNameResolver(const google::protobuf::RepeatedPtrField<Gpu>& gpus) {
  // Canonical names first, so an alias never shadows another GPU's name.
  for (const Gpu& gpu : gpus) by_key_.emplace(Key(gpu.name()), gpu.name());
  for (const Gpu& gpu : gpus) Add(gpu);
  facts_.reserve(static_cast<size_t>(gpus.size()));
  for (const Gpu& gpu : gpus) {
    if (!facts_by_name_.emplace(gpu.name(), facts_.size()).second) continue;
    facts_.push_back(Facts{gpu.name(), gpu.vendor(), gpu.memory_bytes(), gpu.memory_type(),
                           gpu.nvlink_bytes_per_second(), gpu.pcie_bytes_per_second()});
    families_.push_back(GpuFamily(gpu.name()));  // once, not per imported row
  }
}

const GpuNameResolver::Facts* GpuNameResolver::FactsOf(absl::string_view canonical_name) const {
  auto it = facts_by_name_.find(canonical_name);
  return it == facts_by_name_.end() ? nullptr : &facts_[it->second];
}

std::vector<const GpuNameResolver::Facts*> GpuNameResolver::Variants(
    absl::string_view canonical_name) const {
  std::vector<const Facts*> variants;
  auto it = facts_by_name_.find(canonical_name);
  if (it == facts_by_name_.end()) return variants;
  const std::string& family = families_[it->second];
  for (size_t i = 0; i < facts_.size(); ++i) {
    if (families_[i] == family) variants.push_back(&facts_[i]);
  }
  return variants;
}

void GpuNameResolver::Add(const Gpu& gpu) {
  for (const std::string& alias : gpu.aliases()) by_key_.emplace(Key(alias), gpu.name());
}

std::string GpuNameResolver::Key(absl::string_view name) {
  std::string key;
  key.reserve(name.size());
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
    }
  }
  return key;
}

const std::string* GpuNameResolver::Find(const std::vector<std::string>& tokens) const {
  if (tokens.empty()) return nullptr;
  auto it = by_key_.find(absl::StrJoin(tokens, ""));
  return it == by_key_.end() ? nullptr : &it->second;
}

std::optional<std::string> GpuNameResolver::Canonical(absl::string_view name) const {
  if (auto it = by_key_.find(Key(name)); it != by_key_.end()) return it->second;

  // 1. Vendor words and NVLink bridges.
  std::vector<std::string> tokens =
      Without(Tokens(name), [](const std::string& t) { return IsVendorWord(t) || t == "NVLINK"; });
  if (const std::string* hit = Find(tokens)) return *hit;
  // 2. "80G" -> "80GB".
  for (std::string& t : tokens) {
    if (absl::EndsWith(t, "G") && AllDigits(absl::string_view(t).substr(0, t.size() - 1))) {
      t.push_back('B');
    }
  }
  if (const std::string* hit = Find(tokens)) return *hit;
  // 3. Memory tokens.
  tokens = Without(tokens, [](const std::string& t) { return IsMemoryToken(t); });
  if (const std::string* hit = Find(tokens)) return *hit;
  // 4. SXM generations, then SXM itself.
  for (std::string& t : tokens) {
    if (absl::StartsWith(t, "SXM") && AllDigits(absl::string_view(t).substr(3))) t = "SXM";
  }
  if (const std::string* hit = Find(tokens)) return *hit;
  tokens = Without(tokens, [](const std::string& t) { return t == "SXM"; });
  if (const std::string* hit = Find(tokens)) return *hit;
  // 5. "RTX" prefix, added or dropped.
  if (tokens.empty()) return std::nullopt;
  std::string joined = absl::StrJoin(tokens, "");
  if (absl::StartsWith(joined, "RTX")) {
    if (auto it = by_key_.find(joined.substr(3)); it != by_key_.end()) return it->second;
  } else if (auto it = by_key_.find("RTX" + joined); it != by_key_.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::string GpuFamily(absl::string_view canonical_name) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : canonical_name) {
    if (c == '-') {
      parts.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
    }
  }
  parts.push_back(std::move(current));
  while (parts.size() > 1) {
    const std::string& last = parts.back();
    if (last == "SXM" || last == "PCIE" || last == "NVL" || IsMemoryToken(last)) {
      parts.pop_back();
    } else {
      break;
    }
  }
  return absl::StrJoin(parts, "-");
}

}  // namespace gpuadvisor::catalog
