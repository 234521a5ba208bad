// Plain TCP ByteStream (TLS arrives as a second implementation of the same interface).
#include <asio/read.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "net/stream.hpp"

namespace hq::net {
namespace {

class TcpStream final : public ByteStream {
 public:
  explicit TcpStream(asio::ip::tcp::socket s) : socket_(std::move(s)) {
    asio::error_code ec;
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    auto ep = socket_.remote_endpoint(ec);
    peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  asio::awaitable<size_t> read_some(asio::mutable_buffer buf) override {
    co_return co_await socket_.async_read_some(buf, asio::use_awaitable);
  }
  asio::awaitable<void> write_all(asio::const_buffer buf) override {
    co_await asio::async_write(socket_, buf, asio::use_awaitable);
  }
  void close() override {
    asio::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
  std::string peer() const override { return peer_; }

 private:
  asio::ip::tcp::socket socket_;
  std::string peer_;
};

}  // namespace

std::unique_ptr<ByteStream> make_tcp_stream(asio::ip::tcp::socket socket) {
  return std::make_unique<TcpStream>(std::move(socket));
}

}  // namespace hq::net
