// Plain TCP ByteStream (TLS arrives as a second implementation of the same interface).
#include "net/socket_stream.hpp"

namespace hq::net {

std::unique_ptr<ByteStream> make_tcp_stream(asio::ip::tcp::socket socket) {
  asio::error_code ec;
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  auto ep = socket.remote_endpoint(ec);
  std::string peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  return std::make_unique<SocketStream<asio::ip::tcp::socket>>(std::move(socket), std::move(peer));
}

}  // namespace hq::net
