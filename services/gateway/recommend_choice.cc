// Choice controls, beside the name filters (recommend_start.cc): which hosts
// pass (Constraints.host_tier, min_host_reliability; the datacenter default
// of an always-on endpoint), why an offer was left out, and one row per offer
// sold alike in several regions (Constraints.group_regions).

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway::recommend {

absl::Status RunState::ResolveHostFilter() {
  const v1::Constraints& c = request_.constraints();
  // min_host_reliability's range (0-1) is the shared table's, checked at the start.
  if (!v1::HostTierChoice_IsValid(c.host_tier())) {
    return absl::InvalidArgumentError("constraints.host_tier: unknown value");
  }
  host_tier_ = c.host_tier();
  if (host_tier_ == v1::HOST_TIER_CHOICE_UNSPECIFIED) {
    host_tier_ = always_on_ ? v1::HOST_TIER_CHOICE_DATACENTER : v1::HOST_TIER_CHOICE_ANY;
    if (always_on_) {
      assumptions_.push_back(MakeAssumption(
          "constraints.host_tier", "datacenter",
          "an always-on endpoint runs on datacenter-grade hosts: marketplace community hosts "
          "(Vast hosts outside datacenters, RunPod Community Cloud) are left out; set host_tier "
          "to any (--host_tier=any) to include them"));
    }
  }
  min_host_reliability_ = c.min_host_reliability();
  reliability_filters_offers_ = min_host_reliability_ > 0 && index_->any_host_reliability();
  host_filtered_ =
      (host_tier_ == v1::HOST_TIER_CHOICE_DATACENTER && index_->any_community_host()) ||
      host_tier_ == v1::HOST_TIER_CHOICE_COMMUNITY || reliability_filters_offers_;
  group_regions_ = !c.has_group_regions() || c.group_regions();
  return absl::OkStatus();
}

void RunState::CountHostFiltered() {
  if (!host_filtered_) return;
  const std::vector<OfferFacts>& offers = index_->offers();
  if (!reliability_filters_offers_) {  // the tier alone: the index's count
    host_tier_filtered_ = host_tier_ == v1::HOST_TIER_CHOICE_DATACENTER
                              ? index_->community_hosts()
                              : static_cast<int>(offers.size()) - index_->community_hosts();
    return;
  }
  for (int offer = 0; offer < static_cast<int>(offers.size()); ++offer) {
    if (!PassesHostTier(offers[offer])) {
      ++host_tier_filtered_;
    } else if (!PassesReliability(offer)) {
      ++reliability_filtered_;
    }
  }
}

std::string RunState::HostTierText() const {
  const bool defaulted = request_.constraints().host_tier() == v1::HOST_TIER_CHOICE_UNSPECIFIED;
  return host_tier_ == v1::HOST_TIER_CHOICE_COMMUNITY
             ? "constraints.host_tier is community"
             : absl::StrCat("constraints.host_tier is datacenter",
                            defaulted ? " (the default for an always-on endpoint)" : "");
}

std::string RunState::FilteredDetail(int offer) const {
  const OfferFacts& f = index_->offers()[offer];
  std::string text;
  if (!PassesHostTier(f)) {
    text = absl::StrCat(f.community_host ? "a community (marketplace) host" : "a datacenter host",
                        ", and ", HostTierText());
  } else if (!PassesReliability(offer)) {
    text = absl::StrFormat("host reliability %.4g, under constraints.min_host_reliability %.4g",
                           index_->host_reliability(offer), min_host_reliability_);
  } else {
    text = "not among the providers, regions, GPUs or purchase options asked for";
    if (!request_.constraints().exclude_providers().empty()) {
      absl::StrAppend(&text, ", or in constraints.exclude_providers");
    }
  }
  // The example names one reason; the host filters' counts say what else.
  if (host_tier_filtered_ > 0 && PassesHostTier(f)) {
    absl::StrAppend(&text, "; ", host_tier_filtered_,
                    host_tier_ == v1::HOST_TIER_CHOICE_COMMUNITY
                        ? " datacenter hosts left out: "
                        : " community (marketplace) hosts left out: ",
                    HostTierText());
  }
  if (reliability_filtered_ > 0 && (!PassesHostTier(f) || PassesReliability(offer))) {
    absl::StrAppendFormat(&text,
                          "; %d hosts left out with a reliability under "
                          "constraints.min_host_reliability %.4g",
                          reliability_filtered_, min_host_reliability_);
  }
  return text;
}

namespace {

// What makes two survivors alike: provider, instance type (interned ids),
// option and cluster size, and the quoted USD/h and total (equal, not close).
struct AlikeKey {
  uint64_t names;  // provider, instance type
  uint64_t shape;  // option, nodes
  double usd_per_hour, total_usd;
  bool operator==(const AlikeKey& o) const {
    return names == o.names && shape == o.shape && usd_per_hour == o.usd_per_hour &&
           total_usd == o.total_usd;
  }
};

// One mix of the ids and the total's bits (0 and -0 compare equal: one
// hash); the other fields only decide equality.
uint64_t AlikeHash(const AlikeKey& k) {
  const uint64_t total = k.total_usd == 0 ? 0 : absl::bit_cast<uint64_t>(k.total_usd);
  const uint64_t h = (total ^ (k.names * 0x9E3779B97F4A7C15u) ^ k.shape) * 0xBF58476D1CE4E5B9u;
  return h ^ (h >> 31);
}

uint64_t Pair(int32_t high, int32_t low) {
  return static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32 | static_cast<uint32_t>(low);
}

// The latest survivor of each AlikeKey: an open-addressing table (linear
// probing, at most half full) sized once for the survivors, so a lookup is
// a multiply and a compare or two (GroupRegions runs over every survivor).
class LastAlike {
 public:
  explicit LastAlike(size_t keys) {
    size_t size = 16;
    while (size < 2 * keys) size *= 2;
    mask_ = size - 1;
    slots_.assign(size, -1);
    keys_.reserve(keys);
    last_.reserve(keys);
  }
  // The candidate last seen with `key`, or -1; `candidate` is the last now.
  int Exchange(const AlikeKey& key, int candidate) {
    for (size_t slot = AlikeHash(key) & mask_;; slot = (slot + 1) & mask_) {
      const int at = slots_[slot];
      if (at < 0) {
        slots_[slot] = static_cast<int>(keys_.size());
        keys_.push_back(key);
        last_.push_back(candidate);
        return -1;
      }
      if (keys_[at] == key) return std::exchange(last_[at], candidate);
    }
  }

 private:
  size_t mask_ = 0;
  std::vector<int> slots_;  // index into keys_, -1 = empty
  std::vector<AlikeKey> keys_;
  std::vector<int> last_;
};

}  // namespace

// Survivors in rank order, less those sold alike (same provider, instance
// type, purchase option, cluster size and quoted price) as a better-ranked
// one in another region: theirs are listed in also_in_regions_.
std::vector<int> RunState::GroupRegions(const std::vector<int>& survivors,
                                        const pricing::v1::QuoteResponse& quotes) {
  if (!group_regions_) return survivors;
  LastAlike last(survivors.size());
  next_alike_.assign(candidates_.size(), -1);
  std::vector<int> grouped;
  grouped.reserve(survivors.size());
  const std::vector<OfferFacts>& offers = index_->offers();
  for (int index : survivors) {
    const Candidate& candidate = candidates_[index];
    const pricing::v1::CostBreakdown& cost = quotes.quotes(candidate.quote).cost();
    const AlikeKey key{
        Pair(offers[candidate.offer_index].provider, index_->instance_type(candidate.offer_index)),
        Pair(static_cast<int32_t>(candidate.option), candidate.nodes), cost.usd_per_hour(),
        cost.total_usd()};
    if (const int previous = last.Exchange(key, index); previous < 0) {
      grouped.push_back(index);
    } else {
      next_alike_[previous] = index;
    }
  }
  if (grouped.size() < survivors.size()) {
    assumptions_.push_back(MakeAssumption(
        "constraints.group_regions", "true",
        "one row per offer sold alike in several regions (the best-ranked region shown, the "
        "others in also_in_regions); set group_regions to false (--group_regions=false) for one "
        "row per region"));
  }
  return grouped;
}

void RunState::ExplainChoice(int candidate_index, v1::Recommendation& r) const {
  const Candidate& candidate = candidates_[candidate_index];
  const auto next = [this](int index) { return next_alike_.empty() ? -1 : next_alike_[index]; };
  int alike = 0;
  for (int other = next(candidate_index); other >= 0; other = next(other), ++alike) {
    r.add_also_in_regions(
        index_->region_names()[index_->offers()[candidates_[other].offer_index].region]);
  }
  if (alike > 0) {
    r.add_notes(absl::StrCat("also sold alike, at the same price, in ", alike,
                             alike == 1 ? " other region: " : " other regions: ",
                             absl::StrJoin(r.also_in_regions(), "; ")));
  }
  if (min_host_reliability_ > 0 && index_->host_reliability(candidate.offer_index) < 0) {
    r.add_notes(absl::StrFormat(
        "host reliability unknown: %s publishes no figure, so constraints.min_host_reliability "
        "(%.4g) could not be checked",
        index_->provider_names()[index_->offers()[candidate.offer_index].provider],
        min_host_reliability_));
  }
}

}  // namespace gpuadvisor::gateway::recommend
