// squeue --yaml and sinfo --yaml print Slurm 22.05's YAML (libyaml's emitter, every node
// tagged). The expected lines are what Slurm 22.05 printed on the slurm-bench for the
// same values (job names submitted with `sbatch -J`), so the quoting, escaping and
// folding rules are checked against the real thing.
#include <doctest/doctest.h>

#include <google/protobuf/struct.pb.h>

#include "cmd/client/slurm_json.hpp"
#include "cmd/client/slurm_yaml.hpp"

using namespace hq;
using google::protobuf::Struct;

namespace {

// The line(s) a job whose name is `name` gets for its "name" key, inside the jobs list.
std::string name_lines(const std::string& name) {
  Struct root;
  auto& job = *(*root.mutable_fields())["jobs"].mutable_list_value()->add_values()->mutable_struct_value();
  (*job.mutable_fields())["name"].set_string_value(name);
  std::string doc = cmd::slurm_yaml(root);
  std::string head = "!!str jobs: !!seq\n- !!map\n";
  size_t at = doc.find(head);
  REQUIRE(at != std::string::npos);
  std::string body = doc.substr(at + head.size());
  REQUIRE(body.size() > 4);
  return body.substr(0, body.size() - 4);  // without "...\n"
}

}  // namespace

TEST_CASE("slurm yaml: scalars quoted, escaped and folded as Slurm 22.05 prints them") {
  const std::pair<std::string, std::string> cases[] = {
      {"a: b", "  !!str name: !!str 'a: b'\n"},
      {"x y", "  !!str name: !!str x y\n"},
      {"'q'", "  !!str name: !!str '''q'''\n"},
      {"-dash", "  !!str name: !!str -dash\n"},
      {"#hash", "  !!str name: !!str '#hash'\n"},
      {"yes", "  !!str name: !!str yes\n"},
      {"1234", "  !!str name: !!str 1234\n"},
      {"\xc3\xa9 \xc3\xbc", "  !!str name: !!str \"\\xE9 \\xFC\"\n"},
      {"a\"b", "  !!str name: !!str a\"b\n"},
      {"trail ", "  !!str name: !!str 'trail '\n"},
      {"x,y", "  !!str name: !!str x,y\n"},
      {"[br]", "  !!str name: !!str '[br]'\n"},
      {"{c}", "  !!str name: !!str '{c}'\n"},
      {"*star", "  !!str name: !!str '*star'\n"},
      {"&amp", "  !!str name: !!str '&amp'\n"},
      {"!bang", "  !!str name: !!str '!bang'\n"},
      {"%pct", "  !!str name: !!str '%pct'\n"},
      {"@at", "  !!str name: !!str '@at'\n"},
      {"`bt", "  !!str name: !!str '`bt'\n"},
      {"|pipe", "  !!str name: !!str '|pipe'\n"},
      {">gt", "  !!str name: !!str '>gt'\n"},
      {"?q", "  !!str name: !!str ?q\n"},
      {"null", "  !!str name: !!str null\n"},
      {"~", "  !!str name: !!str ~\n"},
      {"1.5", "  !!str name: !!str 1.5\n"},
      {"0x1F", "  !!str name: !!str 0x1F\n"},
      {"a#b", "  !!str name: !!str a#b\n"},
      {"a :b", "  !!str name: !!str a :b\n"},
      {"tab\there", "  !!str name: !!str \"tab\\there\"\n"},
      {"\xe6\x97\xa5\xe6\x9c\xac \xc3\xbc", "  !!str name: !!str \"\\u65E5\\u672C \\xFC\"\n"},
      {"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
       "upsilon phi chi psi omega",
       "  !!str name: !!str alpha beta gamma delta epsilon zeta eta theta iota kappa lambda\n"
       "    mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega\n"},
      {"q: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
       "upsilon phi chi psi omega",
       "  !!str name: !!str 'q: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda\n"
       "    mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega'\n"},
      {"tab\t alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
       "tau upsilon phi chi psi omega end",
       "  !!str name: !!str \"tab\\t alpha beta gamma delta epsilon zeta eta theta iota kappa\n"
       "    lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega end\"\n"},
      {"two  spaces  here and more words to pass the eighty column mark  x  y  z  w  v  u  t",
       "  !!str name: !!str two  spaces  here and more words to pass the eighty column mark  x  y  z  w  v  u  t\n"},
  };
  for (const auto& [name, want] : cases) {
    INFO(name);
    CHECK(name_lines(name) == want);
  }
}

TEST_CASE("slurm yaml: the document - nested maps, empty and indentless lists, lists of maps, ints, floats, bools, nulls") {
  Struct root;
  auto& f = *root.mutable_fields();
  auto& version = *f["meta"].mutable_struct_value()->mutable_fields();
  (*version["Slurm"].mutable_struct_value()->mutable_fields())["major"].set_number_value(22);
  (*version["Slurm"].mutable_struct_value()->mutable_fields())["release"].set_string_value("22.05.8");
  f["errors"].mutable_list_value();
  auto& node = *f["nodes"].mutable_list_value()->add_values()->mutable_struct_value()->mutable_fields();
  node["state_flags"].mutable_list_value();
  node["partitions"].mutable_list_value()->add_values()->set_string_value("bench");
  node["tres_weighted"].set_number_value(0);
  node["boot_time"].set_number_value(1795835829);
  node["owner"].set_null_value({});
  node["dynamic"].set_bool_value(true);
  node["hq"].mutable_struct_value();
  node["comment"].set_string_value("");
  (*f["nested"].mutable_list_value()->add_values()->mutable_list_value()).add_values()->set_number_value(-3);
  CHECK(cmd::slurm_yaml(root, {"tres_weighted"}) ==
        "%YAML 1.1\n"
        "--- !!map\n"
        "!!str errors: !!seq []\n"
        "!!str meta: !!map\n"
        "  !!str Slurm: !!map\n"
        "    !!str major: !!int 22\n"
        "    !!str release: !!str 22.05.8\n"
        "!!str nested: !!seq\n"
        "- !!seq\n"
        "  - !!int -3\n"
        "!!str nodes: !!seq\n"
        "- !!map\n"
        "  !!str boot_time: !!int 1795835829\n"
        "  !!str comment: !!str\n"
        "  !!str dynamic: !!bool true\n"
        "  !!str hq: !!map {}\n"
        "  !!str owner: !!null null\n"
        "  !!str partitions: !!seq\n"
        "  - !!str bench\n"
        "  !!str state_flags: !!seq []\n"
        "  !!str tres_weighted: !!float 0.000000\n"
        "...\n");
}

TEST_CASE("squeue --yaml: the same records as --json, in Slurm's YAML") {
  pb::QueueReply q;
  q.set_now(1000);
  pb::Job* j = q.add_jobs();
  j->set_job_id(12);
  j->set_state("PENDING");
  j->set_partition("debug");
  j->mutable_spec()->set_name("a: b");
  j->mutable_spec()->set_user("alice");
  std::string yaml = cmd::squeue_slurm_yaml(q, "c1");
  CHECK(yaml.rfind("%YAML 1.1\n--- !!map\n", 0) == 0);
  CHECK(yaml.find("\n!!str jobs: !!seq\n- !!map\n") != std::string::npos);
  CHECK(yaml.find("\n  !!str job_id: !!int 12\n") != std::string::npos);
  CHECK(yaml.find("\n  !!str name: !!str 'a: b'\n") != std::string::npos);
  CHECK(yaml.find("\n  !!str cluster: !!str c1\n") != std::string::npos);
  CHECK(yaml.find("\n    !!str release: !!str 22.05.8\n") != std::string::npos);  // meta, Slurm, version: as in Slurm's
  CHECK(yaml.substr(yaml.size() - 4) == "...\n");
}
