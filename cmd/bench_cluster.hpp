// The throwaway cluster a benchmark starts from this binary: a controller and N node
// agents in a temp dir (removed, with every process, when the BenchCluster goes), and a
// client connection to it as a CLI would make one. One thread.
#pragma once
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/status.hpp"
#include "net/client.hpp"

namespace hq::cmd {

struct BenchCluster {
  std::string dir;
  std::string addr;
  net::Transport transport;
  std::vector<pid_t> pids;
  std::string accounting_db;  // set before start_cluster: the controller's store file
  bool local_socket = false;  // run_client's clients use the controller's local socket (else TLS)
  ~BenchCluster();
};

// Nodes b1..bN with `cpus` CPUs each (N = 0: a controller only).
Status start_cluster(BenchCluster& c, int nodes, int cpus, bool plaintext);
// A client connection with a fresh token from the token service.
Result<std::unique_ptr<net::RpcClient>> bench_connect(const BenchCluster& c);
// Runs one client process against the cluster, as a user's shell would: this binary with
// `argv` (argv[0] "hq" or a persona's name), stdout to `out` (a file path, or /dev/null).
// True when it exits 0.
bool run_client(const BenchCluster& c, const std::vector<std::string>& argv, const std::string& out);
// Waits (up to 10 s) until `nodes` agents respond.
Status wait_for_nodes(net::RpcClient& client, int nodes);
// Waits until no job is pending or running (the queue is empty), up to `timeout_s`.
Status wait_until_idle(net::RpcClient& client, double timeout_s);

}  // namespace hq::cmd
