// What hq's start maps ahead of use (cmd/startup.cpp): part of the hq executable only.
// Main thread only, before any other thread exists.
#pragma once

namespace hq::cmd {

// Maps the hot code (cmake/hot_symbols.txt), the heap's free top and the next stretch of
// the stack: called once a command is to run (a one-line answer such as `hq --version`
// runs and writes too little of any to gain).
void populate_command_memory();

}  // namespace hq::cmd
