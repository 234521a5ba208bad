// sacctmgr's words, shared by core/acctmgr_*.cpp: "key=value", "key+=value", "key-=value"
// and bare words; Slurm's keyword match (a case-insensitive prefix at least N long); the
// association conditions and settings (sacctmgr's set_assoc_cond / set_assoc_rec keys) and
// how sacctmgr prints settings (print_assoc_limits). Pure; thread-safe.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/acct_model.hpp"
#include "core/acctmgr.hpp"

namespace hq::acctmgr {

struct Word {
  std::string key, value;  // a bare word: key is the word, value empty, has_value false
  char op = 0;             // '+' or '-' for "key+=v" / "key-=v"
  bool has_value = false;
};
std::vector<Word> parse_words(const std::vector<std::string>& args, size_t from);

// `word` names `name`: a prefix of it (any case) of at least `min` characters.
bool key_is(std::string_view word, std::string_view name, size_t min);

// The output being built, and the exit code.
struct Io {
  std::string out, err;
  int rc = 0;
  void fail(const std::string& line) {
    err += line;
    rc = 1;
  }
};

struct AssocCond {
  std::vector<std::string> accounts, users, clusters, partitions, parents, qos;
  std::vector<std::string> formats;
  bool tree = false, only_defaults = false, with_subaccounts = false, wolimits = false, wop = false;
  bool any = false;  // some condition was given
};
// A value without its surrounding quotes.
std::string unquoted(std::string_view v);
// A setting's value, in sacctmgr's forms: a count ("-1" or any negative clears; a bad number is
// a value_warning), a TRES list, a wall time (minutes).
Result<int64_t> count_setting(const Word& w, std::string_view what);
Result<TresList> tres_setting(const Word& w);
Result<int64_t> wall_setting(const Word& w, std::string_view what);
// A parsed value into its setting: true (the key was known), or the parse's error.
template <typename T>
Result<bool> take(std::optional<T>& to, Result<T> v) {
  if (!v) return v.status();
  to = std::move(v).value();
  return true;
}

// One where-word of an association condition; false if it is not one.
bool set_assoc_cond(AssocCond& c, const Word& w);

// Settings of an association (add, modify ... set); nullopt: not given; -1: clear (NONE).
struct AssocSet {
  std::optional<int64_t> shares, grp_jobs, grp_submit, grp_wall, max_jobs, max_submit, max_wall, priority;
  std::optional<TresList> grp_tres, grp_tres_mins, grp_tres_run_mins, max_tres, max_tres_per_node, max_tres_mins;
  std::optional<std::vector<std::string>> qos;
  char qos_op = 0;
  std::optional<std::string> def_qos, parent;
  bool any() const;
};
// One setting; false if the key is not one; an error for a bad value (Slurm's words).
Result<bool> set_assoc_rec(AssocSet& s, const Word& w, const AcctModel& m);
// A given setting onto a value: a number replaces, a TRES list merges (-1 removes a TRES).
inline void put_setting(int64_t& to, const std::optional<int64_t>& v) {
  if (v) to = *v;
}
inline void put_setting(TresList& to, const std::optional<TresList>& v) {
  if (v) to = merge_tres(to, *v);
}
// One `set` word of a modify command as an association setting; false: the command stops.
struct Ctx;
bool take_assoc_setting(Ctx& cx, AssocSet& set, const Word& w);

// Applies settings to an association (parent aside).
void apply_assoc_set(AcctAssoc& a, const AssocSet& s, const AcctModel& m);
// sacctmgr's settings block ("  GrpJobs       = 10\n" ...).
std::string print_assoc_set(const AssocSet& s);

// Names of a comma list, lower-cased unless `keep_case`.
std::vector<std::string> name_list(std::string_view value, bool keep_case = false);
bool contains(const std::vector<std::string>& list, std::string_view v);
// "a,b,c" in the list's order.
std::string comma_list(const std::vector<std::string>& list);

// A bad number in a setting: Slurm prints "sacctmgr: error: Invalid value for ..." and goes on
// without that setting (exit code unchanged). Other errors stop the command.
inline Status value_warning(std::string m) { return Status(Code::kNotFound, std::move(m)); }
// Takes a setting's error into `io`: true when it stops the command.
inline bool stops(Io& io, const Status& s) {
  if (s.code() == Code::kNotFound) {
    io.err += s.message();
    return false;
  }
  io.fail(s.message());
  return true;
}

// " Nothing new added.\n" and the like go to stdout with exit 1.
inline void nothing(Io& io, const char* line) {
  io.out += line;
  io.rc = 1;
}

}  // namespace hq::acctmgr
