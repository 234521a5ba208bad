// The persona option tables docs/slurm-compat.md shows, made from the options each command
// parses with (squeue's and sinfo's CLI11 apps, scancel's CliOption table); a test checks
// the page against them (tests/cmd/option_docs_test.cpp). One thread.
#pragma once
#include <vector>

#include "core/option_doc.hpp"

namespace hq::cmd {

std::vector<OptionDocRow> squeue_option_docs();
std::vector<OptionDocRow> sinfo_option_docs();
std::vector<OptionDocRow> scancel_option_docs();

}  // namespace hq::cmd
