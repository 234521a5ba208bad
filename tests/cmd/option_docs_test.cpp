// docs/slurm-compat.md's option tables for squeue, sinfo and scancel are the ones the code
// makes from the options each command parses with (cmd/client/option_docs.hpp): a changed
// option, or a changed word about it, fails here until the page says the same. Run with
// HQ_UPDATE_DOCS=1 to write the tables into the page (then read the diff).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cmd/client/option_docs.hpp"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The page's table between "<!-- options: NAME -->" and "<!-- /options -->"; with
// HQ_UPDATE_DOCS=1, replaced by `table` first.
std::string page_table(const std::string& name, const std::string& table) {
  std::string path = std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md";
  std::string doc = read_all(path);
  std::string open = "<!-- options: " + name + " -->\n", close = "<!-- /options -->";
  size_t at = doc.find(open);
  if (at == std::string::npos) return "(no \"" + open + "\" in docs/slurm-compat.md)";
  size_t from = at + open.size(), to = doc.find(close, from);
  if (to == std::string::npos) return "(no end marker)";
  const char* update = std::getenv("HQ_UPDATE_DOCS");
  if (update && std::string(update) == "1") {
    doc.replace(from, to - from, table);
    std::ofstream(path) << doc;
    return table;
  }
  return doc.substr(from, to - from);
}

}  // namespace

TEST_CASE("slurm-compat.md: squeue's, sinfo's and scancel's option tables are made from their parsers' options") {
  struct Command {
    const char* name;
    std::vector<hq::OptionDocRow> rows;
  };
  for (const Command& c : {Command{"squeue", hq::cmd::squeue_option_docs()}, Command{"sinfo", hq::cmd::sinfo_option_docs()},
                           Command{"scancel", hq::cmd::scancel_option_docs()}}) {
    std::string name = c.name;
    INFO(name);
    REQUIRE(c.rows.size() > 10);
    std::string table = hq::option_doc_table(c.rows);
    CHECK(page_table(name, table) == table);
  }
}

TEST_CASE("option tables: a help text's prefix says the status, and a | in it cannot break the row") {
  std::string t = hq::option_doc_table({{"`-a`", "taken: one cluster"}, {"`--x`", "refused: no"}, {"`-b`, `--bb`", "a|b"}});
  CHECK(t == "| Option | On hq | What it does |\n|---|---|---|\n"
             "| `-a` | accepted, no effect | one cluster |\n"
             "| `--x` | refused | no |\n"
             "| `-b`, `--bb` | works | a\\|b |\n");
  CHECK(hq::option_doc_names('j', {"jobs", "job"}) == "`-j`, `--jobs`, `--job`");
  CHECK(hq::option_doc_names(0, {"me"}) == "`--me`");
}
