#include "services/pricing/price_loader.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "google/protobuf/text_format.h"
#include "services/pricing/price_book_checks.h"

namespace gpuadvisor::pricing {

std::vector<v1::OfferPrice> PricesFromOffers(const catalog::v1::CatalogSnapshot& catalog) {
  std::vector<v1::OfferPrice> prices;
  prices.reserve(static_cast<size_t>(catalog.offers_size()));
  for (const catalog::v1::Offer& offer : catalog.offers()) {
    v1::OfferPrice& price = prices.emplace_back();
    if (!offer.id().empty()) {
      price.set_offer_id(offer.id());
    } else {
      price.set_offer_id(absl::StrCat(absl::AsciiStrToLower(offer.provider()), "/",
                                      offer.instance_type(), "/", offer.region()));
    }
    price.set_provider(absl::AsciiStrToLower(offer.provider()));
    price.set_gpu_model(offer.gpu_model());
    price.set_on_demand_usd_per_hour(offer.on_demand_usd_per_hour());
    price.set_spot_usd_per_hour(offer.spot_usd_per_hour());
    price.set_reserved_usd_per_hour(offer.reserved_usd_per_hour());
    *price.mutable_commitments() = offer.commitments();
  }
  return prices;
}

absl::StatusOr<std::shared_ptr<const PriceBook>> WithUpdates(
    const PriceBook& book, const v1::UpdatePricesRequest& update) {
  if (update.prices_size() == 0) {
    return absl::InvalidArgumentError("prices: must not be empty");
  }
  absl::flat_hash_map<absl::string_view, int> seen;
  for (int i = 0; i < update.prices_size(); ++i) {
    const v1::OfferPrice& price = update.prices(i);
    if (auto e = ValidatePrice(price, {{"prices", i}})) return ToStatus(*e);
    // Operator input: also within a plausible range.
    for (auto [field, value] :
         {std::pair<const char*, double>{"on_demand_usd_per_hour", price.on_demand_usd_per_hour()},
          {"spot_usd_per_hour", price.spot_usd_per_hour()},
          {"reserved_usd_per_hour", price.reserved_usd_per_hour()}}) {
      if (auto e = CheckHourly({{"prices", i}}, field, value)) return ToStatus(*e);
    }
    auto [it, inserted] = seen.emplace(price.offer_id(), i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("prices[", i, "].offer_id: duplicate \"",
                                                     price.offer_id(), "\" (first at prices[",
                                                     it->second, "])"));
    }
    if (!book.HasOffer(price.offer_id())) {
      return absl::InvalidArgumentError(
          absl::StrCat("prices[", i, "].offer_id: unknown offer \"", price.offer_id(),
                       "\" (updates may only reprice offers of the catalog)"));
    }
  }
  if (!update.prices_as_of().empty()) {
    absl::Time unused;
    if (!ParseAsOf(update.prices_as_of(), &unused)) {
      return absl::InvalidArgumentError(
          "prices_as_of: must be an ISO date (YYYY-MM-DD) or RFC 3339");
    }
  }

  v1::PriceBook data = book.data();
  for (const v1::OfferPrice& price : update.prices()) {
    const int index = book.OfferIndex(price.offer_id());
    if (index < 0) {
      // Checked above; kept as a guard.
      return absl::InvalidArgumentError(absl::StrCat("unknown offer \"", price.offer_id(), "\""));
    }
    // Same position as in the book.
    v1::OfferPrice* target = data.mutable_prices(index);
    std::string provider = price.provider().empty() ? target->provider() : price.provider();
    std::string gpu_model = price.gpu_model().empty() ? target->gpu_model() : price.gpu_model();
    *target = price;
    target->set_provider(std::move(provider));
    target->set_gpu_model(std::move(gpu_model));
  }
  if (!update.source().empty()) data.set_source(update.source());
  if (!update.prices_as_of().empty()) data.set_prices_as_of(update.prices_as_of());
  return PriceBook::Create(std::move(data));
}

// ---------------------------------------------------------------------------
// LoadPriceBook

namespace {

// "<path>:<line>:<col>" of the deepest field of `path` present in `text`, or
// just "<path>" when none is (a field left at its default is not in the file).
std::string Locate(const std::string& file_path, const std::string& text,
                   const std::vector<PathElement>& path) {
  v1::PriceBook parsed;
  google::protobuf::TextFormat::Parser parser;
  google::protobuf::TextFormat::ParseInfoTree tree;
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, &parsed)) return file_path;
  const google::protobuf::Descriptor* descriptor = v1::PriceBook::descriptor();
  const google::protobuf::TextFormat::ParseInfoTree* node = &tree;
  google::protobuf::TextFormat::ParseLocation best;
  for (const PathElement& element : path) {
    if (node == nullptr || descriptor == nullptr) break;
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(element.field);
    if (field == nullptr) break;
    const int index = field->is_repeated() ? element.index : -1;
    const google::protobuf::TextFormat::ParseLocation location = node->GetLocation(field, index);
    if (location.line < 0) break;
    best = location;
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) break;
    node = node->GetTreeForNested(field, index);
    descriptor = field->message_type();
  }
  if (best.line < 0) return file_path;
  return absl::StrCat(file_path, ":", best.line + 1, ":", best.column + 1);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const PriceBook>> LoadPriceBook(
    const std::string& billing_path, const catalog::v1::CatalogSnapshot& catalog) {
  absl::StatusOr<std::string> text = ReadFile(billing_path);
  if (!text.ok()) return text.status();
  v1::PriceBook data;
  if (absl::Status s = ParseTextProto(*text, billing_path, &data); !s.ok()) return s;

  // The file's own prices (overrides, normally none) come first so that error
  // paths prices[i] with i < file_prices point into the file.
  const int file_prices = data.prices_size();
  absl::flat_hash_set<std::string> overridden;
  for (const v1::OfferPrice& price : data.prices()) overridden.insert(price.offer_id());
  for (v1::OfferPrice& price : PricesFromOffers(catalog)) {
    if (!overridden.contains(price.offer_id())) *data.add_prices() = std::move(price);
  }
  data.set_catalog_version(catalog.version());
  if (!catalog.prices_as_of().empty()) data.set_prices_as_of(catalog.prices_as_of());
  if (!catalog.source().empty()) {
    data.set_source(data.source().empty()
                        ? catalog.source()
                        : absl::StrCat(data.source(), "; offer prices: ", catalog.source()));
  }

  // The writer's book says which quote rules it is priced by, so a follower
  // built from other code knows not to quote it in process.
  data.set_quote_rules_version(kQuoteRulesVersion);
  Normalize(&data);
  if (std::optional<FieldError> error = Validate(data)) {
    const bool from_catalog = !error->path.empty() && error->path[0].field == "prices" &&
                              error->path[0].index >= file_prices;
    if (from_catalog) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog offer \"", data.prices(error->path[0].index).offer_id(),
                       "\": ", FormatPath(error->path, 1), ": ", error->message));
    }
    const bool catalog_date = error->path.size() == 1 && error->path[0].field == "prices_as_of" &&
                              !catalog.prices_as_of().empty();
    if (catalog_date) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog prices_as_of \"", catalog.prices_as_of(), "\": ", error->message));
    }
    return absl::InvalidArgumentError(absl::StrCat(Locate(billing_path, *text, error->path), ": ",
                                                   FormatPath(error->path), ": ", error->message));
  }
  return PriceBook::Create(std::move(data));
}

}  // namespace gpuadvisor::pricing
