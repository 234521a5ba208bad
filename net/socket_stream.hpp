// ByteStream over any connected asio stream socket (TCP, Unix): reads, writes, close.
// Used only from the owning io_context's thread.
#pragma once
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <string>

#include "net/stream.hpp"

namespace hq::net {

template <typename Socket>
class SocketStream : public ByteStream {
 public:
  SocketStream(Socket s, std::string peer) : socket_(std::move(s)), peer_(std::move(peer)) {}
  asio::awaitable<size_t> read_some(asio::mutable_buffer buf) override {
    asio::error_code ec;
    size_t n = co_await socket_.async_read_some(buf, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::eof) co_return 0;
    if (ec) throw asio::system_error(ec);
    co_return n;
  }
  asio::awaitable<void> write_all(asio::const_buffer buf) override {
    co_await asio::async_write(socket_, buf, asio::use_awaitable);
  }
  void close() override {
    asio::error_code ec;
    socket_.shutdown(Socket::shutdown_both, ec);
    socket_.close(ec);
  }
  std::string peer() const override { return peer_; }

 protected:
  Socket socket_;
  std::string peer_;
};

}  // namespace hq::net
