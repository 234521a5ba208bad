// Fuzz: #SBATCH directive scanning, the submit option table, and spec validation.
#include <string>

#include "core/job.hpp"
#include "core/submit_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string script(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  auto args = hq::parse_directives(script, &warnings);
  if (!args) return 0;
  hq::SubmitRequest req;
  if (!hq::apply_submit_options(*args, req, nullptr)) return 0;
  req.spec.script = script;
  (void)hq::validate_spec(req.spec);
  (void)hq::export_environment(req.export_spec, {"A=1", "SLURM_X=2"});
  return 0;
}
