// sacct --json/--yaml in Slurm 22.05's shape (openapi/dbv0.0.38: {"meta", "errors", "jobs"},
// each job with its "steps"), keys in Slurm's order (seen on the slurm-bench with slurmdbd),
// made from the same records and values as sacct's lines (sacct_rows). One thread.
#pragma once
#include <string>
#include <vector>

#include "hq.pb.h"

namespace hq::cmd {

// One record sacct shows: a job (or, with `array_tasks` such as "9-20", an array's tasks
// that never started), and its steps' records (the batch script's comes from the job).
struct SacctRecord {
  const pb::Job* job = nullptr;
  std::vector<const pb::StepRecord*> steps;
  std::string array_tasks;
};

// `with_steps`: false for -X (no "steps" entries); `now`: for running jobs' elapsed time.
std::string sacct_slurm_json(const std::vector<SacctRecord>& records, const std::string& cluster, int64_t now,
                             bool with_steps);
std::string sacct_slurm_yaml(const std::vector<SacctRecord>& records, const std::string& cluster, int64_t now,
                             bool with_steps);

}  // namespace hq::cmd
