// The controller's side of a separate accounting store (`hq accounting`): an AcctStore
// whose calls are requests over TLS to the daemon, with a token of role "controller"
// minted from the store's own secret, else the cluster secret (cmd/keys store_secret_file). It connects when first used, and again after a
// failure; a call that fails on a connection the daemon has dropped (a restart) is sent
// once more on a fresh one (every request is idempotent: records apply past the source's
// last seq, the model's rows are written as they are, and the rest only reads). An
// unreachable store is an Unavailable error: the controller's shipper tries again later.
// Threads: blocking calls, made from one thread at a time (the accounting worker).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "hq.pb.h"
#include "net/client.hpp"
#include "store/acct_store.hpp"

namespace hq::cmd {

// Records per apply request: at most about this many bytes (a frame holds 16 MiB).
constexpr size_t kRequestBytes = 4 << 20;

struct RemoteStoreOptions {
  net::Endpoint at;
  std::string ca_file;      // the cluster CA the daemon's certificate is checked against
  std::string keys_dir;     // the token is minted from store_secret_file(keys_dir) (read at each connect)
  double timeout_s = 30;    // per request
};

class RemoteAcctStore final : public store::AcctStore {
 public:
  explicit RemoteAcctStore(RemoteStoreOptions options) : options_(std::move(options)) {}
  std::string where() const override { return options_.at.str(); }
  Result<int64_t> shipped(const std::string& source) override;
  Result<int64_t> apply(const std::string& source, const std::vector<store::AcctJob>& jobs) override;
  Result<std::vector<std::string>> query(const store::AcctJobQuery& q, std::vector<std::string>* steps = nullptr) override;
  Result<int64_t> count() override;
  Result<std::vector<std::string>> node_spans(const store::AcctJobQuery& q) override;
  Result<ModelRows> load_model() override;
  Status save_model(const ModelRows& before, const ModelRows& next) override;

 private:
  // Sends `req` and collects its replies (several when the answer says `more`).
  Result<std::vector<pb::StoreReply>> call(const pb::StoreRequest& req);
  Result<std::vector<pb::StoreReply>> call_once(const pb::StoreRequest& req);
  Status connect();

  RemoteStoreOptions options_;
  std::unique_ptr<net::RpcClient> client_;
};

}  // namespace hq::cmd
