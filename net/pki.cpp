#include "net/pki.hpp"

#include "core/hex.hpp"
#include "net/entropy.hpp"

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>
#include <mbedtls/x509_csr.h>
#include <vector>

namespace hq::net {
namespace {

struct Rng {
  mbedtls_ctr_drbg_context drbg;
  int rc;
  Rng() {
    mbedtls_ctr_drbg_init(&drbg);
    const char* pers = "hq-pki";
    rc = mbedtls_ctr_drbg_seed(&drbg, kernel_entropy, nullptr, reinterpret_cast<const unsigned char*>(pers), 6);
  }
  ~Rng() { mbedtls_ctr_drbg_free(&drbg); }
};

struct Pk {
  mbedtls_pk_context ctx;
  Pk() { mbedtls_pk_init(&ctx); }
  ~Pk() { mbedtls_pk_free(&ctx); }
};

struct Crt {
  mbedtls_x509_crt ctx;
  Crt() { mbedtls_x509_crt_init(&ctx); }
  ~Crt() { mbedtls_x509_crt_free(&ctx); }
};

Status gen_key(Pk& pk, Rng& rng) {
  int rc = mbedtls_pk_setup(&pk.ctx, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
  if (rc == 0) rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(pk.ctx), mbedtls_ctr_drbg_random, &rng.drbg);
  return rc == 0 ? Status::ok() : internal("key generation failed: " + mbed_error(rc));
}

Result<std::string> key_pem(Pk& pk) {
  std::vector<unsigned char> buf(4096);
  int rc = mbedtls_pk_write_key_pem(&pk.ctx, buf.data(), buf.size());
  if (rc != 0) return internal("writing key: " + mbed_error(rc));
  return std::string(reinterpret_cast<char*>(buf.data()));
}

Status parse_key(Pk& pk, const std::string& pem) {
  int rc = mbedtls_pk_parse_key(&pk.ctx, reinterpret_cast<const unsigned char*>(pem.c_str()), pem.size() + 1, nullptr, 0);
  return rc == 0 ? Status::ok() : invalid("bad private key: " + mbed_error(rc));
}

Status parse_cert(Crt& crt, const std::string& pem) {
  int rc = mbedtls_x509_crt_parse(&crt.ctx, reinterpret_cast<const unsigned char*>(pem.c_str()), pem.size() + 1);
  return rc == 0 ? Status::ok() : invalid("bad certificate: " + mbed_error(rc));
}

// subjectAltName's DER: the DNS names, and the loopback addresses 127.0.0.1 and ::1 (so a
// browser or curl on the controller's host verifies https://127.0.0.1:PORT/ against the CA).
std::vector<unsigned char> alt_names_der(const std::vector<std::string>& dns_names) {
  std::vector<unsigned char> names;
  for (const auto& n : dns_names) {
    names.push_back(0x82);  // [2] dNSName
    names.push_back(static_cast<unsigned char>(n.size()));
    names.insert(names.end(), n.begin(), n.end());
  }
  const unsigned char v4[] = {0x87, 4, 127, 0, 0, 1};  // [7] iPAddress
  const unsigned char v6[] = {0x87, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  names.insert(names.end(), std::begin(v4), std::end(v4));
  names.insert(names.end(), std::begin(v6), std::end(v6));
  std::vector<unsigned char> der = {0x30, static_cast<unsigned char>(names.size())};  // SEQUENCE (short length)
  der.insert(der.end(), names.begin(), names.end());
  return der;
}

// Writes a certificate for `subject_key`, signed by `issuer_key`; with `dns_names`, a
// subjectAltName extension holding them and the loopback addresses.
Result<std::string> write_cert(Rng& rng, Pk& subject_key, Pk& issuer_key, const std::string& subject,
                               const std::string& issuer, bool is_ca, const std::vector<std::string>& dns_names = {}) {
  mbedtls_x509write_cert crt;
  mbedtls_x509write_crt_init(&crt);
  mbedtls_mpi serial;
  mbedtls_mpi_init(&serial);
  unsigned char serial_bytes[16];
  mbedtls_ctr_drbg_random(&rng.drbg, serial_bytes, sizeof serial_bytes);
  serial_bytes[0] &= 0x7f;  // positive
  int rc = mbedtls_mpi_read_binary(&serial, serial_bytes, sizeof serial_bytes);
  mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_subject_key(&crt, &subject_key.ctx);
  mbedtls_x509write_crt_set_issuer_key(&crt, &issuer_key.ctx);
  if (rc == 0) rc = mbedtls_x509write_crt_set_serial(&crt, &serial);
  if (rc == 0) rc = mbedtls_x509write_crt_set_subject_name(&crt, subject.c_str());
  if (rc == 0) rc = mbedtls_x509write_crt_set_issuer_name(&crt, issuer.c_str());
  if (rc == 0) rc = mbedtls_x509write_crt_set_validity(&crt, "20250101000000", "20491231235959");
  if (rc == 0) rc = mbedtls_x509write_crt_set_basic_constraints(&crt, is_ca ? 1 : 0, is_ca ? 0 : -1);
  if (rc == 0)
    rc = mbedtls_x509write_crt_set_key_usage(
        &crt, is_ca ? (MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN)
                    : (MBEDTLS_X509_KU_DIGITAL_SIGNATURE | MBEDTLS_X509_KU_KEY_AGREEMENT));
  if (rc == 0 && !dns_names.empty()) {
    std::vector<unsigned char> der = alt_names_der(dns_names);
    rc = mbedtls_x509write_crt_set_extension(&crt, MBEDTLS_OID_SUBJECT_ALT_NAME, MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME),
                                             0, der.data(), der.size());
  }
  std::vector<unsigned char> buf(4096);
  if (rc == 0) rc = mbedtls_x509write_crt_pem(&crt, buf.data(), buf.size(), mbedtls_ctr_drbg_random, &rng.drbg);
  mbedtls_x509write_crt_free(&crt);
  mbedtls_mpi_free(&serial);
  if (rc != 0) return internal("writing certificate: " + mbed_error(rc));
  return std::string(reinterpret_cast<char*>(buf.data()));
}

Result<CertKey> self_signed(const std::string& dn, bool is_ca) {
  Rng rng;
  if (rng.rc != 0) return internal("RNG seed failed: " + mbed_error(rng.rc));
  Pk key;
  if (Status s = gen_key(key, rng); !s) return s;
  auto cert = write_cert(rng, key, key, dn, dn, is_ca);
  if (!cert) return cert.status();
  auto pem = key_pem(key);
  if (!pem) return pem.status();
  return CertKey{*cert, *pem};
}

}  // namespace

Result<CertKey> make_cluster_ca(const std::string& cluster_name) {
  return self_signed("CN=hq cluster CA " + cluster_name + ",O=hq", true);
}

Result<CertKey> make_self_signed_server_cert(const std::string& common_name) {
  return self_signed("CN=" + common_name + ",O=hq", false);
}

Result<CertKey> issue_server_cert(const CertKey& ca, const std::string& common_name) {
  Rng rng;
  if (rng.rc != 0) return internal("RNG seed failed: " + mbed_error(rng.rc));
  Pk ca_key, key;
  Crt ca_crt;
  if (Status s = parse_key(ca_key, ca.key_pem); !s) return s.with_context("CA key");
  if (Status s = parse_cert(ca_crt, ca.cert_pem); !s) return s.with_context("CA certificate");
  if (Status s = gen_key(key, rng); !s) return s;
  char issuer[512];
  if (mbedtls_x509_dn_gets(issuer, sizeof issuer, &ca_crt.ctx.subject) < 0) return internal("CA subject unreadable");
  auto cert = write_cert(rng, key, ca_key, "CN=" + common_name + ",O=hq", issuer, false, {common_name, "localhost"});
  if (!cert) return cert.status();
  auto pem = key_pem(key);
  if (!pem) return pem.status();
  return CertKey{*cert, *pem};
}

Result<std::string> cert_fingerprint(const std::string& cert_pem) {
  Crt crt;
  if (Status s = parse_cert(crt, cert_pem); !s) return s;
  unsigned char digest[32];
  mbedtls_sha256_ret(crt.ctx.raw.p, crt.ctx.raw.len, digest, 0);
  return to_hex(std::string_view(reinterpret_cast<char*>(digest), sizeof digest));
}

Result<std::string> random_hex(size_t bytes) {
  Rng rng;
  if (rng.rc != 0) return internal("RNG seed failed: " + mbed_error(rng.rc));
  std::vector<unsigned char> buf(bytes);
  if (mbedtls_ctr_drbg_random(&rng.drbg, buf.data(), buf.size()) != 0) return internal("RNG failed");
  return to_hex(std::string_view(reinterpret_cast<char*>(buf.data()), buf.size()));
}

}  // namespace hq::net
