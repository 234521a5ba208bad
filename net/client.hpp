// Blocking RPC client for command-line tools and benchmarks: connect, handshake,
// request/reply, or pipelined send/recv. Over TCP it owns a private io_context; over the
// controller's local socket it makes plain system calls (net/local_link). One thread only.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/wire_read.hpp"

namespace google::protobuf {
class Arena;
}

namespace hq::net {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
};

// How to reach the controller: TLS trusting the cluster CA (the default), or plaintext
// only when explicitly asked for (--insecure-plaintext).
struct Transport {
  bool plaintext = false;
  std::string ca_pem;
  std::string session_cache;  // optional TLS session cache file (see make_tls_client_context)
  std::string token;          // identity token presented in Hello
};

// "host:port" or "host" (default port). Validates the port.
Result<Endpoint> parse_endpoint(const std::string& text, uint16_t default_port = 6817);

class RpcClient {
 public:
  // `pipelined`: do not wait for HelloAck; it is read ahead of the first reply (one round
  // trip fewer for one-shot command-line clients; handshake errors surface on that call).
  static Result<std::unique_ptr<RpcClient>> connect(const Endpoint& ep, const Transport& transport,
                                                    const std::string& role, double timeout_s = 10,
                                                    bool pipelined = false);
  // The same over the controller's local socket at `path`: no TLS and no token (the
  // controller asks the kernel who connected). Unavailable when nothing listens there.
  static Result<std::unique_ptr<RpcClient>> connect_local(const std::string& path, const std::string& role,
                                                          double timeout_s = 10, bool pipelined = false);
  ~RpcClient();
  // Sends `req` with a fresh seq and waits for its reply; an Error reply becomes a Status.
  Result<pb::Envelope> call(pb::Envelope req, double timeout_s = 30);
  // The same without a copy of `req` (a submission's copy and its destruction were a fifth
  // of sbatch's instructions): its seq is set in place, and it is left whole to be resent.
  Result<pb::Envelope> call_keeping(pb::Envelope& req, double timeout_s = 30);
  // The same, the reply made on `arena` and living as long as it: a long listing's
  // thousands of records then come from a few blocks, not from an allocation each.
  Result<pb::Envelope*> call_on(google::protobuf::Arena& arena, pb::Envelope req, double timeout_s = 30);
  // The reply to a QueueRequest with its job records left unparsed (net/wire_read): a long
  // listing's client parses them one at a time. `frame` holds the bytes `jobs` views.
  struct UnparsedReply {
    std::unique_ptr<std::string> frame;
    UnparsedJobs parts;
  };
  Result<UnparsedReply> call_unparsed_jobs(pb::Envelope req, double timeout_s = 30);
  // Pipelining for benchmarks: send without waiting, then collect replies in order.
  void send(pb::Envelope req);
  Result<pb::Envelope> recv(double timeout_s = 30);
  // The same, giving up (Internal "interrupted"; the connection is closed) once `interrupted()` says
  // so; it is asked every 100 ms (a client waiting long that the user may stop).
  Result<pb::Envelope> recv(double timeout_s, const std::function<bool()>& interrupted);
  const std::string& cluster() const { return cluster_; }
  // A file the controller passed with its answers (QueueReply.listing_file_bytes), owned by
  // the caller from now on; -1 when none came (always over TCP).
  int take_passed_file();

 private:
  struct Impl;
  explicit RpcClient(std::unique_ptr<Impl> impl);
  // Gives `req` the next seq and sends it (every send and call does); returns the seq.
  uint64_t send_stamped(pb::Envelope& req);
  // Runs the handshake over the stream that `dial` (a coroutine on the private io_context)
  // opens; defined and used in client.cpp only.
  template <typename Dial>
  static Result<std::unique_ptr<RpcClient>> open(Dial dial, const std::string& where, const Transport& transport,
                                                 const std::string& role, double timeout_s, bool pipelined);
  // The client once its handshake is done (or, `pipelined`, sent and its answer due first).
  static std::unique_ptr<RpcClient> with_handshake(std::unique_ptr<Impl> impl, const pb::HelloAck& ack, bool pipelined);
  // The next frame, the pipelined handshake's answer taken first (recv's part before parsing).
  Result<std::string> recv_payload(double timeout_s, const std::function<bool()>& interrupted);
  // `frame` parsed into `msg` (an undecodable one closes the connection); parse_reply also
  // makes an Error reply the Status.
  Status parse_frame(const std::string& frame, pb::Envelope& msg);
  Status parse_reply(const std::string& frame, pb::Envelope& msg);
  std::unique_ptr<Impl> impl_;
  std::string cluster_;
  uint64_t next_seq_ = 1;
  bool ack_pending_ = false;
};

}  // namespace hq::net
