#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_TEST_UTIL_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_TEST_UTIL_H_

// Helpers shared by the importer tests (header-only, test code only).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/io/text_proto.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// The real GPU list: importers map real names onto it.
inline const GpuNameResolver& TestGpuResolver() {
  static const GpuNameResolver* resolver = [] {
    gpuadvisor::catalog::v1::GpuList gpus;
    const absl::Status s =
        LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &gpus);
    EXPECT_TRUE(s.ok()) << s;
    return new GpuNameResolver(gpus);
  }();
  return *resolver;
}

inline std::map<std::string, const gpuadvisor::catalog::v1::Offer*> ById(
    const std::vector<gpuadvisor::catalog::v1::Offer>& offers) {
  std::map<std::string, const gpuadvisor::catalog::v1::Offer*> by_id;
  for (const auto& o : offers) by_id[o.id()] = &o;
  return by_id;
}

// The report adds up, ids are unique and sorted, and every offer passes the
// catalog's own validation.
inline void ExpectConsistent(const ImportedOffers& imported) {
  const ImportReport& r = imported.report;
  EXPECT_EQ(r.rows_read, r.rows_kept + r.rows_rejected()) << r.Summary();
  std::set<std::string> ids;
  std::string previous;
  for (const auto& offer : imported.offers) {
    EXPECT_TRUE(ids.insert(offer.id()).second) << "duplicate id " << offer.id();
    EXPECT_LT(previous, offer.id());
    previous = offer.id();
    gpuadvisor::catalog::v1::Offer copy = offer;
    const absl::Status valid = ValidateAndNormalizeOffer(TestGpuResolver(), copy);
    EXPECT_TRUE(valid.ok()) << offer.id() << ": " << valid;
    EXPECT_EQ(copy.gpu_model(), offer.gpu_model()) << "not canonical: " << offer.id();
  }
}

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_TEST_UTIL_H_
