// sacct's values for one job record: the job's own line, its batch script's (JOBID.batch)
// and its steps' (JOBID.0, ...), as Slurm 22.05 fills each field (tests/fixtures/slurm/sacct,
// sacct-steps). One thread.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "hq.pb.h"

namespace hq::cmd {

struct SacctRow {
  const pb::Job& job;
  bool batch = false;       // the JOBID.batch line
  const std::string& cluster;
  int64_t now = 0;          // for running jobs' elapsed time
  const pb::StepRecord* step = nullptr;  // a step's line (JOBID.N)
  std::string derived_exit_code = "0:0";  // the job line's: the worst of its steps' (sacct_derived_exit)
  // The array tasks this job line stands for ("9-20": tasks that never started, which
  // Slurm keeps as one record of the array, JobID "37_[9-20]", JobIDRaw the array's id).
  std::string array_tasks;
};

// Slurm's DerivedExitCode of a job: the highest wait status among its steps (not the batch
// script's), "0:0" without steps.
std::string sacct_derived_exit(const std::vector<const pb::StepRecord*>& steps);

// Whether a job has a batch line (its script started).
bool has_batch_line(const pb::Job& job);
// The field `name` (as core/sacct_format's table spells it) of `row`; "" for fields hq
// does not record.
std::string sacct_value(const SacctRow& row, std::string_view name);

}  // namespace hq::cmd
