// Cluster PKI with mbedTLS: a per-cluster CA, the controller's server certificate issued
// from it, fingerprints for pinning, and random secrets. Pure functions over PEM text;
// thread-safe (each call has its own RNG).
#pragma once
#include <string>

#include "core/status.hpp"

namespace hq::net {

struct CertKey {
  std::string cert_pem;
  std::string key_pem;
};

Result<CertKey> make_cluster_ca(const std::string& cluster_name);
// A self-signed server certificate (ECDSA P-256): a node agent's peer listener, which
// clients trust by its fingerprint (make_tls_client_context_pinned).
Result<CertKey> make_self_signed_server_cert(const std::string& common_name);
// A server certificate (ECDSA P-256, 10 years) signed by `ca`, for `common_name`,
// "localhost", 127.0.0.1 and ::1 (subjectAltName).
Result<CertKey> issue_server_cert(const CertKey& ca, const std::string& common_name);
// SHA-256 of the certificate's DER encoding, lower-case hex.
Result<std::string> cert_fingerprint(const std::string& cert_pem);
Result<std::string> random_hex(size_t bytes);

}  // namespace hq::net
