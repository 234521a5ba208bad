// The one fit rule (core/node_fit.hpp) and its three users: the scheduler, admission
// and explain. Properties over random jobs and nodes (GPUs of two types, restricted cores,
// memory, features, two partitions): admission admits a job exactly when the scheduler
// starts it on the same cluster idle, and explain's per-node verdict is the fit rule's.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>

#include "builders.hpp"
#include "core/admission.hpp"
#include "core/constraint.hpp"
#include "core/explain.hpp"
#include "core/job_shape.hpp"
#include "core/node_fit.hpp"
#include "core/placement.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::add_partition;
using hq::test::cluster;
using hq::test::JobBuilder;

namespace {

UnitNeed per_unit(int32_t cpus, int64_t mem = 0, int32_t gpus = 0, int32_t max_units = 64) {
  return UnitNeed{.cpus = cpus, .mem = mem, .max_units = max_units, .gpus = gpus, .cpus_magic = division_magic(cpus)};
}

int pick(std::mt19937& rng, int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }

// One to five nodes of mixed sizes in "batch"; some of them also in "b".
ClusterState random_cluster(std::mt19937& rng) {
  int32_t count = 1 + pick(rng, 5);
  auto s = cluster("n[1-" + std::to_string(count) + "]", 8);
  std::string in_b;
  for (auto& [name, n] : s.nodes) {
    n.cpus = std::array{4, 8, 16}[pick(rng, 3)];
    n.mem_mib = std::array{2000, 8000, 32000}[pick(rng, 3)];
    if (pick(rng, 2)) {
      std::string type = pick(rng, 2) ? "a100" : "h100";
      for (int g = 1 + pick(rng, 4); g > 0; --g) n.gpus.push_back({type, ""});
      if (pick(rng, 3) == 0) n.gpus.back().type = "h100";  // sometimes mixed
      n.restricted_cpus_per_gpu = pick(rng, 3);
    }
    if (pick(rng, 2)) n.features.push_back("fast");
    if (pick(rng, 2)) n.features.push_back("ib");
    if (pick(rng, 2)) in_b += (in_b.empty() ? "" : ",") + name;
  }
  if (!in_b.empty()) add_partition(s, "b", in_b);
  return s;
}

// A job of one of Slurm's shapes: -N with -c, -n spread, or -N with -n; memory per node,
// per CPU or per GPU; GPUs in all, per node or per task, typed or not; a constraint;
// sometimes --exclusive; one partition or two.
Job random_job(std::mt19937& rng) {
  JobBuilder b(1);
  switch (pick(rng, 3)) {
    case 0: b.nodes(1 + pick(rng, 3)).cpus(1 + pick(rng, 8)); break;
    case 1: b.tasks(1 + pick(rng, 24)).cpus(1 + pick(rng, 4)); break;
    default: b.nodes(1 + pick(rng, 2)).tasks(1 + pick(rng, 8)); break;
  }
  b.constraint(std::array{"", "", "fast", "fast|ib", "fast&ib", "ib*1", "[fast|ib]"}[pick(rng, 7)]);
  if (pick(rng, 6) == 0) b.exclusive();
  const std::vector<std::vector<std::string>> partitions{{"batch"}, {"b"}, {"b", "batch"}};
  b.partitions(partitions[static_cast<size_t>(pick(rng, 3))]);
  Job j = b.build();
  switch (pick(rng, 4)) {
    case 1: j.spec.gpus = 1 + pick(rng, 4); break;
    case 2: j.spec.gpus_per_node = 1 + pick(rng, 4); break;
    case 3: j.spec.gpus_per_task = 1 + pick(rng, 2); break;
    default: break;
  }
  if (wants_gpus(j.spec)) {
    j.spec.gpu_type = std::array{"", "a100", "h100"}[pick(rng, 3)];
    if (pick(rng, 4) == 0) j.spec.cpus_per_gpu = 1 + pick(rng, 4);
  }
  switch (pick(rng, 4)) {
    case 1: j.spec.mem_per_node_mib = 500 * (1 + pick(rng, 40)); break;
    case 2: j.spec.mem_per_cpu_mib = 250 * (1 + pick(rng, 8)); break;
    case 3: if (wants_gpus(j.spec)) j.spec.mem_per_gpu_mib = 1000 * (1 + pick(rng, 8)); break;
    default: break;
  }
  return j;
}

// -w or -x over the cluster's nodes, sometimes; -w raises -N as the controller's admit() does.
void random_node_choice(std::mt19937& rng, const ClusterState& s, Job& j) {
  int choice = pick(rng, 6);
  if (choice > 1) return;
  std::string names;
  for (const auto& [name, n] : s.nodes)
    if (pick(rng, 2)) names += (names.empty() ? "" : ",") + name;
  if (names.empty()) return;
  if (choice == 1) {
    j.spec.exclude = names;
    return;
  }
  j.spec.nodelist = names;
  int32_t listed = static_cast<int32_t>(std::count(names.begin(), names.end(), ',') + 1);
  if (!j.spec.ntasks_set || j.spec.nodes_set) j.spec.nodes_min = std::max(j.spec.nodes_min, listed);
}

bool starts_on_idle_cluster(ClusterState s, const Job& job) {
  apply(s, JobSubmitted{job});
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  return std::any_of(p.starts.begin(), p.starts.end(), [&](const StartDecision& d) { return d.job == job.id; });
}

std::string describe(const ClusterState& s, const Job& j) {
  std::string out = "job: N=" + std::to_string(j.spec.nodes_min) + " n=" + std::to_string(j.spec.ntasks) +
                    (j.spec.ntasks_set ? "(set)" : "") + " c=" + std::to_string(j.spec.cpus_per_task) +
                    " mem=" + std::to_string(j.spec.mem_per_node_mib) + "/cpu " + std::to_string(j.spec.mem_per_cpu_mib) +
                    "/gpu " + std::to_string(j.spec.mem_per_gpu_mib) + " gpus=" + std::to_string(j.spec.gpus) + "/node " +
                    std::to_string(j.spec.gpus_per_node) + "/task " + std::to_string(j.spec.gpus_per_task) + " type '" +
                    j.spec.gpu_type + "' cpus/gpu " + std::to_string(j.spec.cpus_per_gpu) + " C '" + j.spec.constraint +
                    "' excl " + std::to_string(j.spec.exclusive) + " parts " + std::to_string(j.partitions.size()) +
                    " -w '" + j.spec.nodelist + "' -x '" + j.spec.exclude + "'\n";
  for (const auto& [name, n] : s.nodes) {
    out += name + ": " + std::to_string(n.cpus) + " CPUs " + std::to_string(n.mem_mib) + " MiB gres '" + node_gres(n) +
           "' restricted " + std::to_string(n.restricted_cpus_per_gpu) + " features";
    for (const auto& f : n.features) out += " " + f;
    out += " parts";
    for (const auto& p : n.partitions) out += " " + p;
    out += "\n";
  }
  return out;
}

// Explain's count of nodes that could take the job now, from its "partition P: K of M" line.
int32_t explain_fit_count(const std::vector<std::string>& lines, const std::string& partition) {
  std::string head = "partition " + partition + ": ";
  for (const auto& l : lines)
    if (l.rfind(head, 0) == 0 && l.find(" nodes could take ") != std::string::npos) return std::stoi(l.substr(head.size()));
  return -1;
}

}  // namespace

TEST_CASE("fit rule: units per node from CPUs, memory and GPUs - per unit and per node") {
  NodeSize size{.cpus = 16, .gpus = 4, .mem = 8000};
  CHECK(units_on_node(size, all_free(size), per_unit(4)) == 4);
  CHECK(units_on_node(size, all_free(size), per_unit(4, 3000)) == 2);  // memory binds
  CHECK(units_on_node(size, all_free(size), per_unit(1, 0, 3)) == 1);  // GPUs bind
  UnitNeed node_part = per_unit(2, 1000);
  node_part.node_mem = 7000;
  CHECK(units_on_node(size, all_free(size), node_part) == 1);
  CHECK(units_on_node(size, NodeFree{.cpus = 3, .gpus = 4, .mem = 8000}, per_unit(4)) == 0);
  CHECK(fit_refusal(size, NodeFree{.cpus = 3, .gpus = 4, .mem = 8000}, per_unit(4)) == FitRefusal::kCpus);
  CHECK(fit_refusal(size, all_free(size), per_unit(4, 9000)) == FitRefusal::kMemory);
  CHECK(fit_refusal(size, all_free(size), per_unit(4, 0, 5)) == FitRefusal::kGpus);
}

TEST_CASE("fit rule: restricted cores are kept from CPU-only jobs while GPUs idle, not from GPU or whole-node jobs") {
  NodeSize size{.cpus = 16, .gpus = 4, .restricted = 2, .mem = 8000};
  CHECK(units_on_node(size, all_free(size), per_unit(1)) == 8);
  CHECK(fit_refusal(size, all_free(size), per_unit(9)) == FitRefusal::kRestrictedCpus);
  CHECK(units_on_node(size, NodeFree{.cpus = 14, .gpus = 1, .mem = 8000}, per_unit(1)) == 12);
  CHECK(units_on_node(size, all_free(size), per_unit(1, 0, 1)) == 4);
  UnitNeed whole = per_unit(16, 0, 0, 1);
  whole.whole_node = true;
  CHECK(units_on_node(size, all_free(size), whole) == 1);
  CHECK(needed_text(FitRefusal::kRestrictedCpus, per_unit(9), "") ==
        "9 CPUs besides those kept for GPU jobs (restricted_cores_per_gpu)");
  CHECK(free_text(FitRefusal::kRestrictedCpus, size, all_free(size)) == "has 16 CPUs, 8 kept for 4 idle GPU(s)");
}

TEST_CASE("fit rule: a whole-node job needs the node idle, and a node large enough") {
  NodeSize size{.cpus = 8, .gpus = 2, .mem = 4000};
  UnitNeed whole = per_unit(4, 1000, 0, 1);
  whole.whole_node = true;
  CHECK(units_on_node(size, all_free(size), whole) == 1);
  CHECK(fit_refusal(size, NodeFree{.cpus = 7, .gpus = 2, .mem = 4000}, whole) == FitRefusal::kNotIdle);
  UnitNeed wide = per_unit(16, 0, 0, 1);  // --exclusive -c 16 on 8 CPUs
  wide.whole_node = true;
  CHECK(fit_refusal(size, all_free(size), wide) == FitRefusal::kCpus);
  whole.gpus = 4;
  CHECK(fit_refusal(size, all_free(size), whole) == FitRefusal::kGpus);
  UnitNeed tasks = per_unit(2, 1500, 0, 8);  // tasks spread over whole nodes: what the node holds
  tasks.whole_node = true;
  CHECK(units_on_node(size, all_free(size), tasks) == 2);
}

TEST_CASE("fit rule: the refusal is kNone exactly when a unit fits (random sizes, free resources and needs)") {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    NodeSize size{.cpus = 1 + pick(rng, 64), .gpus = pick(rng, 9), .restricted = pick(rng, 4),
                  .mem = 1000 * (1 + pick(rng, 64))};
    NodeFree free{.cpus = pick(rng, size.cpus + 1), .gpus = pick(rng, size.gpus + 1),
                  .mem = 1000 * pick(rng, static_cast<int>(size.mem / 1000) + 1)};
    UnitNeed need = per_unit(1 + pick(rng, 16), 500 * pick(rng, 8), pick(rng, 3), 1 + pick(rng, 16));
    need.node_gpus = pick(rng, 4) == 0 ? pick(rng, 3) : 0;
    need.node_mem = pick(rng, 4) == 0 ? 1000 * pick(rng, 8) : 0;
    need.whole_node = pick(rng, 5) == 0;
    int32_t units = units_on_node(size, free, need);
    FitRefusal why = fit_refusal(size, free, need);
    CAPTURE(i);
    CHECK((why == FitRefusal::kNone) == (units > 0));
    CHECK(units <= need.max_units);
    if (need.whole_node && units > 0) CHECK(units_on_node(size, all_free(size), need) == units);
  }
}

TEST_CASE("admission admits a job exactly when the scheduler starts it on the idle cluster (random jobs and nodes)") {
  std::mt19937 rng(11);
  int admitted = 0, refused = 0;
  for (int i = 0; i < 10000; ++i) {
    ClusterState s = random_cluster(rng);
    Job job = random_job(rng);
    random_node_choice(rng, s, job);
    Status verdict = check_ever_runnable(s, job);
    bool started = starts_on_idle_cluster(s, job);
    CAPTURE(i);
    CAPTURE(verdict.message());
    INFO(describe(s, job));
    CHECK(verdict.is_ok() == started);
    ++(verdict.is_ok() ? admitted : refused);
  }
  CHECK(admitted > 1000);  // both outcomes are well covered
  CHECK(refused > 1000);
}

TEST_CASE("explain's per-node verdict on an idle node is the fit rule's, and agrees with the scheduler") {
  std::mt19937 rng(13);
  for (int i = 0; i < 2000; ++i) {
    ClusterState s = random_cluster(rng);
    Job job = random_job(rng);
    job.partitions = {"batch"};
    job.partition = "batch";
    const PartitionConfig& batch = *find_partition(s.partitions, "batch");
    JobShape sh = job_shape(job.spec, batch, 1);
    auto constraint = parse_constraint(job.spec.constraint);
    REQUIRE(constraint.is_ok());
    int32_t fit = 0;
    for (const auto& [name, n] : s.nodes) {
      bool features = constraint->empty() || std::any_of(constraint->alternatives.begin(), constraint->alternatives.end(),
                                                         [&](const ConstraintAlternative& a) { return node_matches(a, n.features); });
      NodeSize size = node_size(n, sh.need, job.spec.gpu_type);
      fit += features && units_on_node(size, all_free(size), sh.need) > 0;
    }
    auto lines = explain_job(s, job, 0);
    CAPTURE(i);
    INFO(describe(s, job));
    CHECK(explain_fit_count(lines, "batch") == fit);
    bool one_unit = sh.units == 1 && (constraint->empty() || constraint->alternatives.front().counts.empty());
    if (one_unit) CHECK((fit > 0) == starts_on_idle_cluster(s, job));
  }
}

TEST_CASE("fit rule: --mem=0 needs none of the node's memory in use, whatever else is free") {
  NodeSize size{.cpus = 8, .gpus = 0, .mem = 4000};
  UnitNeed all = per_unit(2);
  all.all_mem = true;
  CHECK(units_on_node(size, all_free(size), all) == 4);
  NodeFree some_used{.cpus = 6, .gpus = 0, .mem = 3999};
  CHECK(units_on_node(size, some_used, all) == 0);
  CHECK(fit_refusal(size, some_used, all) == FitRefusal::kMemory);
  CHECK(needed_text(FitRefusal::kMemory, all, "") == "all of its memory unused (--mem=0)");
  CHECK(units_on_node(size, some_used, per_unit(2)) == 3);  // without it, the same node takes the job
}

TEST_CASE("fit rule: --hint=nomultithread takes a whole core per CPU asked for on a node with threads") {
  NodeSize smt{.cpus = 8, .gpus = 0, .mem = 4000, .threads = 2};
  UnitNeed cores = per_unit(2);
  cores.whole_cores = true;
  CHECK(unit_cpus(smt, cores) == 4);
  CHECK(units_on_node(smt, all_free(smt), cores) == 2);     // 8 CPUs: two units of two cores
  CHECK(units_on_node(smt, all_free(smt), per_unit(2)) == 4);  // without the hint: four units
  CHECK(fit_refusal(smt, NodeFree{.cpus = 3, .gpus = 0, .mem = 4000}, cores) == FitRefusal::kCpus);
  CHECK(needed_text(FitRefusal::kCpus, cores, "") == "2 whole cores (--hint=nomultithread)");
  NodeSize plain{.cpus = 8, .gpus = 0, .mem = 4000};         // one thread per core: the hint changes nothing
  CHECK(units_on_node(plain, all_free(plain), cores) == 4);
}
