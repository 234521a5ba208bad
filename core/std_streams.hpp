// The standard streams, built on first use: hq's own code writes to std::cout, std::cerr
// and reads std::cin only through hq::cout(), hq::cerr() and hq::cin()
// (scripts/check_layering.sh refuses the bare names in cmd/, core/, net/ and store/).
// Why: libstdc++ builds its eight standard streams and the classic locale before main in
// every process that links <iostream>, about 0.2 ms of every command's start on the VMs
// measured (docs/performance.md). The static executables (CMakeLists.txt, hq_static_link)
// defer that build to the first of these calls (cmd/std_streams_start.cpp), so a command
// that prints through stdio (`hq --version`, sbatch's answer) never pays it. In a build
// without that link the streams are built before main as usual and these only return them.
// Thread-safe: the deferred build runs once, whichever thread asks first.
#pragma once
#include <istream>
#include <ostream>

namespace hq {

std::ostream& cout();
std::ostream& cerr();
std::istream& cin();
// Whether the standard streams are built yet (always true where their build is not
// deferred). Text printed through stdio before they are, and through them after, keeps
// its order: they are synchronised with stdio (sync_with_stdio is never turned off).
bool std_streams_built();

}  // namespace hq
