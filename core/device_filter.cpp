#include "core/device_filter.hpp"

namespace hq {
namespace {

constexpr uint8_t regs(uint8_t dst, uint8_t src = 0) { return static_cast<uint8_t>(dst | (src << 4)); }

// Registers: r1 holds the context on entry; r2 the device type, r3 major, r4 minor.
constexpr uint8_t kCtx = 1, kType = 2, kMajor = 3, kMinor = 4, kResult = 0;

}  // namespace

std::vector<BpfInsn> device_deny_program(const std::vector<DeviceId>& deny) {
  using namespace bpf_op;
  std::vector<BpfInsn> p;
  p.reserve(4 + 5 * deny.size() + 2);
  p.push_back({kLoadWord, regs(kType, kCtx), 0, 0});  // access_type
  p.push_back({kAndImm, regs(kType), 0, 0xffff});      // its low half: the type
  p.push_back({kLoadWord, regs(kMajor, kCtx), 4, 0});
  p.push_back({kLoadWord, regs(kMinor, kCtx), 8, 0});
  for (const DeviceId& d : deny) {
    // Not this device: skip the four instructions after the test, to the next entry.
    p.push_back({kJumpIfNotImm, regs(kType), 4, static_cast<int32_t>(kBpfDevChar)});
    p.push_back({kJumpIfNotImm, regs(kMajor), 3, static_cast<int32_t>(d.major)});
    p.push_back({kJumpIfNotImm, regs(kMinor), 2, static_cast<int32_t>(d.minor)});
    p.push_back({kMovImm, regs(kResult), 0, 0});
    p.push_back({kExit, 0, 0, 0});
  }
  p.push_back({kMovImm, regs(kResult), 0, 1});
  p.push_back({kExit, 0, 0, 0});
  return p;
}

}  // namespace hq
