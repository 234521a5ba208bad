#include "cmd/keys.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <unistd.h>
#include <vector>

#include "cmd/paths.hpp"
#include "net/pki.hpp"

namespace hq::cmd {
namespace {

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

// Creates `path` with `mode`, failing if it exists (no silent overwrite of keys).
Status write_new(const std::string& path, const std::string& text, mode_t mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return io_error("cannot create " + path + ": " + std::strerror(errno));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = fsync(fd) == 0 && ok;
  close(fd);
  return ok ? Status::ok() : io_error("short write to " + path);
}

Status issue_controller_cert(const std::string& dir) {
  net::CertKey ca{read_small_file(dir + "/ca.pem"), read_small_file(dir + "/ca.key")};
  if (ca.key_pem.empty()) return not_found(dir + "/ca.key is missing or unreadable");
  auto cert = net::issue_server_cert(ca, "hq-controller");
  if (!cert) return cert.status();
  if (Status s = write_new(dir + "/controller.key", cert->key_pem, 0600); !s) return s;
  return write_new(dir + "/controller.pem", cert->cert_pem, 0644);
}

}  // namespace

Status keygen(const std::string& dir, const std::string& cluster_name) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  if (!exists(dir + "/ca.pem")) {
    auto ca = net::make_cluster_ca(cluster_name);
    if (!ca) return ca.status();
    if (Status s = write_new(dir + "/ca.key", ca->key_pem, 0600); !s) return s;
    if (Status s = write_new(dir + "/ca.pem", ca->cert_pem, 0644); !s) return s;
  }
  if (!exists(dir + "/controller.pem"))
    if (Status s = issue_controller_cert(dir); !s) return s;
  if (!exists(dir + "/secret")) {
    auto secret = net::random_hex(32);
    if (!secret) return secret.status();
    if (Status s = write_new(dir + "/secret", "# hq keyring: ID HEXKEY; the highest id signs, all verify\n1 " + *secret + "\n", 0600); !s)
      return s;
  }
  return Status::ok();
}

Result<std::shared_ptr<net::TlsContext>> controller_tls(const std::string& dir, const std::string& cluster_name) {
  if (!exists(dir + "/controller.pem")) {
    if (!exists(dir + "/ca.key"))
      return not_found("no TLS keys in " + dir + ": run `hq keygen " + dir +
                       "` (or start with --insecure-plaintext for debugging)");
    if (Status s = issue_controller_cert(dir); !s) return s;
  }
  std::string cert = read_small_file(dir + "/controller.pem"), key = read_small_file(dir + "/controller.key");
  if (key.empty()) return denied("cannot read " + dir + "/controller.key");
  return net::make_tls_server_context(cert, key);
}

Result<net::Keyring> load_keyring(const std::string& path) {
  std::string text = read_small_file(path);
  if (text.empty()) return not_found("cannot read the cluster secret " + path + " (hq keygen creates it; it is 0600)");
  return net::parse_keyring(text, path);
}

std::string find_secret_file(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("HQ_SECRET_FILE"); env && *env) return env;
  if (exists(local_dir() + "/keys/secret") && !read_small_file(local_dir() + "/state/controller.addr").empty())
    return local_dir() + "/keys/secret";
  return "/etc/hq/secret";
}

int run_keygen_command(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1] == "-h" || args[1] == "--help") {
    std::cerr << "usage: hq keygen DIR [CLUSTER_NAME]   (creates ca.pem, ca.key, controller.pem/.key, secret)\n";
    return args.size() < 2 ? 2 : 0;
  }
  Status s = keygen(args[1], args.size() > 2 ? args[2] : "hq");
  if (!s) {
    std::cerr << "hq keygen: " << s.message() << "\n";
    return 1;
  }
  auto fp = net::cert_fingerprint(read_small_file(args[1] + "/ca.pem"));
  std::cout << "keys in " << args[1] << "; cluster CA fingerprint sha256:" << (fp ? *fp : "?") << "\n"
            << "copy " << args[1] << "/ca.pem to every node and client (HQ_CA_FILE or /etc/hq/ca.pem)\n";
  return 0;
}

}  // namespace hq::cmd
