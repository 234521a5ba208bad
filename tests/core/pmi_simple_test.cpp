// The PMI-1 simple wire server's logic (core/pmi_simple): parsing, the answers MPICH
// expects, puts held until a barrier that waits for every local task, bad input answered
// without harm.
#include <doctest/doctest.h>

#include "core/pmi_simple.hpp"

using namespace hq;

namespace {

PmiNode node(size_t local, int32_t size = 4) {
  return PmiNode(PmiStep{"12.3", size, local, {{"PMI_process_mapping", "(vector,(0,2,2))"}}});
}

// The one reply of an event, for task `task`.
std::string only_reply(const PmiEffects& fx, size_t task = 0) {
  REQUIRE(fx.replies.size() == 1);
  CHECK(fx.replies[0].first == task);
  return fx.replies[0].second;
}

}  // namespace

TEST_CASE("pmi simple: a line's words - value runs to the end of the line - bad words refused") {
  auto l = parse_pmi_line("cmd=put kvsname=12.3 key=k value=a b=c  d");
  REQUIRE(l);
  REQUIRE(l->words.size() == 4);
  CHECK(*l->get("cmd") == "put");
  CHECK(*l->get("value") == "a b=c  d");
  CHECK(l->get("nope") == nullptr);
  CHECK(parse_pmi_line("  cmd=barrier_in  ")->words.size() == 1);
  CHECK_FALSE(parse_pmi_line("cmd=put junk"));
  CHECK_FALSE(parse_pmi_line("=x"));
  CHECK(parse_pmi_line("")->words.empty());
}

TEST_CASE("pmi simple: the queries MPICH makes at init get Slurm's answers") {
  PmiNode n = node(2);
  CHECK(only_reply(n.line(0, "cmd=init pmi_version=1 pmi_subversion=1")) ==
        "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n");
  CHECK(only_reply(n.line(0, "cmd=init pmi_version=2 pmi_subversion=0")) ==
        "cmd=response_to_init rc=-1 pmi_version=1 pmi_subversion=1\n");
  CHECK(only_reply(n.line(0, "cmd=get_maxes")) == "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n");
  CHECK(only_reply(n.line(1, "cmd=get_appnum"), 1) == "cmd=appnum rc=0 appnum=-1\n");
  CHECK(only_reply(n.line(0, "cmd=get_universe_size")) == "cmd=universe_size rc=0 size=4\n");
  CHECK(only_reply(n.line(0, "cmd=get_my_kvsname")) == "cmd=my_kvsname rc=0 kvsname=12.3\n");
  CHECK(only_reply(n.line(0, "cmd=get kvsname=12.3 key=PMI_process_mapping")) ==
        "cmd=get_result rc=0 value=(vector,(0,2,2))\n");
}

TEST_CASE("pmi simple: puts are seen after a barrier that waits for every local task and every node") {
  PmiNode n = node(2);
  CHECK(only_reply(n.line(0, "cmd=put kvsname=12.3 key=card-0 value=tcp://a b")) == "cmd=put_result rc=0\n");
  CHECK(only_reply(n.line(1, "cmd=put kvsname=12.3 key=card-1 value=x"), 1) == "cmd=put_result rc=0\n");
  CHECK(only_reply(n.line(1, "cmd=get kvsname=12.3 key=card-0"), 1) == "cmd=get_result rc=-1 msg=key_not_found\n");
  auto first = n.line(0, "cmd=barrier_in");
  CHECK(first.replies.empty());
  CHECK_FALSE(first.exchange);
  auto second = n.line(1, "cmd=barrier_in");
  REQUIRE(second.exchange);
  CHECK(*second.exchange == "card-0=tcp://a b\ncard-1=x\n");
  // The other node's blob comes back with ours, in node order.
  auto out = n.exchanged(std::vector<std::string>{*second.exchange, "card-2=y\ncard-3=z\n"});
  REQUIRE(out.replies.size() == 2);
  CHECK(out.replies[0] == std::pair<size_t, std::string>{0, "cmd=barrier_out rc=0\n"});
  CHECK(out.replies[1] == std::pair<size_t, std::string>{1, "cmd=barrier_out rc=0\n"});
  CHECK(only_reply(n.line(0, "cmd=get kvsname=12.3 key=card-3")) == "cmd=get_result rc=0 value=z\n");
  CHECK(only_reply(n.line(1, "cmd=get kvsname=12.3 key=card-0"), 1) == "cmd=get_result rc=0 value=tcp://a b\n");
  // The next barrier sends only what was put since.
  REQUIRE(n.line(0, "cmd=barrier_in").replies.empty());
  auto again = n.line(1, "cmd=barrier_in");
  REQUIRE(again.exchange);
  CHECK(again.exchange->empty());
}

TEST_CASE("pmi simple: finalize and a task gone no longer hold the barrier - a failed exchange answers rc=-1") {
  PmiNode n = node(3);
  REQUIRE(n.line(0, "cmd=barrier_in").replies.empty());
  auto fin = n.line(1, "cmd=finalize");
  CHECK(only_reply(fin, 1) == "cmd=finalize_ack rc=0\n");
  CHECK(fin.close == std::vector<size_t>{1});
  CHECK(n.line(1, "cmd=get_maxes").replies.empty());  // finalized: nothing more
  auto gone = n.gone(2);
  REQUIRE(gone.exchange);
  auto out = n.exchanged(unavailable("lost the link to e2's agent"));
  CHECK(only_reply(out) == "cmd=barrier_out rc=-1 msg=exchange_failed\n");
}

TEST_CASE("pmi simple: abort - unknown commands - bad lines - spawn and name service refused") {
  PmiNode n = node(1);
  auto ab = n.line(0, "cmd=abort exitcode=7");
  CHECK(ab.replies.empty());
  REQUIRE(ab.abort);
  CHECK(*ab.abort == 7);
  CHECK(*n.line(0, "cmd=abort exit_code=3 error_msg=it broke").abort == 3);
  CHECK(*n.line(0, "cmd=abort").abort == 1);
  CHECK(only_reply(n.line(0, "cmd=frobnicate x=1")) == "cmd=frobnicate_result rc=-1 msg=unknown_command\n");
  CHECK(only_reply(n.line(0, "this is not pmi")) == "cmd=error rc=-1 msg=bad_line\n");
  CHECK(only_reply(n.line(0, "key=1")) == "cmd=error rc=-1 msg=bad_line\n");
  CHECK(only_reply(n.line(0, "cmd=publish_name service=s port=p")) ==
        "cmd=publish_result rc=-1 info=fail msg=not_supported\n");
  CHECK(n.line(0, "mcmd=spawn").replies.empty());
  CHECK(n.line(0, "nprocs=2").replies.empty());
  CHECK(only_reply(n.line(0, "endcmd")) == "cmd=spawn_result rc=-1 msg=not_supported\n");
  CHECK(only_reply(n.line(0, "cmd=get_appnum")) == "cmd=appnum rc=0 appnum=-1\n");
  CHECK(n.line(5, "cmd=get_appnum").replies.empty());  // no such task
}

TEST_CASE("pmi simple: keys and values are bounded - puts beyond the node's budget refused") {
  PmiNode n = node(1);
  std::string long_key(kPmiKeyMax + 1, 'k'), long_value(kPmiValueMax + 1, 'v');
  CHECK(only_reply(n.line(0, "cmd=put key=" + long_key + " value=1")) == "cmd=put_result rc=-1 msg=invalid_key_or_value\n");
  CHECK(only_reply(n.line(0, "cmd=put key=k value=" + long_value)) == "cmd=put_result rc=-1 msg=invalid_key_or_value\n");
  CHECK(only_reply(n.line(0, "cmd=put key=a=b value=1")) == "cmd=put_result rc=-1 msg=invalid_key_or_value\n");
  CHECK(only_reply(n.line(0, "cmd=put key=k")) == "cmd=put_result rc=-1 msg=invalid_key_or_value\n");
  std::string value(kPmiValueMax, 'v');
  std::string last;
  for (int i = 0; i < 5000 && last != "cmd=put_result rc=-1 msg=too_much_data\n"; ++i)
    last = only_reply(n.line(0, "cmd=put key=k" + std::to_string(i) + " value=" + value));
  CHECK(last == "cmd=put_result rc=-1 msg=too_much_data\n");
  CHECK(only_reply(n.line(0, "cmd=put key=k0 value=replaced")) == "cmd=put_result rc=0\n");  // a rewrite fits
}

TEST_CASE("pmi simple: blobs of puts round-trip - malformed blobs are refused") {
  std::map<std::string, std::string> puts{{"a", "1 2"}, {"b", ""}};
  std::map<std::string, std::string> back;
  REQUIRE(decode_pmi_puts(encode_pmi_puts(puts), back));
  CHECK(back == puts);
  CHECK_FALSE(decode_pmi_puts("a=1", back));
  CHECK_FALSE(decode_pmi_puts("noequals\n", back));
  CHECK_FALSE(decode_pmi_puts("=1\n", back));
  PmiNode n = node(1);
  REQUIRE(n.line(0, "cmd=barrier_in").exchange);
  CHECK(only_reply(n.exchanged(std::vector<std::string>{"garbage"})) == "cmd=barrier_out rc=-1 msg=exchange_failed\n");
}
