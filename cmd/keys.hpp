// The cluster's key material on disk, in one directory (config [cluster] keys_dir):
//   ca.pem (public; what agents and clients trust), ca.key, controller.pem,
//   controller.key, secret (private files 0600), and where `hq accounting` runs,
//   accounting.pem and accounting.key; optionally accounting.secret, a keyring the
//   controller and its accounting store share and the nodes never hold.
// `hq keygen DIR` creates what is missing; the controller issues its certificate from
// the CA automatically when it has the CA key but no certificate yet.
#pragma once
#include <memory>
#include <string>
#include <sys/types.h>

#include "core/status.hpp"
#include "net/tls.hpp"
#include "net/token.hpp"

namespace hq::cmd {

// Creates the CA, the controller certificate and the secret where missing; never overwrites.
Status keygen(const std::string& dir, const std::string& cluster_name);
// The controller's TLS server context from DIR (issuing controller.pem if needed).
Result<std::shared_ptr<net::TlsContext>> controller_tls(const std::string& dir, const std::string& cluster_name);
// The accounting store's (`hq accounting`): DIR/accounting.pem, issued from the CA key when
// missing; on a host without the CA key, the controller's certificate if DIR has it.
Result<std::shared_ptr<net::TlsContext>> accounting_tls(const std::string& dir);

int run_keygen_command(const std::vector<std::string>& args);

Result<net::Keyring> load_keyring(const std::string& path);
// Adds a fresh key with the next id (it signs from now on); older keys still verify.
Result<uint32_t> rotate_keyring(const std::string& path);
// Removes key `id`; tokens it signed stop verifying. The last key cannot be removed.
Status retire_key(const std::string& path, uint32_t id);

// A keyring file reloaded when it changes (mtime/size), so a rotation needs no restart.
// A file that fails to parse keeps the previous keys (and says why). One thread.
class KeyringWatcher {
 public:
  explicit KeyringWatcher(std::string path) : path_(std::move(path)) {}
  Status load();
  // Reloads if the file changed; returns a message when it did (or failed to).
  std::string refresh();
  const net::Keyring& keys() const { return ring_; }

 private:
  std::string path_;
  net::Keyring ring_;
  int64_t stamp_ = -1;
};
// The keyring the controller's tokens for its accounting store are minted from and checked
// with: DIR/accounting.secret when it exists (`hq keygen DIR --store-secret`), else the
// cluster secret DIR/secret.
std::string store_secret_file(const std::string& keys_dir);
// --secret, else HQ_SECRET_FILE, else the running local cluster's, else /etc/hq/secret.
std::string find_secret_file(const std::string& flag_value);

}  // namespace hq::cmd
