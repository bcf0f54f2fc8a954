#ifndef GPUADVISOR_SERVICES_GATEWAY_ORCHESTRATORS_DATA_H_
#define GPUADVISOR_SERVICES_GATEWAY_ORCHESTRATORS_DATA_H_

#include <string>

namespace gpuadvisor::gateway {

// The text of data/exports/orchestrators.json, compiled in by CMake.
const std::string& OrchestratorsJson();

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_ORCHESTRATORS_DATA_H_
