#include "common/grpc/tls_check.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpuadvisor {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using Cert = std::unique_ptr<X509, X509Free>;

// Every certificate of a PEM file, in order; none when unreadable.
std::vector<Cert> ReadCertificates(const std::string& path) {
  std::vector<Cert> certs;
  std::unique_ptr<BIO, BioFree> bio(BIO_new_file(path.c_str(), "r"));
  if (bio == nullptr) return certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // the end of the file reads as an error
  return certs;
}

absl::Time AsTime(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromTM(tm, absl::UTCTimeZone());
}

std::string Subject(X509* cert) {
  char buffer[512] = {};
  X509_NAME_oneline(X509_get_subject_name(cert), buffer, sizeof(buffer));
  return buffer;
}

absl::Status VerifyChain(const std::vector<Cert>& chain, const std::string& cert_path,
                         const std::string& ca_path, absl::Time now) {
  std::vector<Cert> roots = ReadCertificates(ca_path);
  if (roots.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ca_path, ": no PEM certificate in it"));
  }
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  for (const Cert& root : roots) X509_STORE_add_cert(store.get(), root.get());
  std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
  for (size_t i = 1; i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    sk_X509_push(untrusted.get(), chain[i].get());
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> context(X509_STORE_CTX_new());
  X509_STORE_CTX_init(context.get(), store.get(), chain[0].get(), untrusted.get());
  X509_STORE_CTX_set_time(context.get(), 0, absl::ToTimeT(now));
  if (X509_verify_cert(context.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(context.get());
    return absl::InvalidArgumentError(absl::StrCat(cert_path, ": does not verify against ", ca_path,
                                                   ": ", X509_verify_cert_error_string(error)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormatCertificateTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

absl::StatusOr<CertificateInfo> CheckCertificate(const TlsFiles& files, absl::Time now) {
  std::vector<Cert> chain = ReadCertificates(files.cert_path);
  if (chain.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.cert_path, ": no PEM certificate could be read from it"));
  }
  X509* leaf = chain.front().get();
  CertificateInfo info{Subject(leaf), AsTime(X509_get0_notAfter(leaf))};
  const absl::Time not_before = AsTime(X509_get0_notBefore(leaf));
  if (now > info.not_after) {
    return absl::InvalidArgumentError(absl::StrCat(files.cert_path, ": certificate expired on ",
                                                   FormatCertificateTime(info.not_after), " (",
                                                   info.subject, ")"));
  }
  if (now < not_before) {
    return absl::InvalidArgumentError(absl::StrCat(
        files.cert_path, ": certificate not valid before ", FormatCertificateTime(not_before)));
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_file(files.key_path.c_str(), "r"));
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      bio == nullptr ? nullptr : PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.key_path, ": no PEM private key could be read from it"));
  }
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        files.key_path, ": private key does not match the certificate in ", files.cert_path));
  }
  if (!files.ca_path.empty()) {
    if (absl::Status chained = VerifyChain(chain, files.cert_path, files.ca_path, now);
        !chained.ok()) {
      return chained;
    }
  }
  return info;
}

}  // namespace gpuadvisor
