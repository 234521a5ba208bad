#include "cmd/paths.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "cmd/auth_client.hpp"
#include "cmd/config_toml.hpp"
#include "cmd/dns_client.hpp"
#include "cmd/users.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {

std::string read_small_file(const std::string& path) {
  // One open and a read or two, no stream: the agent reads several cgroup control files per
  // job step with it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  auto text = read_to_end(fd, path);
  ::close(fd);
  return text ? std::move(*text) : std::string();
}

Result<std::string> read_to_end(int fd, const std::string& what) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("cannot read " + what + ": " + std::strerror(errno));
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

namespace {

Status errno_error(const std::string& what, const std::string& path) {
  return io_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

// write(2) until all of `text` is written (short writes and EINTR are retried).
Status write_all(int fd, const std::string& text, const std::string& path) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno_error("write", path) : io_error("cannot write " + path + ": no progress");
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

// A new file `path` (not there before) holding `text`, fsynced unless `sync` is false;
// removed again when writing fails, so no half-written file is left.
Status write_new_file(const std::string& path, const std::string& text, mode_t mode, bool sync = true) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return errno_error("create", path);
  Status s = write_all(fd, text, path);
  if (s && sync && ::fsync(fd) != 0) s = errno_error("fsync", path);
  if (::close(fd) != 0 && s) s = errno_error("close", path);
  if (!s) ::unlink(path.c_str());
  return s;
}

// Makes a rename in the directory of `path` durable.
Status sync_parent_dir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error("open directory", dir);
  Status s = ::fsync(fd) == 0 ? Status::ok() : errno_error("fsync directory", dir);
  ::close(fd);
  return s;
}

// `path.new` written (and fsynced with `sync`), then renamed over `path`.
Status write_and_rename(const std::string& path, const std::string& text, mode_t mode, bool sync) {
  std::string tmp = path + ".new";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return errno_error("remove the stale", tmp);
  if (Status s = write_new_file(tmp, text, mode, sync); !s) return s;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = errno_error("rename " + tmp + " over", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::ok();
}

}  // namespace

Status write_file_atomic(const std::string& path, const std::string& text, mode_t mode) {
  if (Status s = write_and_rename(path, text, mode, true); !s) return s;
  return sync_parent_dir(path);
}

Status replace_file(const std::string& path, const std::string& text, mode_t mode) {
  return write_and_rename(path, text, mode, false);
}

Status create_new_file(const std::string& path, const std::string& text, mode_t mode) {
  if (Status s = write_new_file(path, text, mode); !s) return s;
  return sync_parent_dir(path);
}

std::string current_user_name() {
  return user_name(getuid());
}

std::string hq_home() {
  if (const char* h = std::getenv("HQ_HOME"); h && *h) return h;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return std::string(x) + "/hq";
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    auto pw = passwd_by_uid(getuid());
    return (pw && !pw->home.empty() ? pw->home : std::string("/tmp")) + "/.local/state/hq";
  }
  return std::string(home) + "/.local/state/hq";
}

std::string local_dir() { return hq_home() + "/local"; }

namespace {

Result<net::Endpoint> from_config(const std::string& path) {
  auto cfg = load_config_file(path);
  if (!cfg) return cfg.status();
  if (cfg->controller.port != 0) return net::Endpoint{cfg->controller.host, static_cast<uint16_t>(cfg->controller.port)};
  std::string addr(trim(read_small_file(cfg->controller.state_dir + "/controller.addr")));
  if (addr.empty()) return unavailable("controller in " + path + " uses port 0 and has not written its address yet");
  return net::parse_endpoint(addr);
}

}  // namespace

std::string node_run_dir() {
  const char* env = std::getenv("HQ_RUN_DIR");
  return env && *env ? env : "/run/hq";
}

namespace {
bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}
}  // namespace

// HQ_CONFIG names a file that is there: it comes before the local cluster.
bool named_config_readable() { return env_set("HQ_CONFIG") && access(std::getenv("HQ_CONFIG"), R_OK) == 0; }

// Named clusters (HQ_CONTROLLER, a readable HQ_CONFIG) come first; HQ_CONTROLLER (or
// --controller) naming the local cluster's own address is the local cluster, with its CA,
// secret and token service.
bool local_cluster_targeted() {
  std::string local(trim(read_small_file(local_dir() + "/state/controller.addr")));
  if (local.empty()) return false;
  if (env_set("HQ_CONTROLLER")) return trim(std::getenv("HQ_CONTROLLER")) == local;
  return !named_config_readable();
}

std::string client_config_path() {
  const char* env = std::getenv("HQ_CONFIG");
  return env && *env ? env : "/etc/hq/config.toml";
}

Result<net::Endpoint> find_controller(const std::string& flag_value) {
  if (!flag_value.empty()) return net::parse_endpoint(flag_value);
  if (const char* env = std::getenv("HQ_CONTROLLER"); env && *env) return net::parse_endpoint(env);
  std::string cfg = client_config_path();
  if (named_config_readable()) return from_config(cfg);
  std::string local(trim(read_small_file(local_dir() + "/state/controller.addr")));
  if (!local.empty()) return net::parse_endpoint(local);
  if (access(cfg.c_str(), R_OK) == 0) return from_config(cfg);  // a missing HQ_CONFIG: no config file
  // On a node: where its agent said the controller is.
  std::string from_agent(trim(read_small_file(node_run_dir() + "/controller")));
  if (!from_agent.empty()) return net::parse_endpoint(from_agent);
  // Last, DNS: _hq._tcp.<domain>.
  auto srv = controller_from_srv();
  if (srv) return srv;
  return not_found("no controller found: set HQ_CONTROLLER=HOST:PORT or HQ_CONFIG, "
                   "run on a node whose agent is up, publish an SRV record _hq._tcp.<domain> (" +
                   srv.status().message() + "), or start a local cluster with `hq local start`");
}

Result<net::Transport> find_transport(const std::string& ca_flag, bool plaintext_flag, bool from_node_run_dir) {
  const char* plain = std::getenv("HQ_INSECURE_PLAINTEXT");
  if (plaintext_flag || (plain && std::string(plain) == "1")) return net::Transport{true, ""};
  std::vector<std::string> candidates;
  if (!ca_flag.empty()) candidates.push_back(ca_flag);
  else if (const char* env = std::getenv("HQ_CA_FILE"); env && *env) candidates.push_back(env);
  else {
    if (local_cluster_targeted()) candidates.push_back(local_dir() + "/keys/ca.pem");
    if (auto c = load_config_file(client_config_path())) candidates.push_back(c->keys_dir + "/ca.pem");
    candidates.push_back("/etc/hq/ca.pem");
    if (from_node_run_dir) candidates.push_back(node_run_dir() + "/ca.pem");  // what this node's agent verified
  }
  for (const auto& path : candidates) {
    std::string pem = read_small_file(path);
    if (!pem.empty()) return net::Transport{false, pem};
  }
  return not_found("no cluster CA certificate found (tried " + candidates.front() +
                   "): set HQ_CA_FILE to the cluster's ca.pem");
}

std::string find_auth_socket() {
  if (const char* env = std::getenv("HQ_AUTH_SOCKET"); env && *env) return env;
  if (local_cluster_targeted()) return local_dir() + "/state/auth.sock";
  if (auto c = load_config_file(client_config_path()))
    return c->controller.auth_socket.empty() ? c->controller.state_dir + "/auth.sock" : c->controller.auth_socket;
  std::string on_node = node_run_dir() + "/auth.sock";  // a node agent's token service
  if (access("/var/lib/hq/auth.sock", F_OK) != 0 && access(on_node.c_str(), F_OK) == 0) return on_node;
  return "/var/lib/hq/auth.sock";
}

std::string client_socket_path(const ControllerConfig& c) {
  if (c.client_socket == "none") return "";
  return c.client_socket.empty() ? c.state_dir + "/client.sock" : c.client_socket;
}

namespace {
// `path` when it is the socket of the controller HQ_CONTROLLER names, or none is named:
// a controller writes its address beside its socket (controller.addr in its state dir).
std::string if_named_controller(const std::string& path) {
  if (path.empty() || !env_set("HQ_CONTROLLER")) return path;
  std::string addr(trim(read_small_file(path.substr(0, path.rfind('/') + 1) + "controller.addr")));
  return addr == trim(std::getenv("HQ_CONTROLLER")) ? path : "";
}
}  // namespace

std::string find_client_socket() {
  if (const char* env = std::getenv("HQ_CLIENT_SOCKET"); env && *env)
    return std::string(env) == "none" ? "" : if_named_controller(env);
  if (local_cluster_targeted()) return local_dir() + "/state/client.sock";
  if (auto c = load_config_file(client_config_path())) return if_named_controller(client_socket_path(c->controller));
  return "";
}

namespace {

Result<std::unique_ptr<net::RpcClient>> connect_once(const std::string& flag_value) {
  if (flag_value.empty()) {  // --controller sets HQ_CONTROLLER, which find_client_socket() heeds
    std::string local = find_client_socket();
    if (!local.empty()) {
      auto client = net::RpcClient::connect_local(local, "client", 10, /*pipelined=*/true);
      if (client || client.status().code() != Code::kUnavailable) return client;
    }
  }
  auto ep = find_controller(flag_value);
  if (!ep) return ep.status();
  auto transport = find_transport();
  if (!transport) return transport.status();
  auto token = fetch_token(find_auth_socket());
  if (!token) return token.status();
  transport->token = *token;
  std::string cache_dir = hq_home() + "/tls";
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (!ec) {
    chmod(cache_dir.c_str(), 0700);
    transport->session_cache = cache_dir + "/session-" + ep->host + "-" + std::to_string(ep->port);
  }
  return net::RpcClient::connect(*ep, *transport, "client", 10, /*pipelined=*/true);
}

bool waiting_for_controller() {
  const char* env = std::getenv("HQ_WAIT_FOR_CONTROLLER");
  return env && std::string(env) == "1";
}

}  // namespace

// With --wait-for-controller (HQ_WAIT_FOR_CONTROLLER=1) a controller that cannot be
// reached yet is retried forever: 0.2 s doubling to 2 s, with jitter, and a line on
// stderr now and then. Other errors (no controller configured, refused token) end it.
Result<std::unique_ptr<net::RpcClient>> connect_client(const std::string& flag_value) {
  auto client = connect_once(flag_value);
  if (client || !waiting_for_controller()) return client;
  std::mt19937 rng(std::random_device{}());
  double backoff = 0.2;
  for (int attempt = 1; !client && client.status().code() == Code::kUnavailable; ++attempt) {
    if (attempt <= 1 || attempt % 10 == 0)
      hq::cerr() << "hq: waiting for the controller (" << client.status().message() << ")\n";
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(backoff * jitter(rng) * 1000)));
    backoff = std::min(backoff * 2, 2.0);
    client = connect_once(flag_value);
  }
  return client;
}

}  // namespace hq::cmd
