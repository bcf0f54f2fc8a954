#include "common/io/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpuadvisor {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status WriteFileDurably(const std::string& path, absl::string_view contents) {
  return WriteFileDurably(path, std::vector<absl::string_view>{contents});
}

absl::Status WriteFileDurably(const std::string& path,
                              const std::vector<absl::string_view>& pieces) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(tmp);
  auto fail = [&](const std::string& what) {
    const absl::Status status = Errno(what);
    ::close(fd);
    ::unlink(tmp.c_str());
    return status;
  };
  for (absl::string_view contents : pieces) {
    size_t written = 0;
    while (written < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail(tmp);
      }
      written += static_cast<size_t>(n);
    }
  }
  if (::fsync(fd) != 0) return fail(absl::StrCat(tmp, ": fsync"));
  if (::close(fd) != 0) {
    const absl::Status status = Errno(absl::StrCat(tmp, ": close"));
    ::unlink(tmp.c_str());
    return status;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const absl::Status status = Errno(absl::StrCat(path, ": rename"));
    ::unlink(tmp.c_str());
    return status;
  }
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Errno(dir);
  const int synced = ::fsync(dir_fd);
  ::close(dir_fd);
  if (synced != 0) return Errno(absl::StrCat(dir, ": fsync"));
  return absl::OkStatus();
}

}  // namespace gpuadvisor
