#include <doctest/doctest.h>

#include <mbedtls/x509_crt.h>

#include "net/pki.hpp"

using namespace hq;
using namespace hq::net;

TEST_CASE("pki: a cluster CA issues a controller certificate") {
  auto ca = make_cluster_ca("test");
  REQUIRE_MESSAGE(ca.is_ok(), ca.status().message());
  CHECK(ca->cert_pem.find("BEGIN CERTIFICATE") != std::string::npos);
  CHECK(ca->key_pem.find("PRIVATE KEY") != std::string::npos);
  auto server = issue_server_cert(*ca, "controller");
  REQUIRE_MESSAGE(server.is_ok(), server.status().message());
  auto fp1 = cert_fingerprint(ca->cert_pem);
  auto fp2 = cert_fingerprint(server->cert_pem);
  REQUIRE(fp1.is_ok());
  REQUIRE(fp2.is_ok());
  CHECK(fp1->size() == 64);
  CHECK(*fp1 != *fp2);
  CHECK(!cert_fingerprint("not a cert").is_ok());
  CHECK(!issue_server_cert(CertKey{"x", "y"}, "c").is_ok());
  CHECK(random_hex(32)->size() == 64);
  CHECK(*random_hex(16) != *random_hex(16));
}

namespace {

// Whether `server_pem` verifies against `ca_pem` for host name `name` (mbedTLS checks the
// subjectAltName when there is one).
bool verifies_for(const std::string& ca_pem, const std::string& server_pem, const char* name) {
  mbedtls_x509_crt ca, server;
  mbedtls_x509_crt_init(&ca);
  mbedtls_x509_crt_init(&server);
  uint32_t flags = 0;
  bool ok = mbedtls_x509_crt_parse(&ca, reinterpret_cast<const unsigned char*>(ca_pem.c_str()), ca_pem.size() + 1) == 0 &&
            mbedtls_x509_crt_parse(&server, reinterpret_cast<const unsigned char*>(server_pem.c_str()), server_pem.size() + 1) == 0 &&
            mbedtls_x509_crt_verify(&server, &ca, nullptr, name, &flags, nullptr, nullptr) == 0;
  mbedtls_x509_crt_free(&ca);
  mbedtls_x509_crt_free(&server);
  return ok;
}

}  // namespace

TEST_CASE("pki: a server certificate names its host name, localhost and the loopback addresses, nothing else") {
  auto ca = make_cluster_ca("test");
  REQUIRE(ca.is_ok());
  auto server = issue_server_cert(*ca, "hq-controller");
  REQUIRE(server.is_ok());
  CHECK(verifies_for(ca->cert_pem, server->cert_pem, "hq-controller"));  // what hq's clients ask for
  CHECK(verifies_for(ca->cert_pem, server->cert_pem, "localhost"));
  // 127.0.0.1 and ::1 are iPAddress entries, which mbedTLS 2.28 does not match by name:
  // tests/e2e/http_test.cpp checks them with curl (OpenSSL).
  CHECK(!verifies_for(ca->cert_pem, server->cert_pem, "evil.example"));
}
