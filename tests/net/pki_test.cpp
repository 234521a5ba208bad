#include <doctest/doctest.h>

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
