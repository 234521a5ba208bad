// call_with_retry: resend a keyed request after a lost connection (see the header).
#include "cmd/client/retry.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <thread>

#include "cmd/paths.hpp"
#include "core/hex.hpp"
#include "net/entropy.hpp"

namespace hq::cmd {

std::string new_request_key() {
  std::string bytes = net::random_bytes(16);
  if (bytes.size() != 16) {  // no getrandom: still unique enough per process and moment
    std::random_device rd;
    bytes.clear();
    for (int i = 0; i < 16; ++i) bytes.push_back(static_cast<char>(rd()));
  }
  return to_hex(bytes);
}

Result<pb::Envelope> call_with_retry(std::unique_ptr<net::RpcClient>& client, pb::Envelope& req,
                                     double budget_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(budget_s * 1000));
  std::optional<std::mt19937> rng;  // seeded on a first retry: a seed costs a cpuid trap on a VM
  double backoff = 0.05;
  bool first = !client;  // connect at once the first time
  Result<pb::Envelope> reply = client ? client->call_keeping(req) : Result<pb::Envelope>(unavailable("not connected"));
  while (!reply && reply.status().code() == Code::kUnavailable && Clock::now() < deadline) {
    if (!first) {
      if (!rng) rng.emplace(std::random_device{}());
      std::uniform_real_distribution<double> jitter(0.5, 1.0);
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(backoff * jitter(*rng) * 1000)));
      backoff = std::min(backoff * 2, 1.0);
    }
    first = false;
    auto again = connect_client();
    if (!again) {
      if (again.status().code() != Code::kUnavailable) return again.status();
      reply = again.status();
      continue;
    }
    client = std::move(again).value();
    reply = client->call_keeping(req);
  }
  return reply;
}

}  // namespace hq::cmd
