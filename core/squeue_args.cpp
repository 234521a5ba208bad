#include "core/squeue_args.hpp"

namespace hq {
namespace {

// -j/-s's long names (hq takes --job and --step too; Slurm's table has no --step).
bool is_jobs(std::string_view name) { return name == "jobs" || name == "job"; }
bool is_steps(std::string_view name) { return name == "steps" || name == "step"; }

void set_optional(SqueueWords& w, bool jobs, std::string_view value, bool has_value) {
  (jobs ? w.jobs_flag : w.steps_flag) = true;
  if (has_value) (jobs ? w.jobs : w.steps) = std::string(value);
}

// One "--name[=value]" word; returns whether the next word is its value.
bool long_word(SqueueWords& w, const std::string& a, const SqueueOptionLookup& lookup) {
  std::string_view body = std::string_view(a).substr(2);
  size_t eq = body.find('=');
  std::string_view name = lookup.long_name(a);
  if (is_jobs(name) || is_steps(name)) {
    set_optional(w, is_jobs(name), eq == std::string_view::npos ? "" : body.substr(eq + 1), eq != std::string_view::npos);
    return false;
  }
  w.rest.push_back(a);
  return eq == std::string_view::npos && lookup.takes_value(a);
}

// One "-xyz" bundle; returns whether the next word is the value of its last letter.
bool short_bundle(SqueueWords& w, const std::string& a, const SqueueOptionLookup& lookup) {
  for (size_t k = 1; k < a.size(); ++k) {
    char c = a[k];
    std::string rest = a.substr(k + 1);
    if (c == 'j' || c == 's') {  // an optional value: the rest of the word, if any
      set_optional(w, c == 'j', rest, !rest.empty());
      return false;
    }
    std::string word = std::string("-") + c;
    if (lookup.takes_value(word)) {
      w.rest.push_back(word + rest);
      return rest.empty();
    }
    w.rest.push_back(word);
  }
  return false;
}

}  // namespace

Result<SqueueWords> squeue_words(const std::vector<std::string>& args, const SqueueOptionLookup& lookup) {
  SqueueWords w;
  std::vector<std::string> loose;  // words that are no option's value
  bool value_next = false, options_end = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (value_next) {
      w.rest.push_back(a);
      value_next = false;
    } else if (options_end || a.size() < 2 || a[0] != '-') {
      loose.push_back(a);
    } else if (a == "--") {
      options_end = true;
    } else if (a[1] == '-') {
      value_next = long_word(w, a, lookup);
    } else {
      value_next = short_bundle(w, a, lookup);
    }
  }
  size_t used = 0;
  if (!loose.empty() && w.jobs_flag) w.jobs = loose[used++];
  else if (!loose.empty() && w.steps_flag) w.steps = loose[used++];
  if (used < loose.size()) return invalid("Unrecognized option: " + loose[used]);
  if (w.jobs_flag && w.steps_flag) {
    if (w.jobs.empty()) return invalid("Incompatible options --jobs and --steps");
    w.jobs_flag = false;  // "Printing job steps with job filter"
  }
  return w;
}

}  // namespace hq
