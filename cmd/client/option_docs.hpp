// The persona option tables docs/slurm-compat.md shows, made from the options each command
// parses with (their CliOption tables); a test checks the page against them
// (tests/cmd/option_docs_test.cpp). And how each table reads a long option's prefix, which
// tests/cmd/getopt_prefix_test.cpp compares with Slurm's clients. One thread.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/option_doc.hpp"

namespace hq::cmd {

std::vector<OptionDocRow> squeue_option_docs();
std::vector<OptionDocRow> sinfo_option_docs();
std::vector<OptionDocRow> scancel_option_docs();

// core/cli_options' getopt_prefix_answer() for each persona's table.
std::string squeue_prefix_answer(std::string_view prefix);
std::string sinfo_prefix_answer(std::string_view prefix);
std::string scancel_prefix_answer(std::string_view prefix);
std::string sacct_prefix_answer(std::string_view prefix);

}  // namespace hq::cmd
