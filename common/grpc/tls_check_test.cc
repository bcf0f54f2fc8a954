#include "common/grpc/tls_check.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

using ::testing::HasSubstr;

// make_certs.sh's CA and leaves (valid 2 days), plus an expired leaf, one
// signed by another CA and one whose key is another's.
class TlsCheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/tls_check_", getpid()));
    const std::string script = absl::StrCat(
        "set -e; bash ", GPUADVISOR_SOURCE_DIR, "/tests/testing/make_certs.sh ", *dir_, "; cd ",
        *dir_, "; openssl req -newkey rsa:2048 -nodes -subj /CN=old -keyout old.key -out old.csr",
        " 2>/dev/null; openssl x509 -req -in old.csr -CA ca.pem -CAkey ca.key -CAcreateserial",
        " -days -1 -out old.pem 2>/dev/null; openssl req -newkey rsa:2048 -nodes -subj /CN=stray",
        " -keyout stray.key -out stray.csr 2>/dev/null; openssl x509 -req -in stray.csr",
        " -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -days 2 -out stray.pem 2>/dev/null");
    ASSERT_EQ(std::system(script.c_str()), 0);
  }
  static std::string File(const std::string& name) { return *dir_ + "/" + name; }
  static std::string* dir_;
};
std::string* TlsCheckTest::dir_ = nullptr;

TEST_F(TlsCheckTest, AGoodCertificateGivesItsExpiry) {
  absl::StatusOr<CertificateInfo> info =
      CheckCertificate({File("server.pem"), File("server.key"), File("ca.pem")}, absl::Now());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->subject, HasSubstr("CN=gpuadvisor-service"));
  EXPECT_GT(info->not_after, absl::Now() + absl::Hours(47));
  EXPECT_LT(info->not_after, absl::Now() + absl::Hours(49));
  // The same certificate two days later is expired: the error names the
  // file and the date.
  absl::StatusOr<CertificateInfo> later = CheckCertificate(
      {File("server.pem"), File("server.key"), File("ca.pem")}, absl::Now() + absl::Hours(50));
  EXPECT_EQ(later.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(later.status().message(), HasSubstr(File("server.pem") + ": certificate expired on " +
                                                  FormatCertificateTime(info->not_after)));
}

TEST_F(TlsCheckTest, BadFilesAreStartUpErrorsNamingTheFile) {
  struct Case {
    TlsFiles files;
    std::string error;
  };
  const Case cases[] = {
      {{File("old.pem"), File("old.key"), File("ca.pem")},
       File("old.pem") + ": certificate expired on "},
      {{File("server.pem"), File("client.key"), File("ca.pem")},
       File("client.key") + ": private key does not match the certificate in " +
           File("server.pem")},
      {{File("stray.pem"), File("stray.key"), File("ca.pem")},
       File("stray.pem") + ": does not verify against " + File("ca.pem")},
      {{File("missing.pem"), File("server.key"), ""}, File("missing.pem") + ": no PEM certificate"},
      {{File("server.pem"), File("ca.pem"), ""}, File("ca.pem") + ": no PEM private key"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CertificateInfo> info = CheckCertificate(c.files, absl::Now());
    EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument) << c.error;
    EXPECT_THAT(info.status().message(), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace gpuadvisor
