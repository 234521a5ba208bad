#include "net/tls.hpp"

#include "net/entropy.hpp"

#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cstring>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_ticket.h>
#include <fcntl.h>
#include <unistd.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>
#include <stdexcept>

#include "core/hex.hpp"

namespace hq::net {

struct TlsContext {
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config conf;
  mbedtls_x509_crt cert;   // own certificate (server) or trusted CA (client)
  mbedtls_pk_context key;
  mbedtls_ssl_ticket_context tickets;  // server: session tickets so clients resume cheaply
  std::string session_cache;           // client: file holding a resumable session
  std::string pinned;                  // client: the SHA-256 (hex) the server's certificate must have
  TlsContext() {
    mbedtls_ssl_ticket_init(&tickets);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_ssl_config_init(&conf);
    mbedtls_x509_crt_init(&cert);
    mbedtls_pk_init(&key);
  }
  ~TlsContext() {
    mbedtls_ssl_ticket_free(&tickets);
    mbedtls_pk_free(&key);
    mbedtls_x509_crt_free(&cert);
    mbedtls_ssl_config_free(&conf);
    mbedtls_ctr_drbg_free(&drbg);
  }
};

namespace {

const int kSuites[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
                       MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
                       MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, 0};

Result<std::shared_ptr<TlsContext>> base_context(int endpoint) {
  auto ctx = std::make_shared<TlsContext>();
  const char* pers = "hq-tls";
  int rc = mbedtls_ctr_drbg_seed(&ctx->drbg, kernel_entropy, nullptr, reinterpret_cast<const unsigned char*>(pers), 6);
  if (rc == 0)
    rc = mbedtls_ssl_config_defaults(&ctx->conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
  if (rc != 0) return internal("TLS setup failed: " + mbed_error(rc));
  mbedtls_ssl_conf_rng(&ctx->conf, mbedtls_ctr_drbg_random, &ctx->drbg);
  mbedtls_ssl_conf_ciphersuites(&ctx->conf, kSuites);
  mbedtls_ssl_conf_min_version(&ctx->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  static const mbedtls_ecp_group_id kCurves[] = {MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1,
                                                 MBEDTLS_ECP_DP_NONE};
  mbedtls_ssl_conf_curves(&ctx->conf, kCurves);
  return ctx;
}

[[noreturn]] void fail(const std::string& what, int rc) { throw std::runtime_error(what + ": " + mbed_error(rc)); }

class TlsStream final : public ByteStream {
 public:
  TlsStream(asio::ip::tcp::socket s, std::shared_ptr<TlsContext> ctx) : socket_(std::move(s)), ctx_(std::move(ctx)) {
    asio::error_code ec;
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    auto ep = socket_.remote_endpoint(ec);
    peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    mbedtls_ssl_init(&ssl_);
    setup_rc_ = mbedtls_ssl_setup(&ssl_, &ctx_->conf);
    mbedtls_ssl_set_bio(&ssl_, this, &TlsStream::bio_send, &TlsStream::bio_recv, nullptr);
  }
  ~TlsStream() override { mbedtls_ssl_free(&ssl_); }

  asio::awaitable<void> start() override {
    if (setup_rc_ != 0) fail("TLS setup", setup_rc_);
    load_session();
    while (true) {
      int rc = mbedtls_ssl_handshake(&ssl_);
      co_await flush();
      if (rc == 0) break;
      if (rc == MBEDTLS_ERR_SSL_WANT_READ) {
        if (!co_await fill()) throw asio::system_error(asio::error::eof);
      } else if (rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
        fail("TLS handshake with " + peer_, rc);
      }
    }
    // A pinned client verifies optionally (mbedTLS wants a CA chain to require it): the
    // pin's verdict is checked here, before any data goes out.
    if (!ctx_->pinned.empty() && mbedtls_ssl_get_verify_result(&ssl_) != 0)
      fail("TLS handshake with " + peer_ + " (its certificate is not the pinned one)", MBEDTLS_ERR_X509_CERT_VERIFY_FAILED);
    save_session();
  }

  asio::awaitable<size_t> read_some(asio::mutable_buffer buf) override {
    while (true) {
      int rc = mbedtls_ssl_read(&ssl_, static_cast<unsigned char*>(buf.data()), buf.size());
      if (!writing_) co_await flush();  // alerts; the writer flushes otherwise
      if (rc > 0) co_return static_cast<size_t>(rc);
      if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) co_return 0;
      if (rc == MBEDTLS_ERR_SSL_WANT_READ) {
        if (!co_await fill()) co_return 0;  // the peer closed without a close_notify
      } else if (rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
        fail("TLS read from " + peer_, rc);
      }
    }
  }

  asio::awaitable<void> write_all(asio::const_buffer buf) override {
    const auto* p = static_cast<const unsigned char*>(buf.data());
    size_t left = buf.size();
    while (left > 0) {
      int rc = mbedtls_ssl_write(&ssl_, p, left);
      if (rc > 0) {
        p += rc;
        left -= static_cast<size_t>(rc);
      } else if (rc != MBEDTLS_ERR_SSL_WANT_WRITE && rc != MBEDTLS_ERR_SSL_WANT_READ) {
        fail("TLS write to " + peer_, rc);
      }
    }
    co_await flush();
  }

  void close() override {
    if (!closed_) mbedtls_ssl_close_notify(&ssl_);  // best effort, written if a flush follows
    closed_ = true;
    asio::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
  std::string peer() const override { return peer_; }

 private:
  // Client side: offer the cached session (a ticket) so the handshake needs no public-key
  // operations; a stale or foreign cache just means a full handshake.
  void load_session() {
    if (ctx_->session_cache.empty()) return;
    int fd = open(ctx_->session_cache.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    unsigned char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return;
    mbedtls_ssl_session session;
    mbedtls_ssl_session_init(&session);
    if (mbedtls_ssl_session_load(&session, buf, static_cast<size_t>(n)) == 0) mbedtls_ssl_set_session(&ssl_, &session);
    mbedtls_ssl_session_free(&session);
  }
  void save_session() {
    if (ctx_->session_cache.empty()) return;
    mbedtls_ssl_session session;
    mbedtls_ssl_session_init(&session);
    unsigned char buf[4096];
    size_t len = 0;
    if (mbedtls_ssl_get_session(&ssl_, &session) == 0 && mbedtls_ssl_session_save(&session, buf, sizeof buf, &len) == 0) {
      std::string tmp = ctx_->session_cache + ".tmp" + std::to_string(getpid());
      int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) {
        bool ok = write(fd, buf, len) == static_cast<ssize_t>(len);
        ::close(fd);
        if (ok) rename(tmp.c_str(), ctx_->session_cache.c_str());
        else unlink(tmp.c_str());
      }
    }
    mbedtls_ssl_session_free(&session);
  }

  static int bio_send(void* self, const unsigned char* buf, size_t len) {
    static_cast<TlsStream*>(self)->out_.append(reinterpret_cast<const char*>(buf), len);
    return static_cast<int>(len);
  }
  static int bio_recv(void* self, unsigned char* buf, size_t len) {
    auto* s = static_cast<TlsStream*>(self);
    size_t avail = s->in_.size() - s->in_pos_;
    if (avail == 0) return MBEDTLS_ERR_SSL_WANT_READ;
    size_t n = std::min(avail, len);
    std::memcpy(buf, s->in_.data() + s->in_pos_, n);
    s->in_pos_ += n;
    if (s->in_pos_ == s->in_.size()) {
      s->in_.clear();
      s->in_pos_ = 0;
    }
    return static_cast<int>(n);
  }
  // Writes out every ciphertext byte mbedTLS produced; one writer at a time.
  asio::awaitable<void> flush() {
    if (writing_) co_return;
    writing_ = true;
    try {
      while (!out_.empty()) {
        std::string batch;
        batch.swap(out_);
        co_await asio::async_write(socket_, asio::buffer(batch), asio::use_awaitable);
      }
    } catch (...) {
      writing_ = false;
      throw;
    }
    writing_ = false;
  }
  // More bytes from the socket; false at its end.
  asio::awaitable<bool> fill() {
    char buf[16384];
    asio::error_code ec;
    size_t n = co_await socket_.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::eof) co_return false;
    if (ec) throw asio::system_error(ec);
    in_.append(buf, n);
    co_return true;
  }

  asio::ip::tcp::socket socket_;
  std::shared_ptr<TlsContext> ctx_;
  mbedtls_ssl_context ssl_;
  int setup_rc_ = 0;
  std::string in_, out_;
  size_t in_pos_ = 0;
  bool writing_ = false;
  bool closed_ = false;
  std::string peer_;
};

}  // namespace

Result<std::shared_ptr<TlsContext>> make_tls_server_context(const std::string& cert_pem, const std::string& key_pem) {
  auto ctx = base_context(MBEDTLS_SSL_IS_SERVER);
  if (!ctx) return ctx;
  TlsContext& c = **ctx;
  int rc = mbedtls_x509_crt_parse(&c.cert, reinterpret_cast<const unsigned char*>(cert_pem.c_str()), cert_pem.size() + 1);
  if (rc != 0) return invalid("controller certificate: " + mbed_error(rc));
  rc = mbedtls_pk_parse_key(&c.key, reinterpret_cast<const unsigned char*>(key_pem.c_str()), key_pem.size() + 1, nullptr, 0);
  if (rc != 0) return invalid("controller key: " + mbed_error(rc));
  rc = mbedtls_pk_check_pair(&c.cert.pk, &c.key);
  if (rc == 0) rc = mbedtls_ssl_conf_own_cert(&c.conf, &c.cert, &c.key);
  if (rc != 0) return invalid("controller certificate and key do not match: " + mbed_error(rc));
  mbedtls_ssl_conf_authmode(&c.conf, MBEDTLS_SSL_VERIFY_NONE);  // clients prove identity with tokens
  rc = mbedtls_ssl_ticket_setup(&c.tickets, mbedtls_ctr_drbg_random, &c.drbg, MBEDTLS_CIPHER_AES_256_GCM, 86400);
  if (rc != 0) return internal("TLS session tickets: " + mbed_error(rc));
  mbedtls_ssl_conf_session_tickets_cb(&c.conf, mbedtls_ssl_ticket_write, mbedtls_ssl_ticket_parse, &c.tickets);
  return ctx;
}

Result<std::shared_ptr<TlsContext>> make_tls_client_context(const std::string& ca_pem, const std::string& session_cache) {
  auto ctx = base_context(MBEDTLS_SSL_IS_CLIENT);
  if (!ctx) return ctx;
  TlsContext& c = **ctx;
  c.session_cache = session_cache;
  mbedtls_ssl_conf_session_tickets(&c.conf, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
  int rc = mbedtls_x509_crt_parse(&c.cert, reinterpret_cast<const unsigned char*>(ca_pem.c_str()), ca_pem.size() + 1);
  if (rc != 0) return invalid("cluster CA certificate: " + mbed_error(rc));
  mbedtls_ssl_conf_ca_chain(&c.conf, &c.cert, nullptr);
  mbedtls_ssl_conf_authmode(&c.conf, MBEDTLS_SSL_VERIFY_REQUIRED);
  return ctx;
}

namespace {

// The server's own certificate (depth 0) is trusted when its fingerprint is the pinned one,
// whoever signed it; anything else is not.
int verify_pinned(void* data, mbedtls_x509_crt* crt, int depth, uint32_t* flags) {
  const auto* c = static_cast<const TlsContext*>(data);
  if (depth != 0) {
    *flags = 0;  // a chain above the leaf adds nothing: the leaf's pin decides
    return 0;
  }
  unsigned char digest[32];
  mbedtls_sha256_ret(crt->raw.p, crt->raw.len, digest, 0);
  bool match = to_hex(std::string_view(reinterpret_cast<char*>(digest), sizeof digest)) == c->pinned;
  *flags = match ? 0 : MBEDTLS_X509_BADCERT_NOT_TRUSTED;
  return 0;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> make_tls_client_context_pinned(const std::string& fingerprint,
                                                                   const std::string& session_cache) {
  if (fingerprint.size() != 64) return invalid("certificate fingerprint '" + fingerprint + "' is not a SHA-256 in hex");
  auto ctx = base_context(MBEDTLS_SSL_IS_CLIENT);
  if (!ctx) return ctx;
  TlsContext& c = **ctx;
  c.pinned = fingerprint;
  c.session_cache = session_cache;
  if (!session_cache.empty()) mbedtls_ssl_conf_session_tickets(&c.conf, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
  mbedtls_ssl_conf_authmode(&c.conf, MBEDTLS_SSL_VERIFY_OPTIONAL);  // and checked after the handshake
  mbedtls_ssl_conf_verify(&c.conf, verify_pinned, &c);
  return ctx;
}

Result<std::shared_ptr<TlsContext>> make_tls_bootstrap_context() {
  auto ctx = base_context(MBEDTLS_SSL_IS_CLIENT);
  if (!ctx) return ctx;
  mbedtls_ssl_conf_authmode(&(*ctx)->conf, MBEDTLS_SSL_VERIFY_NONE);
  return ctx;
}

std::unique_ptr<ByteStream> make_tls_stream(asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> ctx) {
  return std::make_unique<TlsStream>(std::move(socket), std::move(ctx));
}

}  // namespace hq::net
