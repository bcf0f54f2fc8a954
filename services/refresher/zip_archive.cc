#include "services/refresher/zip_archive.h"

#include <zlib.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpuadvisor::refresher {
namespace {

// Little-endian fields at `at` of `s`; the caller checks the bounds.
uint32_t U16(absl::string_view s, size_t at) {
  return static_cast<uint8_t>(s[at]) | (static_cast<uint8_t>(s[at + 1]) << 8);
}
uint32_t U32(absl::string_view s, size_t at) { return U16(s, at) | (U16(s, at + 2) << 16); }

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

struct Entry {
  std::string name;
  uint32_t method = 0, crc = 0, compressed = 0, size = 0, local_offset = 0;
};

absl::Status Bad(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": not a whole ZIP archive: ", what));
}

// The central directory's entries (found from the end record).
absl::StatusOr<std::vector<Entry>> CentralDirectory(absl::string_view zip, absl::string_view name) {
  if (zip.size() < 22) return Bad(name, "shorter than an end record");
  size_t end = zip.size() - 22;
  const size_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
  while (U32(zip, end) != kEndOfCentralDirectory) {
    if (end == lowest) return Bad(name, "no end of central directory (truncated?)");
    --end;
  }
  const uint32_t count = U16(zip, end + 10);
  size_t at = U32(zip, end + 16);
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    if (at + 46 > zip.size() || U32(zip, at) != kCentralHeader) {
      return Bad(name, "central directory entry out of bounds");
    }
    Entry e;
    e.method = U16(zip, at + 10);
    e.crc = U32(zip, at + 16);
    e.compressed = U32(zip, at + 20);
    e.size = U32(zip, at + 24);
    const uint32_t name_len = U16(zip, at + 28), extra = U16(zip, at + 30),
                   comment = U16(zip, at + 32);
    e.local_offset = U32(zip, at + 42);
    if (at + 46 + name_len > zip.size()) return Bad(name, "member name out of bounds");
    e.name = std::string(zip.substr(at + 46, name_len));
    if (e.compressed == 0xffffffffu || e.size == 0xffffffffu) return Bad(name, "ZIP64");
    entries.push_back(std::move(e));
    at += 46 + name_len + extra + comment;
  }
  return entries;
}

absl::StatusOr<std::string> Inflate(absl::string_view in, uint32_t size, absl::string_view name) {
  std::string out(size, '\0');
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return absl::InternalError("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = size;
  const int r = inflate(&z, Z_FINISH);
  const uLong produced = z.total_out;
  inflateEnd(&z);
  if (r != Z_STREAM_END || produced != size) return Bad(name, "a member does not inflate");
  return out;
}

absl::StatusOr<std::string> MemberData(absl::string_view zip, const Entry& e,
                                       absl::string_view name) {
  const size_t at = e.local_offset;
  if (at + 30 > zip.size() || U32(zip, at) != kLocalHeader) return Bad(name, "no local header");
  const size_t data = at + 30 + U16(zip, at + 26) + U16(zip, at + 28);
  if (data + e.compressed > zip.size()) return Bad(name, "member data cut short");
  const absl::string_view raw = zip.substr(data, e.compressed);
  std::string out;
  if (e.method == 0) {
    out = std::string(raw);
  } else if (e.method == 8) {
    absl::StatusOr<std::string> inflated = Inflate(raw, e.size, name);
    if (!inflated.ok()) return inflated.status();
    out = *std::move(inflated);
  } else {
    return Bad(name, absl::StrCat("compression method ", e.method));
  }
  const uLong crc =
      crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size()));
  if (out.size() != e.size || crc != e.crc)
    return Bad(name, absl::StrCat(e.name, ": CRC mismatch"));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ZipMember>> ReadZip(absl::string_view archive, absl::string_view name,
                                               int64_t max_bytes) {
  absl::StatusOr<std::vector<Entry>> entries = CentralDirectory(archive, name);
  if (!entries.ok()) return entries.status();
  int64_t total = 0;
  for (const Entry& e : *entries) total += e.size;
  if (total > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": ", total, " bytes uncompressed, over the limit of ", max_bytes));
  }
  std::vector<ZipMember> members;
  for (const Entry& e : *entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a directory
    absl::StatusOr<std::string> data = MemberData(archive, e, name);
    if (!data.ok()) return data.status();
    members.push_back({e.name, *std::move(data)});
  }
  return members;
}

}  // namespace gpuadvisor::refresher
