#ifndef GPUADVISOR_SERVICES_CLI_CLI_DOCS_H_
#define GPUADVISOR_SERVICES_CLI_CLI_DOCS_H_

// The CLI's help texts: each command's examples (every one run by
// tests/integration/cli_test.sh against a live stack) and the readable help and
// short names of the flags generated from the request messages.

#include <map>
#include <string>
#include <vector>

#include "services/cli/proto_flags.h"

namespace gpuadvisor::cli {

// Command name -> its example command lines.
const std::map<std::string, std::vector<std::string>>& Examples();
// "Examples:" and the command's examples, one per line.
std::string Footer(const std::string& command);
// Flags of RecommendRequest / EstimateRequest (Workload, Constraints).
WalkOptions WorkloadDocs();
// Flags of sizing's GpuConfiguration (estimate).
WalkOptions ConfigurationDocs();
// Flags of ListOffersRequest (offers).
WalkOptions OfferDocs();

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_CLI_DOCS_H_
