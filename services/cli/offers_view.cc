#include "services/cli/offers_view.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "services/cli/proto_flags.h"
#include "services/cli/table.h"

namespace gpuadvisor::cli {
namespace {

using catalog::v1::Offer;
using catalog::v1::PurchaseOption;

int Gpus(const Offer& o) { return o.gpus_per_node() * std::max(1, o.nodes()); }

std::string Money(double usd) { return usd > 0 ? absl::StrFormat("%.2f", usd) : "-"; }

std::string Bytes(int64_t bytes) {
  return bytes > 0 ? absl::StrFormat("%.0f GB", static_cast<double>(bytes) / 1e9) : "-";
}

std::string Shape(const Offer& o) {
  return o.nodes() > 1 ? absl::StrFormat("%dx%d %s", o.nodes(), o.gpus_per_node(), o.gpu_model())
                       : absl::StrFormat("%dx %s", o.gpus_per_node(), o.gpu_model());
}

// "nvlink", "on-demand": the value's short name, '-' for '_'; "-" when unset.
std::string Lower(const google::protobuf::EnumDescriptor* type, int value) {
  if (value == 0) return "-";
  std::string name = EnumShortName(type, value);
  std::replace(name.begin(), name.end(), '_', '-');
  return name.empty() ? "-" : name;
}

int64_t MemoryOf(const GpuMemory& memory, const std::string& gpu) {
  auto it = memory.find(gpu);
  return it == memory.end() ? 0 : it->second;
}

// Ascending with 0 ("not sold") last.
double PriceKey(double usd) { return usd > 0 ? usd : std::numeric_limits<double>::infinity(); }

}  // namespace

double OfferPrice(const Offer& offer, PurchaseOption purchase) {
  switch (purchase) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return offer.spot_usd_per_hour();
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return offer.reserved_usd_per_hour();
    case catalog::v1::PURCHASE_OPTION_ON_DEMAND:
      return offer.on_demand_usd_per_hour();
    default:
      return offer.on_demand_usd_per_hour() > 0 ? offer.on_demand_usd_per_hour()
                                                : offer.spot_usd_per_hour();
  }
}

const std::vector<std::string>& OfferSortKeys() {
  static const auto* keys = new std::vector<std::string>{
      "price", "price_per_gpu", "vram", "gpus", "vcpus", "ram", "provider", "region", "gpu"};
  return *keys;
}

absl::Status SortOffers(absl::string_view key, PurchaseOption purchase, const GpuMemory& memory,
                        std::vector<Offer>* offers) {
  // Each key as a number to sort ascending (descending keys negated), or a name.
  std::function<double(const Offer&)> number;
  std::function<const std::string&(const Offer&)> name;
  if (key == "price") {
    number = [purchase](const Offer& o) { return PriceKey(OfferPrice(o, purchase)); };
  } else if (key == "price_per_gpu") {
    number = [purchase](const Offer& o) { return PriceKey(OfferPrice(o, purchase)) / Gpus(o); };
  } else if (key == "vram") {
    number = [&memory](const Offer& o) {
      return -static_cast<double>(MemoryOf(memory, o.gpu_model()));
    };
  } else if (key == "gpus") {
    number = [](const Offer& o) { return -static_cast<double>(Gpus(o)); };
  } else if (key == "vcpus") {
    number = [](const Offer& o) { return -static_cast<double>(o.vcpus()); };
  } else if (key == "ram") {
    number = [](const Offer& o) { return -static_cast<double>(o.ram_bytes()); };
  } else if (key == "provider") {
    name = [](const Offer& o) -> const std::string& { return o.provider(); };
  } else if (key == "region") {
    name = [](const Offer& o) -> const std::string& { return o.region(); };
  } else if (key == "gpu") {
    name = [](const Offer& o) -> const std::string& { return o.gpu_model(); };
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--sort: unknown key \"", key, "\"; one of ",
                                                   absl::StrJoin(OfferSortKeys(), ", ")));
  }
  std::stable_sort(offers->begin(), offers->end(), [&](const Offer& a, const Offer& b) {
    if (number) return number(a) < number(b);
    return name(a) < name(b);
  });
  return absl::OkStatus();
}

// "C-AWS 2026-11-29": the price's source and date; "-" when neither is known.
// A spot price from another source adds its own: "C-GCP 2026-11-29; spot
// C-GCPB 2024-09-16".
std::string PricedOf(const Offer& o) {
  const bool both = !o.price_source().empty() && !o.as_of().empty();
  const bool none = o.price_source().empty() && o.as_of().empty();
  std::string text = absl::StrCat(none ? "-" : "", o.price_source(), both ? " " : "", o.as_of());
  if (!o.spot_as_of().empty()) {
    absl::StrAppend(&text, "; spot ", o.spot_price_source(),
                    o.spot_price_source().empty() ? "" : " ", o.spot_as_of());
  }
  return text;
}

std::vector<std::vector<std::string>> OfferRows(const std::vector<Offer>& offers,
                                                PurchaseOption purchase, const GpuMemory& memory) {
  const std::string at =
      purchase == catalog::v1::PURCHASE_OPTION_UNSPECIFIED
          ? ""
          : absl::StrCat(" ", Lower(catalog::v1::PurchaseOption_descriptor(), purchase));
  std::vector<std::vector<std::string>> rows = {
      {"PROVIDER", "INSTANCE", "REGION", "GPUS", "VRAM", "VCPUS", "RAM", "LINK", "FABRIC",
       "MAX NODES", "ON-DEMAND", "SPOT", absl::StrCat("USD/GPU-H", at), "PRICED", "FLAG"}};
  for (const Offer& o : offers) {
    const double price = OfferPrice(o, purchase);
    // A price the catalog flags (Offer.price_flags) is marked "!": answers
    // never rank on it; FLAG says why.
    auto mark = [&](PurchaseOption option, double usd) {
      for (const catalog::v1::PriceFlag& f : o.price_flags()) {
        if (f.purchase_option() == option) return absl::StrCat(Money(usd), "!");
      }
      return Money(usd);
    };
    rows.push_back(
        {o.provider(), o.instance_type(), o.region(), Shape(o),
         Bytes(MemoryOf(memory, o.gpu_model())), o.vcpus() > 0 ? absl::StrCat(o.vcpus()) : "-",
         Bytes(o.ram_bytes()), Lower(catalog::v1::LinkType_descriptor(), o.link()),
         Lower(catalog::v1::FabricType_descriptor(), o.fabric()), absl::StrCat(o.max_nodes()),
         mark(catalog::v1::PURCHASE_OPTION_ON_DEMAND, o.on_demand_usd_per_hour()),
         mark(catalog::v1::PURCHASE_OPTION_SPOT, o.spot_usd_per_hour()),
         price > 0 ? Money(price / Gpus(o)) : "-", PricedOf(o),
         o.price_flags().empty() ? "" : o.price_flags(0).reason()});
  }
  return rows;
}

std::vector<std::vector<std::string>> GpuGroupRows(const std::vector<Offer>& offers,
                                                   PurchaseOption purchase,
                                                   const GpuMemory& memory) {
  struct Group {
    std::set<int> counts;
    std::set<std::string> providers;
    int offers = 0;
    double best = 0, best_on_demand = 0, best_spot = 0;  // USD per GPU-hour; 0 = none
    std::string on_demand_where, spot_where;
  };
  std::map<std::string, Group> groups;
  auto lower = [](double* best, double value) {
    if (value > 0 && (*best == 0 || value < *best)) {
      *best = value;
      return true;
    }
    return false;
  };
  for (const Offer& o : offers) {
    Group& g = groups[o.gpu_model()];
    g.counts.insert(Gpus(o));
    g.providers.insert(o.provider());
    ++g.offers;
    lower(&g.best, OfferPrice(o, purchase) / Gpus(o));
    if (lower(&g.best_on_demand, o.on_demand_usd_per_hour() / Gpus(o))) {
      g.on_demand_where = absl::StrCat(o.provider(), "/", o.instance_type());
    }
    if (lower(&g.best_spot, o.spot_usd_per_hour() / Gpus(o))) {
      g.spot_where = absl::StrCat(o.provider(), "/", o.instance_type());
    }
  }
  std::vector<const std::pair<const std::string, Group>*> order;
  for (const auto& entry : groups) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return PriceKey(a->second.best) < PriceKey(b->second.best);
  });
  std::vector<std::vector<std::string>> rows = {{"GPU", "VRAM", "QTY PER OFFER", "PROVIDERS",
                                                 "OFFERS", "ON-DEMAND USD/GPU-H", "CHEAPEST AT",
                                                 "SPOT USD/GPU-H", "CHEAPEST AT"}};
  for (const auto* entry : order) {
    const Group& g = entry->second;
    rows.push_back({entry->first, Bytes(MemoryOf(memory, entry->first)),
                    absl::StrJoin(g.counts, ", "), CutToWidth(absl::StrJoin(g.providers, ","), 32),
                    absl::StrCat(g.offers), Money(g.best_on_demand),
                    g.on_demand_where.empty() ? "-" : g.on_demand_where, Money(g.best_spot),
                    g.spot_where.empty() ? "-" : g.spot_where});
  }
  return rows;
}

}  // namespace gpuadvisor::cli
