// squeue -o as Slurm 22.05 reads it (goldens taken on the slurm-bench): widths cut and pad,
// "." to the right, "%%", and an unknown letter kept as text with squeue's error.
#include <doctest/doctest.h>

#include "core/squeue_format.hpp"

using namespace hq;

namespace {
std::string render(const ColumnFormat& f, const std::string& value) {
  std::string out;
  for (const auto& it : f.items) out += it.field ? fit_cell(value, it) : it.literal;
  return out;
}
std::string squeue_header_line(const ColumnFormat& f) {
  std::string out;
  for (const auto& it : f.items) out += it.field ? fit_cell(std::string(squeue_header(it.field)), it) : it.literal;
  return out;
}
}  // namespace

TEST_CASE("squeue format: widths cut and pad, '.' justifies right, %% is a percent sign") {
  ColumnFormat f = parse_squeue_format("%.5j|%5j|%.3i|%i%%|x");
  CHECK(f.errors.empty());
  CHECK(squeue_header_line(f) == " NAME|NAME |JOB|JOBID%|x");         // Slurm 22.05's header line
  CHECK(render(f, "second") == "secon|secon|sec|second%|x");  // values longer than the width are cut
  CHECK(render(f, "ab") == "   ab|ab   | ab|ab%|x");
  ColumnFormat d = parse_squeue_format(kSqueueDefaultFormat);
  CHECK(squeue_header_line(d) == "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)");
}

TEST_CASE("squeue format: an unknown letter stays as text and is named - a trailing % too") {
  ColumnFormat f = parse_squeue_format("%-5j|%i");
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0] == "Invalid job format specification: -");
  CHECK(squeue_header_line(f) == "%-5j|JOBID");
  ColumnFormat end = parse_squeue_format("%i %");
  CHECK(end.errors.size() == 1);
  CHECK(squeue_header_line(end) == "JOBID %");
}
