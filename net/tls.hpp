// TLS 1.2 (ECDHE-ECDSA with AES-GCM or ChaCha20-Poly1305) ByteStreams with mbedTLS,
// which stays confined to tls.cpp and pki.cpp. A TlsContext is one side's configuration
// (server: certificate + key; client: the cluster CA it trusts). A context may be shared
// by many streams of one io_context thread, never across threads (its RNG is not locked).
#pragma once
#include <memory>
#include <string>

#include "core/status.hpp"
#include "net/stream.hpp"

namespace hq::net {

struct TlsContext;

Result<std::shared_ptr<TlsContext>> make_tls_server_context(const std::string& cert_pem, const std::string& key_pem);
// Trusts exactly the certificates signed by `ca_pem` (the cluster CA); no host name check,
// since only the controller holds a certificate from that CA. With `session_cache` (a file
// path, 0600), the session ticket of the last connection is kept there and offered on the
// next, so short-lived clients resume without public-key operations.
Result<std::shared_ptr<TlsContext>> make_tls_client_context(const std::string& ca_pem,
                                                            const std::string& session_cache = "");
// Trusts exactly the server certificate whose SHA-256 fingerprint (lower-case hex, as
// cert_fingerprint) is `fingerprint`, self-signed or not: a node agent's peer listener,
// whose fingerprint the controller handed out over an authenticated channel.
// With `session_cache`, as make_tls_client_context: a resumed session was pinned when it was
// made, and only that server can take its ticket.
Result<std::shared_ptr<TlsContext>> make_tls_client_context_pinned(const std::string& fingerprint,
                                                                   const std::string& session_cache = "");
// A client context that does not verify the server: only for a node's one CA request,
// whose answer the cluster secret authenticates (CaReply.mac). Never for anything else.
Result<std::shared_ptr<TlsContext>> make_tls_bootstrap_context();

// The handshake runs in ByteStream::start(); failures there throw like any read error.
std::unique_ptr<ByteStream> make_tls_stream(asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> ctx);

}  // namespace hq::net
