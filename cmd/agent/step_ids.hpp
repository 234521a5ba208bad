// Step ids of the jobs whose steps this agent manages: 0, 1, 2, ... per job run. The count
// after each id issued is also written to a file in the job's spool directory, so an agent
// that restarts during a job goes on from the next id instead of issuing J.0 again: the
// file is opened once per job and rewritten in place with a fixed-width count (one small
// pwrite, which a killed agent leaves whole; no fsync: it only has to outlive the agent
// process, not the host, whose reboot ends the job anyway). The
// file goes with the run's other files when the run ends (clear_run); an allocation held
// here (srun, salloc) keeps it beside the spools until it is released.
// Agent event-loop thread only.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace hq::cmd {

class StepIds {
 public:
  // The job's next step id. `file` ("" for none) keeps the count across agent restarts: read
  // the first time the job is seen here, written with every id.
  uint32_t issue(uint64_t job_id, const std::string& file);
  // The job's run ended here: a later run starts from 0 again.
  void forget(uint64_t job_id);
  StepIds() = default;
  StepIds(const StepIds&) = delete;
  StepIds& operator=(const StepIds&) = delete;
  ~StepIds();

 private:
  struct Count {
    uint32_t next = 0;
    int fd = -1;  // the job's file, open ("" or unwritable: -1)
  };
  std::map<uint64_t, Count> jobs_;
};

}  // namespace hq::cmd
