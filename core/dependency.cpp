#include "core/dependency.hpp"

#include <algorithm>
#include <cstdint>

#include "core/units.hpp"

namespace hq {
namespace {

struct TypeName {
  std::string_view name;
  DepType type;
};
constexpr TypeName kTypes[] = {{"after", DepType::kAfter},           {"afterany", DepType::kAfterAny},
                               {"afterok", DepType::kAfterOk},       {"afternotok", DepType::kAfterNotOk},
                               {"aftercorr", DepType::kAfterCorr},   {"singleton", DepType::kSingleton}};

Result<DepTarget> parse_target(std::string_view t, DepType type) {
  DepTarget out;
  if (auto plus = t.find('+'); plus != std::string_view::npos) {
    if (type != DepType::kAfter) return invalid("only 'after' takes a +minutes delay");
    auto mins = parse_int(t.substr(plus + 1), 0, 525600);
    if (!mins) return invalid("bad delay '" + std::string(t.substr(plus + 1)) + "'");
    out.delay = *mins * 60;
    t = t.substr(0, plus);
  }
  if (auto us = t.find('_'); us != std::string_view::npos) {
    auto task = parse_int(t.substr(us + 1), 0, 4000000);
    if (!task) return invalid("bad array task in '" + std::string(t) + "'");
    out.task = static_cast<int32_t>(*task);
    t = t.substr(0, us);
  }
  auto id = parse_int(t, 1, INT64_MAX);
  if (!id) return invalid("bad job id '" + std::string(t) + "'");
  out.job = static_cast<uint64_t>(*id);
  return out;
}

DepResult target_result(DepType type, const Job& t, Time now, Duration delay) {
  bool ended = is_terminal(t.state);
  bool ok = ended && t.state == JobState::kCompleted && t.exit_code == 0 && t.exit_signal == 0;
  switch (type) {
    case DepType::kAfter:
      if (t.state == JobState::kPending) return DepResult::kWaiting;
      if (t.start_time == 0) return DepResult::kSatisfied;  // ended without starting (cancelled)
      return now >= t.start_time + delay ? DepResult::kSatisfied : DepResult::kWaiting;
    case DepType::kAfterAny: return ended ? DepResult::kSatisfied : DepResult::kWaiting;
    case DepType::kAfterOk:
    case DepType::kAfterCorr:
      if (!ended) return DepResult::kWaiting;
      return ok ? DepResult::kSatisfied : DepResult::kNever;
    case DepType::kAfterNotOk:
      if (!ended) return DepResult::kWaiting;
      return ok ? DepResult::kNever : DepResult::kSatisfied;
    case DepType::kSingleton: break;
  }
  return DepResult::kSatisfied;
}

// Folds one more result into "all of" (any_of = false) or "any of".
DepResult fold(DepResult acc, DepResult r, bool any_of) {
  if (any_of) {
    if (acc == DepResult::kSatisfied || r == DepResult::kSatisfied) return DepResult::kSatisfied;
    if (acc == DepResult::kWaiting || r == DepResult::kWaiting) return DepResult::kWaiting;
    return DepResult::kNever;
  }
  if (acc == DepResult::kNever || r == DepResult::kNever) return DepResult::kNever;
  if (acc == DepResult::kWaiting || r == DepResult::kWaiting) return DepResult::kWaiting;
  return DepResult::kSatisfied;
}

// A target id names one job, or every task of an array (tasks have consecutive ids
// from the array's id). A job no longer known has been purged after ending: satisfied.
DepResult term_target(const DepTerm& term, const DepTarget& target, const Job& self, const ClusterState& s, Time now) {
  const Job* head = find_job(s, JobId{target.job});
  if (!head) return DepResult::kSatisfied;
  if (head->array_job_id != target.job) return target_result(term.type, *head, now, target.delay);
  int32_t want = target.task;
  if (term.type == DepType::kAfterCorr && self.array_task_id >= 0) want = self.array_task_id;
  DepResult acc = DepResult::kSatisfied;
  for_each_array_task(s, target.job, [&](const Job& task) {
    if (want < 0 || task.array_task_id == want) acc = fold(acc, target_result(term.type, task, now, target.delay), false);
  });
  return acc;
}

DepResult singleton(const Job& self, const ClusterState& s) {
  for (const auto& [id, j] : s.jobs) {
    if (id != self.id && j.state == JobState::kRunning && j.spec.uid == self.spec.uid && j.spec.name == self.spec.name)
      return DepResult::kWaiting;
  }
  return DepResult::kSatisfied;
}

}  // namespace

Result<Dependency> parse_dependency(std::string_view text) {
  Dependency dep;
  if (text.empty()) return dep;
  bool has_comma = text.find(',') != std::string_view::npos, has_q = text.find('?') != std::string_view::npos;
  if (has_comma && has_q) return invalid("Invalid dependency specification: use either ',' or '?', not both");
  dep.any = has_q;
  for (std::string_view part : split(text, has_q ? '?' : ',')) {
    auto pieces = split(part, ':');
    std::string_view type = pieces.front();
    DepTerm term;
    auto found = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const TypeName& t) { return t.name == type; });
    if (found == std::end(kTypes)) {
      if (pieces.size() != 1) return invalid("Invalid dependency specification: unknown type '" + std::string(type) + "'");
      pieces.insert(pieces.begin(), "afterany");  // a bare id means afterany
      found = &kTypes[1];
    }
    term.type = found->type;
    if (term.type == DepType::kSingleton) {
      if (pieces.size() != 1) return invalid("Invalid dependency specification: singleton takes no job ids");
    } else if (pieces.size() < 2) {
      return invalid("Invalid dependency specification: '" + std::string(part) + "' names no job");
    }
    for (size_t i = 1; i < pieces.size(); ++i) {
      auto t = parse_target(pieces[i], term.type);
      if (!t) return t.status().with_context("Invalid dependency specification");
      term.targets.push_back(*t);
    }
    dep.terms.push_back(std::move(term));
    if (dep.terms.size() > 1000) return invalid("Invalid dependency specification: too many terms");
  }
  return dep;
}

DepResult evaluate_dependency(const Dependency& dep, const Job& self, const ClusterState& s, Time now) {
  DepResult acc = dep.any ? DepResult::kNever : DepResult::kSatisfied;
  for (const DepTerm& term : dep.terms) {
    DepResult r = DepResult::kSatisfied;
    if (term.type == DepType::kSingleton) r = singleton(self, s);
    for (const DepTarget& t : term.targets) r = fold(r, term_target(term, t, self, s, now), false);
    acc = fold(acc, r, dep.any);
  }
  return dep.terms.empty() ? DepResult::kSatisfied : acc;
}

std::vector<uint64_t> dependency_targets(const Dependency& dep) {
  std::vector<uint64_t> out;
  for (const auto& term : dep.terms)
    for (const auto& t : term.targets) out.push_back(t.job);
  return out;
}

}  // namespace hq
