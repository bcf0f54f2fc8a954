// Stage 2b: pre-rank. The fitting candidates (recommend_rank.cc) are ranked
// by ObjectiveKey on the catalog's list prices, by a streaming merge of each
// cell's offers cheapest first, and the best `cap` go to the quote
// (recommend_quote.cc), with every candidate tied with the max_results-th
// within the pre-rank's band (PreRankKeep) less those their kind outranks
// (DropOutranked). The final rank (recommend_decide.cc) uses the same key on
// the quoted prices.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/small_table.h"

namespace gpuadvisor::gateway::recommend {
namespace {

using catalog::v1::PurchaseOption;

// One stream per (unit, fitting cluster size, option), over the cell's
// offers by list price: the key grows along each stream (hours and
// throughput are the configuration's, the price only rises), so a heap of
// stream heads yields candidates in key order. The fastest objective's key
// is the configuration's hours alone: its streams go by offer index. A
// stream is a cell's offers (or, in part mode, a part's), with their list
// prices when the index has them in stream order, and its configuration's
// numbers that the key reads.
struct Stream {
  absl::Span<const int32_t> offers;
  const double* prices;  // nullptr: read the offer's facts
  size_t pos;
  int unit, config, step, option_pos;
  double factor;  // nodes + spare
  double hours, tokens_per_second;
};

// A stream's current candidate, kept in the heap itself (no indirection per
// comparison); ordered as Ranked.
struct Head {
  double key;
  int offer, step, option_pos;
  int stream;
  double price;
  bool operator<(const Head& o) const {
    return key != o.key       ? key < o.key
           : offer != o.offer ? offer < o.offer
           : step != o.step   ? step < o.step
                              : option_pos < o.option_pos;
  }
};

class StreamMerge {
 public:
  explicit StreamMerge(RunState& run)
      : run_(run),
        fastest_(run.objective_ == v1::OBJECTIVE_FASTEST),
        check_names_(run.name_filtered_ && !run.part_mode_) {}

  // Makes the streams; returns how many candidates they hold.
  int64_t MakeStreams() {
    int64_t total = 0;
    const std::vector<OfferCell>& cells = run_.index_->cells();
    for (int u = 0; u < static_cast<int>(run_.units_.size()); ++u) {
      const Unit& unit = run_.units_[u];
      const OfferCell& cell = cells[unit.cell];
      for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
        const auto [step, config] = run_.fitting_[k];
        const sizing::v1::ConfigurationEstimate& e = run_.Est(config);
        for (int pos = 0; pos < static_cast<int>(run_.options_.size()); ++pos) {
          const int slot = OptionSlot(run_.options_[pos]);
          if (!cell.sold[slot]) continue;
          total += unit.count;
          Stream stream{
              {},
              nullptr,
              0,
              u,
              config,
              step,
              pos,
              static_cast<double>((int32_t{1} << step) + run_.SpareOf(run_.options_[pos])),
              e.estimated_hours(),
              e.tokens_per_second()};
          if (unit.parts_end == unit.parts_begin) {
            stream.offers = fastest_ ? absl::MakeConstSpan(cell.offers)
                                     : absl::MakeConstSpan(cell.by_price[slot]);
            stream.prices = fastest_ ? nullptr : cell.price[slot].data();
            streams_.push_back(stream);
            continue;
          }
          for (int p = unit.parts_begin; p < unit.parts_end; ++p) {
            const CellPart& part = *run_.parts_[p];
            stream.offers = fastest_ ? run_.index_->PartOffers(part, run_.parts_by_region_)
                                     : run_.index_->PartByPrice(part, slot, run_.parts_by_region_);
            streams_.push_back(stream);
          }
        }
      }
    }
    return total;
  }

  // The candidates in key order until `cap` are taken (and those that tie
  // with the last one when equal keys may hide unequal prices).
  std::vector<Ranked> Take(int cap, int64_t total) {
    // Past the cap, candidates tied with the max_results-th (within the
    // pre-rank's tie band) are taken too: the final rank may order them first.
    const size_t k = static_cast<size_t>(std::max(run_.max_results_, 1));
    const double band = run_.PreRankBand();
    double limit = -std::numeric_limits<double>::infinity();
    std::vector<Head> heap;
    heap.reserve(streams_.size());
    for (int i = 0; i < static_cast<int>(streams_.size()); ++i) {
      Head head;
      if (Settle(i, head)) heap.push_back(head);
    }
    auto later = [](const Head& a, const Head& b) { return b < a; };  // min-heap
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<Ranked> selected;
    selected.reserve(std::min<int64_t>(total, cap) + 8);
    bool band_by_stream = false;  // selected[cap, end) is in stream order
    while (!heap.empty()) {
      const Head& top = heap.front();
      // Each stream is in the full scan's order when equal keys mean equal
      // prices (then offer index breaks the tie): stop at the cap. Otherwise
      // take every candidate that ties with the last one taken, and the sort
      // below restores the full scan's order among them.
      if (static_cast<int>(selected.size()) >= cap && !(top.key <= limit) &&
          (run_.index_->distinct_price_keys() || !(top.key == selected.back().key))) {
        break;
      }
      if (static_cast<int>(selected.size()) >= cap && run_.index_->distinct_price_keys()) {
        TakeBand(heap, limit, selected);
        band_by_stream = true;
        break;
      }
      const Stream& stream = streams_[top.stream];
      selected.push_back(
          {top.key, top.offer, top.step, top.option_pos, stream.unit, stream.config, top.price});
      if (selected.size() == k) limit = top.key + band * std::abs(top.key);
      std::pop_heap(heap.begin(), heap.end(), later);
      Head& next = heap.back();  // the popped head's slot
      ++streams_[next.stream].pos;
      if (Settle(next.stream, next)) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
    }
    Cut(band_by_stream, static_cast<size_t>(cap), selected);
    return selected;
  }

 private:
  // The pre-rank's cut of the candidates taken, in the pre-rank's order.
  // Streams that hold each offer's candidates in the full scan's order
  // (distinct price keys) come out of the heap in that order already. A band
  // taken stream by stream holds each kind's candidates (at a cluster size
  // and option) in price order, as the cut reads them, unless a kind's
  // offers are in several streams (part mode): then it is sorted first,
  // else only what the cut keeps (the cut keeps the order it is given).
  void Cut(bool band_by_stream, size_t cap, std::vector<Ranked>& selected) {
    const auto band =
        selected.begin() + static_cast<std::ptrdiff_t>(std::min(cap, selected.size()));
    if (band_by_stream && run_.part_mode_) {
      std::sort(band, selected.end());
    } else if (!band_by_stream && !std::is_sorted(selected.begin(), selected.end())) {
      std::sort(selected.begin(), selected.end());
    }
    run_.PreRankCut(selected, cap);
    if (band_by_stream && !run_.part_mode_) {
      std::sort(selected.begin() + static_cast<std::ptrdiff_t>(std::min(cap, selected.size())),
                selected.end());
    }
  }

  // Past the cap (and the max_results-th: `limit` is known), the rest is the
  // band: every candidate with a key within `limit`. Each stream's keys only
  // grow, so each is read on from its head to its first key past the limit,
  // without the heap: stream by stream, each in its own order (they all come
  // after those taken: the heap held the least).
  void TakeBand(std::vector<Head>& heads, double limit, std::vector<Ranked>& selected) {
    for (Head& head : heads) {
      Stream& stream = streams_[head.stream];
      while (head.key <= limit) {
        selected.push_back({head.key, head.offer, head.step, head.option_pos, stream.unit,
                            stream.config, head.price});
        ++stream.pos;
        if (!Settle(head.stream, head)) break;
      }
    }
  }

  // The stream's next candidate that passes the name filters, from its
  // position on; false at its end. In part mode every offer of a part passes.
  bool Settle(int s, Head& head) {
    Stream& stream = streams_[s];
    while (stream.pos < stream.offers.size()) {
      const int offer = stream.offers[stream.pos];
      if (!check_names_ || run_.PassesNames(offer)) {
        // The fastest objective's key is the configuration's hours: no price
        // read (the candidate reads it if it is taken).
        const double price =
            fastest_ ? -1
            : stream.prices != nullptr
                ? stream.prices[stream.pos]
                : ListPrice(run_.index_->offers()[offer], run_.options_[stream.option_pos]);
        const double list = price * stream.factor;
        head = {ObjectiveKey(run_.objective_, stream.hours, stream.tokens_per_second, list,
                             list * stream.hours),
                offer,
                stream.step,
                stream.option_pos,
                s,
                price};
        return true;
      }
      ++stream.pos;
    }
    return false;
  }

  RunState& run_;
  const bool fastest_;
  const bool check_names_;
  std::vector<Stream> streams_;
};

}  // namespace

std::vector<Ranked> RunState::SelectCandidates(int cap, int64_t& total) {
  if (reference_ != nullptr) return reference_->Select(*this, cap, total);
  StreamMerge merge(*this);
  total = merge.MakeStreams();
  return merge.Take(cap, total);
}

double RunState::PreRankBand() const {
  if (tie_band_ >= 0) return tie_band_;
  if (pre_rank_band_ >= 0) return pre_rank_band_;  // the estimates are set by then
  double& band = pre_rank_band_;
  band = 0;
  for (size_t config = 0; config < estimates_.size(); ++config) {
    if (estimates_[config] == nullptr || !Est(static_cast<int>(config)).fits()) continue;
    // The interval that bounds the final band: tokens/s for best value, the
    // run hours otherwise (the cost's and the expected hours' relative
    // half-widths are at most the run hours': their fixed parts only narrow
    // them).
    const sizing::v1::ConfigurationEstimate& e = Est(static_cast<int>(config));
    band = std::max(band, RelativeHalfWidth(objective_ == v1::OBJECTIVE_BEST_VALUE
                                                ? e.tokens_per_second_interval()
                                                : e.estimated_hours_interval()));
  }
  return band;
}

size_t RunState::PreRankKeep(const std::vector<Ranked>& sorted, size_t cap) const {
  size_t keep = std::min(cap, sorted.size());
  const size_t k = std::min(static_cast<size_t>(max_results_), sorted.size());
  if (k == 0) return keep;
  const double limit = TieLimit(sorted[k - 1].key, PreRankBand());
  while (keep < sorted.size() && sorted[keep].key <= limit) ++keep;
  return keep;
}

void RunState::PreRankCut(std::vector<Ranked>& sorted, size_t cap) const {
  sorted.resize(PreRankKeep(sorted, cap));
  DropOutranked(sorted, cap);
}

// Past the cap, a candidate is left out when max_results candidates of its
// kind (OfferIndex::kind: its quote differs from theirs only through the
// price; with an in-process quote, of its quote class: kinds of other
// providers the book quotes alike, quote_classes.h) at lower distinct prices
// are in the cut. Each of them quotes the same hours, warnings and risk at a
// lower price (a lower hourly price, a lower total at every confidence, the
// same expected hours), so survives whenever it does and ranks before it;
// their prices differ, so GroupRegions keeps each as a row, each in a place
// (provider, region) of its own, and they fill max_results places of the list
// before it; the head's three measures and every what-if (the ones that do
// not qualify too, by total) find one of them first; and when it misses the
// one limit checked after the quote (max_usd_per_hour, max_total_usd or
// deadline_hours), they miss it too, nearer the limit, or one of them
// survives. Not left out:
//  - when its offer has another candidate in the cut (an offer is quoted
//    whole or not at all, as the exclusions and the other-option what-ifs
//    read it);
//  - for reserved (terms per offer);
//  - with a limit checked after the quote, when every candidate of its
//    offer is in the cut (quoted, its offer would count among the
//    exclusions if none survived; with one outside the cut it never does);
//  - with two or more such limits (the cheaper ones could pass one and miss
//    another while it is the nearest miss of the first);
//  - at all when equal keys may hide unequal prices.
void RunState::DropOutranked(std::vector<Ranked>& kept, size_t cap) const {
  const v1::Constraints& c = request_.constraints();
  const int limits =
      (c.max_usd_per_hour() > 0) + (c.max_total_usd() > 0) + (c.deadline_hours() > 0);
  if (kept.size() <= cap || !index_->distinct_price_keys() || limits > 1) return;
  const std::vector<char> outranked = Outranked(kept, cap);
  if (outranked.empty()) return;
  // By offer: its candidates in the cut, and whether one of them is kept. An
  // offer with a candidate kept keeps all of its candidates, and so does one
  // that could count among the exclusions.
  struct Marks {
    int in_cut = 0;
    bool kept = false;
  };
  SmallTable<Marks, int32_t> offers(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    Marks& marks = offers[kept[i].offer];
    ++marks.in_cut;
    marks.kept = marks.kept || !outranked[i];
  }
  size_t out = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    const Marks& marks = offers[kept[i].offer];
    const bool countable = limits > 0 && marks.in_cut >= units_[kept[i].unit].candidates_per_offer;
    if (!outranked[i] || marks.kept || countable) kept[out++] = kept[i];
  }
  kept.resize(out);
}

// The pre-rank orders by the catalog's list prices; pricing's UpdatePrices
// can lower an offer's price in the book under the same catalog version, far
// below where the merge stopped. Such an offer (when the book quotes in
// process, the only time the run knows the book) joins the cut whole, each
// fitting cluster size at each option keyed on the book's price, when one of
// those keys is within the cut's (no greater than its greatest): so the final
// rank, on the quotes, puts it where its price says, and a discount on many
// offers adds only those that would have made the cut at their new prices.
void RunState::AddCheaperInBook(std::vector<Ranked>& ranked) {
  if (quote_classes_ == nullptr || quote_classes_->cheaper_in_book().empty()) return;
  const std::vector<QuoteClasses::Repriced>& cheaper = quote_classes_->cheaper_in_book();
  const std::vector<OfferCell>& cells = index_->cells();
  // The unit holding an offer: by cell, or by offer (the full scan's units).
  std::vector<int32_t> unit_of_cell(cells.size(), -1);
  SmallTable<int32_t, int32_t> unit_of_offer(reference_ != nullptr ? units_.size() : 0);
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    if (units_[u].offer >= 0) {
      unit_of_offer[units_[u].offer] = u;
    } else {
      unit_of_cell[units_[u].cell] = u;
    }
  }
  auto unit_of = [&](int32_t offer) -> int {
    if (reference_ == nullptr) return unit_of_cell[index_->offers()[offer].cell];
    const int32_t* u = unit_of_offer.find(offer);
    return u == nullptr ? -1 : *u;
  };
  SmallTable<char, int32_t> in_cut(ranked.size());
  double greatest = -std::numeric_limits<double>::infinity();
  for (const Ranked& r : ranked) {
    in_cut[r.offer] = 1;
    greatest = std::max(greatest, r.key);
  }
  std::vector<Ranked> offer_candidates;
  for (const QuoteClasses::Repriced& repriced : cheaper) {
    const int32_t offer = repriced.offer;
    const OfferFacts& f = index_->offers()[offer];
    const int u = unit_of(offer);
    if (u < 0 || in_cut.find(offer) != nullptr || !PassesNames(offer)) continue;
    const Unit& unit = units_[u];
    offer_candidates.clear();
    bool within = false;
    for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
      const auto [step, config] = fitting_[k];
      for (int pos = 0; pos < static_cast<int>(options_.size()); ++pos) {
        const PurchaseOption option = options_[pos];
        if (!cells[f.cell].sold[OptionSlot(option)]) continue;
        const double booked =
            option == catalog::v1::PURCHASE_OPTION_SPOT       ? repriced.spot_usd_per_hour
            : option == catalog::v1::PURCHASE_OPTION_RESERVED ? 0
                                                              : repriced.on_demand_usd_per_hour;
        const double price = booked > 0 ? booked : ListPrice(f, option);
        const double key = PreRankKeyOf(config, price * ((int32_t{1} << step) + SpareOf(option)));
        within = within || key <= greatest;
        offer_candidates.push_back({key, offer, step, pos, u, config, price});
      }
    }
    if (within) ranked.insert(ranked.end(), offer_candidates.begin(), offer_candidates.end());
  }
}

// The group Outranked counts a candidate in: its kind (or quote class),
// cluster size step and option.
int64_t RunState::GroupKey(const Ranked& r) const {
  const int32_t kind = index_->kind(r.offer);
  const int32_t group = quote_classes_ != nullptr ? quote_classes_->of_kind(kind) : kind;
  return int64_t{group} << 8 | r.step << 2 | r.option_pos;
}

// By position in `kept`, whether max_results lower distinct prices of its
// group (GroupKey) are in the cut; empty when none is. That is a price above
// the max_results-th lowest distinct price of its group: each group with
// more than max_results candidates keeps its lowest distinct prices in a
// sorted run of max_results slots, so the candidates are read in any order
// (the fastest objective's come by offer index, its key being the hours)
// and none is sorted.
std::vector<char> RunState::Outranked(const std::vector<Ranked>& kept, size_t cap) const {
  const size_t k = static_cast<size_t>(std::max(max_results_, 1));
  if (kept.size() <= std::max(cap, k)) return {};
  struct Group {
    size_t size = 0;
    size_t run = 0;  // offset of its run in `lowest` (groups past k only)
  };
  std::vector<Group> groups;
  std::vector<std::pair<int32_t, double>> at(kept.size(), {-1, 0});  // group, price
  SmallTable<int32_t> number(kept.size());                           // group + 1, by GroupKey
  for (size_t i = 0; i < kept.size(); ++i) {
    const Ranked& r = kept[i];
    const catalog::v1::PurchaseOption option = options_[r.option_pos];
    if (index_->kind(r.offer) < 0 || option == catalog::v1::PURCHASE_OPTION_RESERVED) continue;
    int32_t& n = number[GroupKey(r)];
    if (n == 0) {
      groups.emplace_back();
      n = static_cast<int32_t>(groups.size());
    }
    ++groups[n - 1].size;
    at[i] = {n - 1, ListPriceOf(r)};
  }
  std::vector<double> lowest;
  for (Group& g : groups) {
    if (g.size <= k) continue;
    g.run = lowest.size();
    lowest.resize(lowest.size() + k, std::numeric_limits<double>::infinity());
  }
  if (lowest.empty()) return {};
  auto run_of = [&](size_t i) -> double* {
    const int32_t g = at[i].first;
    return g < 0 || groups[g].size <= k ? nullptr : lowest.data() + groups[g].run;
  };
  for (size_t i = 0; i < kept.size(); ++i) {
    double* run = run_of(i);
    const double price = at[i].second;
    if (run == nullptr || !(price < run[k - 1])) continue;
    double* place = std::lower_bound(run, run + k, price);
    if (*place == price) continue;
    std::copy_backward(place, run + k - 1, run + k);
    *place = price;
  }
  std::vector<char> outranked(kept.size(), 0);
  bool any = false;
  for (size_t i = cap; i < kept.size(); ++i) {
    const double* run = run_of(i);
    if (run != nullptr && at[i].second > run[k - 1]) outranked[i] = any = true;
  }
  if (!any) return {};
  return outranked;
}

}  // namespace gpuadvisor::gateway::recommend
