// scontrol's table (core/scontrol_commands) against Slurm 22.05's `scontrol --help`
// (captured from the real command: tests/fixtures/slurm/scontrol-help-22.05.txt): every
// command, `show` entity and option it names is in the table, which says what hq does with
// it, and docs/slurm-compat.md has a row for each with the same words.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/scontrol_commands.hpp"
#include "tests/fixture_file.hpp"

using namespace hq;

namespace {

std::string help_text() { return hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/scontrol-help-22.05.txt"); }

// The section of the help between `from` and `to`.
std::string section(const std::string& text, const std::string& from, const std::string& to) {
  size_t a = text.find(from), b = text.find(to, a);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  return text.substr(a, b - a);
}

std::set<std::string> help_commands() {
  std::set<std::string> out;
  std::istringstream in(section(help_text(), "Valid <COMMAND> values", "<ENTITY> may be"));
  std::regex cmd(R"(^     ([a-z_]+)\b)");  // a command starts its line, indented five
  for (std::string line; std::getline(in, line);)
    if (std::smatch m; std::regex_search(line, m, cmd)) out.insert(m[1]);
  return out;
}

std::set<std::string> help_entities() {
  std::set<std::string> out;
  std::string text = section(help_text(), "<ENTITY> may be", "<ID> may be");
  std::regex quoted("\"([A-Za-z_]+)\"");
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

std::set<std::string> scontrol_help_options() {
  std::set<std::string> out;
  std::string text = section(help_text(), "Valid <OPTION> values", "<keyword> may be omitted");
  std::regex opt(R"((--?[A-Za-z][a-z]*))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    std::string head = line.substr(0, std::min<size_t>(line.size(), 20));  // the option column
    for (std::sregex_iterator it(head.begin(), head.end(), opt), end; it != end; ++it) out.insert((*it)[1]);
  }
  return out;
}

std::string support_word(ScontrolSupport s) {
  return s == ScontrolSupport::kWorks ? "works" : s == ScontrolSupport::kInert ? "no effect" : "refused";
}

}  // namespace

TEST_CASE("scontrol table: every command, entity and option of Slurm 22.05's help is there, with a why unless it works") {
  auto commands = help_commands();
  REQUIRE(commands.size() >= 40);  // the fixture was read
  for (const auto& c : commands) {
    INFO(c);
    const ScontrolEntry* e = find_scontrol_command(c);
    REQUIRE(e != nullptr);
    CHECK(e->name == c);
  }
  auto entities = help_entities();
  REQUIRE(entities.size() >= 19);
  for (const auto& name : entities) {
    INFO(name);
    const ScontrolEntry* e = find_scontrol_entity(name);
    REQUIRE(e != nullptr);
    CHECK(e->name == name);
  }
  auto options = scontrol_help_options();
  REQUIRE(options.size() >= 20);
  for (const auto& o : options) {
    INFO(o);
    CHECK(find_scontrol_option(o) != nullptr);
  }
  for (auto table : {scontrol_commands(), scontrol_show_entities(), scontrol_options()})
    for (const auto& e : table) {
      INFO(e.name);
      CHECK((e.support == ScontrolSupport::kWorks) == e.why.empty());
    }
}

TEST_CASE("scontrol table: words in any case, or a prefix of three letters or more that names one") {
  REQUIRE(find_scontrol_command("SHOW") != nullptr);
  CHECK(find_scontrol_command("SHOW")->name == "show");
  CHECK(find_scontrol_command("sho")->name == "show");
  CHECK(find_scontrol_command("Requeueh")->name == "requeuehold");
  CHECK(find_scontrol_command("requeue")->name == "requeue");  // whole words win over longer names
  CHECK(find_scontrol_command("sh") == nullptr);               // too short
  CHECK(find_scontrol_command("re") == nullptr);
  CHECK(find_scontrol_command("hol") == nullptr);  // hold or holdu
  CHECK(find_scontrol_command("rele")->name == "release");
  CHECK(find_scontrol_command("bogus") == nullptr);
  CHECK(find_scontrol_entity("JOB")->name == "job");
  CHECK(find_scontrol_entity("part")->name == "partition");
  CHECK(find_scontrol_entity("res")->name == "reservation");
  CHECK(find_scontrol_entity("host") == nullptr);  // hostlist, hostlistsorted, hostnames
  CHECK(find_scontrol_option("--oneliner")->name == "-o, --oneliner");
  CHECK(find_scontrol_option("-Mother")->name == "-M, --cluster");
  CHECK(find_scontrol_option("--cluster=x")->name == "-M, --cluster");
  CHECK(find_scontrol_option("--bogus") == nullptr);
}

TEST_CASE("scontrol table: docs/slurm-compat.md has a row for each entry, with its status and why") {
  std::string doc = hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md");
  REQUIRE_FALSE(doc.empty());
  for (auto table : {scontrol_commands(), scontrol_show_entities(), scontrol_options()})
    for (const auto& e : table) {
      std::string row = "| `" + std::string(e.name) + "` | " + support_word(e.support) + " | " + std::string(e.why) + " |";
      INFO(row);
      CHECK(doc.find(row) != std::string::npos);
    }
}
