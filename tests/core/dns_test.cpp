// The DNS SRV query and answer parsing used for controller discovery.
#include <doctest/doctest.h>

#include "core/dns.hpp"

using namespace hq;

namespace {

// A response to `query`: the same question, then the given answer records (raw bytes).
std::string respond(std::string query, uint16_t answers, const std::string& records, uint16_t rcode = 0) {
  query[2] = static_cast<char>(0x81);
  query[3] = static_cast<char>(0x80 | rcode);
  query[6] = static_cast<char>(answers >> 8);
  query[7] = static_cast<char>(answers & 0xff);
  return query + records;
}

std::string srv(uint16_t prio, uint16_t weight, uint16_t port, const std::string& target_labels) {
  std::string rdata;
  for (uint16_t v : {prio, weight, port}) rdata += {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
  rdata += target_labels;
  std::string rec = "\xc0\x0c";                        // the question's name, compressed
  rec += std::string("\x00\x21\x00\x01", 4);           // SRV, IN
  rec += std::string("\x00\x00\x00\x3c", 4);           // TTL 60
  rec += {static_cast<char>(rdata.size() >> 8), static_cast<char>(rdata.size() & 0xff)};
  return rec + rdata;
}

}  // namespace

TEST_CASE("dns: an SRV query for _hq._tcp.<domain>, and its answers by priority then weight") {
  auto q = build_srv_query(0x1234, "_hq._tcp.example.org.");
  REQUIRE(q.is_ok());
  CHECK(q->substr(0, 4) == std::string("\x12\x34\x01\x00", 4));
  CHECK(q->substr(12) == std::string("\x03_hq\x04_tcp\x07" "example\x03org\x00\x00\x21\x00\x01", 26));
  std::string answers = srv(20, 5, 6900, std::string("\x04" "slow\x07" "example\x03org\x00", 18)) +
                        srv(10, 1, 6817, std::string("\x03" "ctl\xc0\x15", 6)) +  // "ctl" + pointer to example.org (offset 21)
                        srv(10, 9, 6818, std::string("\x04" "ctl2\x07" "example\x03org\x00", 18));
  auto recs = parse_srv_response(respond(*q, 3, answers), 0x1234);
  REQUIRE(recs.is_ok());
  REQUIRE(recs->size() == 3);
  CHECK((*recs)[0].target == "ctl2.example.org");  // priority 10, the higher weight
  CHECK((*recs)[0].port == 6818);
  CHECK((*recs)[1].target == "ctl.example.org");
  CHECK((*recs)[2].port == 6900);
}

TEST_CASE("dns: bad names, other ids, errors, truncation and pointer loops are errors") {
  CHECK(!build_srv_query(1, ""));
  CHECK(!build_srv_query(1, "a..b"));
  CHECK(!build_srv_query(1, std::string(64, 'x') + ".org"));
  auto q = *build_srv_query(9, "_hq._tcp.x");
  CHECK(parse_srv_response(respond(q, 0, ""), 8).status().message() == "DNS response to another query");
  CHECK(parse_srv_response(respond(q, 0, "", 3), 9).status().message().find("NXDOMAIN") != std::string::npos);
  CHECK(parse_srv_response(q, 9).status().message() == "not a DNS response");
  CHECK(parse_srv_response(respond(q, 0, ""), 9)->empty());
  std::string full = respond(q, 1, srv(1, 1, 80, std::string("\x01" "a\x00", 3)));
  for (size_t cut = 0; cut < full.size(); ++cut) CHECK(!parse_srv_response(full.substr(0, cut), 9).is_ok());
  CHECK(parse_srv_response(respond(q, 1, srv(1, 1, 80, "\xc0\x00")), 9).is_ok() == false);  // points at the header
  std::string loop = respond(q, 1, srv(1, 1, 80, std::string("\xc0", 1) + static_cast<char>(q.size() + 18)));
  CHECK(!parse_srv_response(loop, 9).is_ok());
}
