// libprotobuf's own .proto files (descriptor.proto and the well-known types: Struct,
// Timestamp, Any, ...) registered when a process first needs their descriptors, not at
// start-up.
//
// Each generated file of the full runtime registers itself from a static initializer
// (AddDescriptorsRunner), which parses its encoded FileDescriptorProto into the generated
// pool's index: about 0.4 ms and 90 page faults at the start of every hq process, a third of
// a short command's whole cost, for descriptors that only --json output uses. The link wraps
// that constructor (CMakeLists.txt: --wrap), so a static initializer only notes the file
// here; register_protobuf_files() hands every noted file to protobuf's own registration,
// as its static initializer would have. Where the wrap does not apply (a shared libprotobuf,
// as the sanitizer build links it) protobuf registers its files at start as usual and
// nothing is noted.
// Threads: notes are taken during static initialisation (one thread); register_protobuf_files
// is safe to call from any thread, any number of times.
#include "cmd/proto_files.hpp"

#include <mutex>
#include <vector>

namespace google::protobuf::internal {
struct DescriptorTable;
}

using Table = google::protobuf::internal::DescriptorTable;

namespace {
std::vector<const Table*>& noted() {
  static std::vector<const Table*> tables;  // built on first use, during static initialisation
  return tables;
}
}  // namespace

// google::protobuf::internal::AddDescriptorsRunner::AddDescriptorsRunner(const DescriptorTable*)
// (the complete-object constructor; the runner is an empty object).
extern "C" void __real__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(void* self, const Table* table);

extern "C" void __wrap__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(void*, const Table* table) {
  noted().push_back(table);
}

namespace hq::cmd {

void register_protobuf_files() {
  static std::once_flag once;
  std::call_once(once, [] {
    char runner = 0;
    for (const Table* table : noted())
      __real__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(&runner, table);
  });
}

}  // namespace hq::cmd
