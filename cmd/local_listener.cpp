#include "cmd/local_listener.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace hq::cmd {

Status listen_local(asio::local::stream_protocol::acceptor& acceptor, const std::string& path, const std::string& what) {
  ::unlink(path.c_str());
  try {
    asio::local::stream_protocol::endpoint ep(path);
    acceptor.open(ep.protocol());
    acceptor.bind(ep);
    acceptor.listen(256);
  } catch (const std::exception& e) {
    return io_error("cannot listen on " + what + " " + path + ": " + e.what());
  }
  chmod(path.c_str(), 0666);
  return Status::ok();
}

void close_local(asio::local::stream_protocol::acceptor& acceptor, const std::string& path) {
  asio::error_code ec;
  acceptor.close(ec);
  ::unlink(path.c_str());
}

}  // namespace hq::cmd
