// Fuzz: the PMI-1 simple wire server (core/pmi_simple) on what tasks send: lines for two
// local tasks (the first byte of a line picks the task), each barrier's blob exchanged
// back as if from two nodes (ours and the input itself), conversations ending; blobs of
// puts decoded. Nothing may crash, and every reply must be one line.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/pmi_simple.hpp"

namespace {
void check(const hq::PmiEffects& fx) {
  for (const auto& [task, line] : fx.replies)
    if (task > 1 || line.empty() || line.find('\n') != line.size() - 1) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> puts;
  (void)hq::decode_pmi_puts(text, puts);
  hq::PmiNode node(hq::PmiStep{"1.0", 4, 2, {{"PMI_process_mapping", "(vector,(0,2,2))"}}});
  for (size_t start = 0; start < text.size();) {
    size_t nl = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, nl - start);
    size_t task = !line.empty() && (line[0] & 1) ? 1 : 0;
    auto fx = line == "gone" ? node.gone(task) : node.line(task, line.substr(line.empty() ? 0 : 1));
    check(fx);
    if (fx.exchange) check(node.exchanged(std::vector<std::string>{*fx.exchange, std::string(text)}));
    start = nl + 1;
  }
  return 0;
}
