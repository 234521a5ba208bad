// sacct's values for one job record: the job's own line and its batch script's
// (JOBID.batch), as Slurm 22.05 fills each field (tests/fixtures/slurm/sacct). One thread.
#pragma once
#include <string>
#include <string_view>

#include "hq.pb.h"

namespace hq::cmd {

struct SacctRow {
  const pb::Job& job;
  bool batch = false;       // the JOBID.batch line
  const std::string& cluster;
  int64_t now = 0;          // for running jobs' elapsed time
};

// Whether a job has a batch line (its script started).
bool has_batch_line(const pb::Job& job);
// The field `name` (as core/sacct_format's table spells it) of `row`; "" for fields hq
// does not record.
std::string sacct_value(const SacctRow& row, std::string_view name);

}  // namespace hq::cmd
