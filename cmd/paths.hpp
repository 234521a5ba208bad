// Where hq keeps per-user state, and how clients find the controller:
// --controller / HQ_CONTROLLER, then the local cluster ($HQ_HOME/local), then the config
// file (HQ_CONFIG or /etc/hq/config.toml). Reads the environment; call from cmd/ only.
// Also how cmd/ writes small files durably (write_file_atomic, create_new_file); these
// touch only the files named, and are safe from any thread on distinct paths.
#pragma once
#include <string>
#include <sys/types.h>

#include "core/config.hpp"
#include "core/status.hpp"
#include "net/client.hpp"

namespace hq::cmd {

// $HQ_HOME, else $XDG_STATE_HOME/hq, else ~/.local/state/hq.
std::string hq_home();
std::string local_dir();  // hq_home()/local: the `hq local` cluster

// True when clients talk to the running `hq local` cluster (no HQ_CONTROLLER nor a
// readable HQ_CONFIG, and its controller has written its address).
bool local_cluster_targeted();
// The config file clients consult: HQ_CONFIG, else /etc/hq/config.toml.
std::string client_config_path();

// Where clients find the controller, the first that applies (docs/install.md):
// --controller HOST:PORT (every client takes it: it sets HQ_CONTROLLER for the process),
// HQ_CONTROLLER, HQ_CONFIG's [controller] (when that file is there), the running `hq
// local` cluster, /etc/hq/config.toml (unless HQ_CONFIG names another file), this node's
// agent (its run dir), DNS SRV _hq._tcp.<domain>.
Result<net::Endpoint> find_controller(const std::string& flag_value = "");
// TLS trusting the cluster CA from --ca / HQ_CA_FILE, the local cluster's keys, the
// config's keys_dir, or /etc/hq/ca.pem; plaintext only with --insecure-plaintext or
// HQ_INSECURE_PLAINTEXT=1.
// `from_node_run_dir`: also the CA a node agent published (clients yes; agents no).
Result<net::Transport> find_transport(const std::string& ca_flag = "", bool plaintext_flag = false,
                                      bool from_node_run_dir = true);
// The token service socket: HQ_AUTH_SOCKET, else the local cluster's, else the config's
// auth_socket or <state_dir>/auth.sock.
std::string find_auth_socket();
// The controller's local client socket where find_controller() would reach a controller
// on this host: HQ_CLIENT_SOCKET ("none": never), else the local cluster's, else the
// config's client_socket or <state_dir>/client.sock; "" when --controller/HQ_CONTROLLER
// names another controller (not the address written beside the socket) or there is none.
std::string find_client_socket();
// A controller config's client socket: client_socket, else <state_dir>/client.sock; "" for "none".
std::string client_socket_path(const ControllerConfig& c);
// Connects as a client: through the controller's local socket when there is one here
// (the kernel says who asks), else TLS with a fresh identity token; names what was tried on failure.
Result<std::unique_ptr<net::RpcClient>> connect_client(const std::string& flag_value = "");

// A node's runtime directory (HQ_RUN_DIR, else /run/hq): its agent's token service,
// the controller's address and the CA, for clients on that node.
std::string node_run_dir();
// Reads a whole small file; empty string if missing.
std::string read_small_file(const std::string& path);
// Everything `fd` reads until its end, through read(2) (no stream, so no locale is built);
// an error names `what`.
Result<std::string> read_to_end(int fd, const std::string& what);
// Replaces `path` by a file holding `text` (created with `mode`, less the umask): written
// to `path.new`, fsynced, renamed over `path`, and the directory fsynced, so readers
// never see half a file. On any failure (a full disk too) `path.new` is removed and
// `path` keeps its old content.
Status write_file_atomic(const std::string& path, const std::string& text, mode_t mode);
// The same without the fsyncs: readers, and this process started again after a crash,
// see the old file or the new one whole, but a host that loses power may lose the change.
// For records that only matter while the host stays up (a job's spool: its processes die
// with the host too).
Status replace_file(const std::string& path, const std::string& text, mode_t mode);
// Creates `path` holding `text`, failing if it exists (keys are never overwritten);
// fsynced with its directory. A failed write removes the file again.
Status create_new_file(const std::string& path, const std::string& text, mode_t mode);
std::string current_user_name();

}  // namespace hq::cmd
