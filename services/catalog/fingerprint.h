#ifndef GPUADVISOR_SERVICES_CATALOG_FINGERPRINT_H_
#define GPUADVISOR_SERVICES_CATALOG_FINGERPRINT_H_

// The catalog's names for the shared FNV-1a fingerprint (common/io/fingerprint.h).

#include "common/io/fingerprint.h"

namespace gpuadvisor::catalog {

using ::gpuadvisor::Fingerprint64;
using ::gpuadvisor::FingerprintHex;

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_FINGERPRINT_H_
