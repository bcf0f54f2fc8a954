#ifndef GPUADVISOR_COMMON_IO_DURABLE_FILE_H_
#define GPUADVISOR_COMMON_IO_DURABLE_FILE_H_

// Replaces a file so that after a crash or power loss it holds either the old
// contents or the new ones, whole: write a temp file in the same directory,
// fsync it, rename it over `path`, fsync the directory. kUnavailable naming
// the step that failed; the old file is untouched then.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor {

absl::Status WriteFileDurably(const std::string& path, absl::string_view contents);
// The same with the contents given as consecutive pieces (a header and a large
// body written without concatenating them first).
absl::Status WriteFileDurably(const std::string& path,
                              const std::vector<absl::string_view>& pieces);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_DURABLE_FILE_H_
