#include "cmd/keys.hpp"

#include <algorithm>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "cmd/paths.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"
#include "net/pki.hpp"

namespace hq::cmd {
namespace {

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

// DIR/BASE.pem and DIR/BASE.key: a server certificate issued by the cluster CA in DIR.
Status issue_server_cert_files(const std::string& dir, const std::string& base) {
  net::CertKey ca{read_small_file(dir + "/ca.pem"), read_small_file(dir + "/ca.key")};
  if (ca.key_pem.empty()) return not_found(dir + "/ca.key is missing or unreadable");
  auto cert = net::issue_server_cert(ca, "hq-" + base);
  if (!cert) return cert.status();
  if (Status s = create_new_file(dir + "/" + base + ".key", cert->key_pem, 0600); !s) return s;
  return create_new_file(dir + "/" + base + ".pem", cert->cert_pem, 0644);
}

Status issue_controller_cert(const std::string& dir) { return issue_server_cert_files(dir, "controller"); }

Result<std::shared_ptr<net::TlsContext>> server_tls_from(const std::string& dir, const std::string& base) {
  std::string cert = read_small_file(dir + "/" + base + ".pem"), key = read_small_file(dir + "/" + base + ".key");
  if (key.empty()) return denied("cannot read " + dir + "/" + base + ".key");
  return net::make_tls_server_context(cert, key);
}

// A new keyring file at `path` with one random key (never overwrites).
Status new_keyring(const std::string& path) {
  auto secret = net::random_hex(32);
  if (!secret) return secret.status();
  return create_new_file(path, "# hq keyring: ID HEXKEY; the highest id signs, all verify\n1 " + *secret + "\n", 0600);
}

// hq keygen DIR --store-secret [--rotate]
int store_secret_command(const std::vector<std::string>& args) {
  std::string path = args[1] + "/accounting.secret";
  if (args.size() >= 4 && args[3] == "--rotate") {
    auto id = rotate_keyring(path);
    if (!id) return hq::cerr() << "hq keygen: " << id.status().message() << "\n", 1;
    hq::cout() << "added key " << *id << " to " << path << "; copy it to the accounting store's host, then retire "
              << "the old key (--store-secret --retire ID) here and there\n";
    return 0;
  }
  if (args.size() >= 5 && args[3] == "--retire") {
    auto id = parse_int(args[4], 1, 1000000);
    Status s = id ? retire_key(path, static_cast<uint32_t>(*id)) : invalid("bad key id " + args[4]);
    if (!s) return hq::cerr() << "hq keygen: " << s.message() << "\n", 1;
    hq::cout() << "retired key " << args[4] << " from " << path << "\n";
    return 0;
  }
  if (exists(path)) return hq::cerr() << "hq keygen: " << path << " exists (--rotate adds a key to it)\n", 1;
  if (Status s = new_keyring(path); !s) return hq::cerr() << "hq keygen: " << s.message() << "\n", 1;
  hq::cout() << "made " << path << ": the controller and its accounting store (hq accounting) use it instead of the "
            << "cluster secret from their next connection; copy it to the store's host only, never to nodes\n";
  return 0;
}

}  // namespace

Status keygen(const std::string& dir, const std::string& cluster_name) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  if (!exists(dir + "/ca.pem")) {
    auto ca = net::make_cluster_ca(cluster_name);
    if (!ca) return ca.status();
    if (Status s = create_new_file(dir + "/ca.key", ca->key_pem, 0600); !s) return s;
    if (Status s = create_new_file(dir + "/ca.pem", ca->cert_pem, 0644); !s) return s;
  }
  if (!exists(dir + "/controller.pem"))
    if (Status s = issue_controller_cert(dir); !s) return s;
  if (!exists(dir + "/secret"))
    if (Status s = new_keyring(dir + "/secret"); !s) return s;
  return Status::ok();
}

Result<std::shared_ptr<net::TlsContext>> controller_tls(const std::string& dir, const std::string& cluster_name) {
  if (!exists(dir + "/controller.pem")) {
    if (!exists(dir + "/ca.key"))
      return not_found("no TLS keys in " + dir + ": run `hq keygen " + dir +
                       "` (or start with --insecure-plaintext for debugging)");
    if (Status s = issue_controller_cert(dir); !s) return s;
  }
  return server_tls_from(dir, "controller");
}

Result<std::shared_ptr<net::TlsContext>> accounting_tls(const std::string& dir) {
  if (!exists(dir + "/accounting.pem")) {
    if (exists(dir + "/ca.key")) {
      if (Status s = issue_server_cert_files(dir, "accounting"); !s) return s;
    } else if (exists(dir + "/controller.pem")) {
      return server_tls_from(dir, "controller");  // the controller's host: its certificate
    } else {
      return not_found("no TLS keys in " + dir + ": the accounting store needs the cluster CA's key (ca.key) there, or "
                       "a certificate it issued (accounting.pem and accounting.key)");
    }
  }
  return server_tls_from(dir, "accounting");
}

Result<net::Keyring> load_keyring(const std::string& path) {
  std::string text = read_small_file(path);
  if (text.empty()) return not_found("cannot read the cluster secret " + path + " (hq keygen creates it; it is 0600)");
  return net::parse_keyring(text, path);
}

Status write_keyring_atomic(const std::string& path, const net::Keyring& ring) {
  return write_file_atomic(path, net::format_keyring(ring), 0600);
}

Result<uint32_t> rotate_keyring(const std::string& path) {
  auto ring = load_keyring(path);
  if (!ring) return ring.status();
  auto key = net::random_hex(32);
  if (!key) return key.status();
  auto parsed = net::parse_keyring("1 " + *key, "new key");
  uint32_t id = ring->signing_id() + 1;
  ring->keys[id] = parsed->keys.at(1);
  if (Status s = write_keyring_atomic(path, *ring); !s) return s;
  return id;
}

Status retire_key(const std::string& path, uint32_t id) {
  auto ring = load_keyring(path);
  if (!ring) return ring.status();
  if (!ring->keys.count(id)) return not_found("key " + std::to_string(id) + " is not in " + path);
  if (ring->keys.size() == 1) return invalid("key " + std::to_string(id) + " is the only key; rotate first");
  ring->keys.erase(id);
  return write_keyring_atomic(path, *ring);
}

Status KeyringWatcher::load() {
  std::string msg = refresh();
  return ring_.keys.empty() ? Status(Code::kNotFound, msg) : Status::ok();
}

std::string KeyringWatcher::refresh() {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) return ring_.keys.empty() ? "cannot read the cluster secret " + path_ : "";
  int64_t stamp = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec + st.st_size;
  if (stamp == stamp_) return "";
  auto ring = load_keyring(path_);
  if (!ring) return "keeping the previous keys: " + ring.status().message();
  stamp_ = stamp;
  ring_ = std::move(ring).value();
  return "loaded keyring " + path_ + " (signing key " + std::to_string(ring_.signing_id()) + ", " +
         std::to_string(ring_.keys.size()) + " keys)";
}

std::string store_secret_file(const std::string& keys_dir) {
  return exists(keys_dir + "/accounting.secret") ? keys_dir + "/accounting.secret" : keys_dir + "/secret";
}

std::string find_secret_file(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("HQ_SECRET_FILE"); env && *env) return env;
  if (local_cluster_targeted() && exists(local_dir() + "/keys/secret")) return local_dir() + "/keys/secret";
  return "/etc/hq/secret";
}

int run_keygen_command(const std::vector<std::string>& args) {
  bool help = std::any_of(args.begin() + (args.empty() ? 0 : 1), args.end(),
                          [](const std::string& a) { return a == "-h" || a == "--help"; });
  if (args.size() < 2 || help) {
    (help ? hq::cout() : hq::cerr())
        << "usage: hq keygen DIR [CLUSTER_NAME]   (creates ca.pem, ca.key, controller.pem/.key, secret)\n"
           "       hq keygen DIR --rotate         (adds a signing key to DIR/secret; old keys still verify)\n"
           "       hq keygen DIR --retire ID      (removes key ID from DIR/secret)\n"
           "       hq keygen DIR --store-secret [--rotate | --retire ID]\n"
           "                                      (DIR/accounting.secret: the controller's and its accounting\n"
           "                                       store's own keyring, which nodes never hold)\n";
    return help ? 0 : 2;
  }
  if (args.size() >= 3 && args[2] == "--store-secret") return store_secret_command(args);
  if (args.size() >= 3 && args[2] == "--rotate") {
    auto id = rotate_keyring(args[1] + "/secret");
    if (!id) return hq::cerr() << "hq keygen: " << id.status().message() << "\n", 1;
    hq::cout() << "added key " << *id << " to " << args[1] << "/secret; it signs from now on. Copy the file to every "
              << "node, then retire the old key with --retire\n";
    return 0;
  }
  if (args.size() >= 4 && args[2] == "--retire") {
    auto id = parse_int(args[3], 1, 1000000);
    Status s = id ? retire_key(args[1] + "/secret", static_cast<uint32_t>(*id)) : invalid("bad key id " + args[3]);
    if (!s) return hq::cerr() << "hq keygen: " << s.message() << "\n", 1;
    hq::cout() << "retired key " << args[3] << " from " << args[1] << "/secret\n";
    return 0;
  }
  Status s = keygen(args[1], args.size() > 2 ? args[2] : "hq");
  if (!s) {
    hq::cerr() << "hq keygen: " << s.message() << "\n";
    return 1;
  }
  auto fp = net::cert_fingerprint(read_small_file(args[1] + "/ca.pem"));
  hq::cout() << "keys in " << args[1] << "; cluster CA fingerprint sha256:" << (fp ? *fp : "?") << "\n"
            << "copy " << args[1] << "/ca.pem to every node and client (HQ_CA_FILE or /etc/hq/ca.pem)\n";
  return 0;
}

}  // namespace hq::cmd
