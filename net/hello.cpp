#include "net/hello.hpp"

namespace hq::net {

pb::Envelope hello_envelope(const std::string& role, const std::string& name, const std::string& token) {
  pb::Envelope hello;
  pb::Hello* h = hello.mutable_hello();
  h->set_version(kProtocolVersion);
  h->set_min_version(kMinProtocolVersion);
  h->set_role(role);
  h->set_name(name);
  h->set_token(token);
  return hello;
}

Result<pb::HelloAck> hello_ack_of(const pb::Envelope& first, const std::string& peer) {
  if (first.has_error()) return Status(static_cast<Code>(first.error().code()), first.error().message());
  if (!first.has_hello_ack()) return invalid("handshake: expected HelloAck from " + peer);
  return first.hello_ack();
}

}  // namespace hq::net
