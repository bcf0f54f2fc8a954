#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_MACHINES_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_MACHINES_H_

// Which accelerators a GCP machine type carries (data/catalog/gcp_machines.csv):
// SkyPilot's GCP catalog prices a GPU machine as a host row plus an
// accelerator row of the same zone, and this table says which pair.
//
//   built_in  the machine type fixes its GPUs: a3-highgpu-8g -> H100 x 8,
//             g2-standard-24 -> L4 x 2;
//   attached  GPUs attached to an n1 host: (T4, 1) -> n1-standard-8; the
//             offer's instance type is "n1-standard-8+T4x1".
//
// Accelerator names are compared by GpuNameResolver::Key (case and
// punctuation ignored). Immutable after parsing; thread-safe.

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor::catalog {

struct GcpMachines {
  struct Accelerators {
    std::string accelerator;  // as written in the file
    int gpus = 0;
  };
  // machine type -> its built-in accelerators.
  absl::flat_hash_map<std::string, Accelerators> built_in;
  // "<accelerator key>|<gpus>" -> the n1 host SkyPilot pairs them with.
  absl::flat_hash_map<std::string, std::string> attached_host;

  // The built-in accelerators of `machine_type`; nullptr when it has none
  // listed.
  const Accelerators* BuiltIn(absl::string_view machine_type) const;
  // The host for `gpus` x `accelerator` attached; nullptr when not listed.
  const std::string* AttachedHost(absl::string_view accelerator, int gpus) const;
  // True when `accelerator` is attached to n1 hosts in some count.
  bool Attachable(absl::string_view accelerator) const;
};

// Parses the CSV ('#' comment lines, header
// machine_type,accelerator,gpus,kind,source; columns found by name).
// kInvalidArgument "<file_name>:<line>: <column>: ..." for a missing column,
// an empty cell, a GPU count that is not a positive integer, an unknown kind,
// or a machine type / (accelerator, gpus) listed twice.
absl::StatusOr<GcpMachines> ParseGcpMachines(absl::string_view text, absl::string_view file_name);

// Reads and parses `path`; kNotFound when it is missing.
absl::StatusOr<GcpMachines> LoadGcpMachines(const std::string& path);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_MACHINES_H_
