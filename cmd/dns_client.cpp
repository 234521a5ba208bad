#include "cmd/dns_client.hpp"

#include <arpa/inet.h>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "core/dns.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

struct ResolvConf {
  std::string nameserver, domain;
};

ResolvConf read_resolv_conf() {
  ResolvConf rc;
  std::string text = read_small_file("/etc/resolv.conf");
  for (std::string_view line : split(text, '\n')) {
    auto words = split(trim(line), ' ');
    if (words.size() < 2) continue;
    if (words[0] == "nameserver" && rc.nameserver.empty()) rc.nameserver = std::string(words[1]);
    if ((words[0] == "domain" || words[0] == "search") && rc.domain.empty()) rc.domain = std::string(words[1]);
  }
  return rc;
}

// One UDP exchange; the answer or an error.
Result<std::string> ask(const net::Endpoint& server, const std::string& query) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port);
  if (inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr) != 1)
    return invalid("DNS server must be an IPv4 address: " + server.host);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_error(std::string("socket: ") + std::strerror(errno));
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string answer(4096, '\0');
  ssize_t n = -1;
  if (sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) ==
      static_cast<ssize_t>(query.size()))
    n = recv(fd, answer.data(), answer.size(), 0);
  close(fd);
  if (n <= 0) return unavailable("no answer from DNS server " + server.str());
  answer.resize(static_cast<size_t>(n));
  return answer;
}

}  // namespace

Result<net::Endpoint> controller_from_srv() {
  ResolvConf rc = read_resolv_conf();
  const char* domain_env = std::getenv("HQ_SRV_DOMAIN");
  std::string domain = domain_env && *domain_env ? domain_env : rc.domain;
  if (domain.empty()) return not_found("no DNS domain for an SRV lookup (set HQ_SRV_DOMAIN)");
  const char* server_env = std::getenv("HQ_DNS_SERVER");
  auto server = net::parse_endpoint(server_env && *server_env ? server_env : rc.nameserver, 53);
  if (!server) return server.status().with_context("DNS server");
  uint16_t id = 0;
  if (getrandom(&id, sizeof id, 0) != sizeof id) id = static_cast<uint16_t>(getpid());
  std::string name = "_hq._tcp." + domain;
  auto query = build_srv_query(id, name);
  if (!query) return query.status();
  auto answer = ask(*server, *query);
  if (!answer) return answer.status();
  auto records = parse_srv_response(*answer, id);
  if (!records) return records.status().with_context(name);
  if (records->empty()) return not_found("no SRV record " + name);
  const SrvRecord& best = records->front();
  return net::Endpoint{best.target, best.port};
}

}  // namespace hq::cmd
