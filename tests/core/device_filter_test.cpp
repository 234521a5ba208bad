// The cgroup v2 device filter's program, run by a small model of the kernel's BPF
// machine over every kind of access: the listed character devices are refused, every
// other device (block devices with the same numbers included) is allowed. The kernel's
// own verdict is checked in tests/cmd/cgroup_test.cpp where the host allows it.
#include <doctest/doctest.h>

#include <array>
#include <cstring>

#include "core/device_filter.hpp"

using namespace hq;

namespace {

// Runs `p` on the context {access_type, major, minor}; -1 for what the model does not
// know (an opcode the filter should not use, a jump out of the program, a register out
// of range) so that a malformed program fails the test.
int64_t run(const std::vector<BpfInsn>& p, uint32_t type, uint32_t access, uint32_t major, uint32_t minor) {
  const std::array<uint32_t, 3> ctx{(access << 16) | type, major, minor};
  std::array<uint64_t, 11> r{};
  constexpr uint64_t kCtxAddress = 0x1000;  // r1 on entry: where the context lies
  r[1] = kCtxAddress;
  for (size_t pc = 0; pc < p.size(); ++pc) {
    const BpfInsn& i = p[pc];
    unsigned dst = i.regs & 0xf, src = i.regs >> 4;
    if (dst > 10 || src > 10) return -1;
    switch (i.code) {
      case bpf_op::kLoadWord: {
        if (r[src] != kCtxAddress || i.off < 0 || i.off % 4 != 0 || i.off / 4 >= 3) return -1;
        r[dst] = ctx[static_cast<size_t>(i.off / 4)];
        break;
      }
      case bpf_op::kAndImm: r[dst] &= static_cast<uint64_t>(static_cast<int64_t>(i.imm)); break;
      case bpf_op::kMovImm: r[dst] = static_cast<uint64_t>(static_cast<int64_t>(i.imm)); break;
      case bpf_op::kJumpIfNotImm:
        if (i.off < 0 || pc + 1 + static_cast<size_t>(i.off) >= p.size()) return -1;  // forward, inside
        if (r[dst] != static_cast<uint64_t>(static_cast<int64_t>(i.imm))) pc += static_cast<size_t>(i.off);
        break;
      case bpf_op::kExit: return static_cast<int64_t>(r[0]);
      default: return -1;
    }
  }
  return -1;  // fell off the end
}

constexpr uint32_t kRead = 2, kWrite = 4, kMknod = 1;

}  // namespace

TEST_CASE("device filter: the listed character devices are refused for every access, all else allowed") {
  std::vector<DeviceId> deny{{195, 1}, {195, 3}, {1, 3}};
  auto p = device_deny_program(deny);
  for (uint32_t access : {kRead, kWrite, kMknod, kRead | kWrite | kMknod}) {
    for (const DeviceId& d : deny) {
      CHECK(run(p, kBpfDevChar, access, d.major, d.minor) == 0);
      CHECK(run(p, kBpfDevBlock, access, d.major, d.minor) == 1);  // a block device of the same numbers
    }
    CHECK(run(p, kBpfDevChar, access, 195, 0) == 1);    // the job's own GPU
    CHECK(run(p, kBpfDevChar, access, 195, 2) == 1);
    CHECK(run(p, kBpfDevChar, access, 195, 255) == 1);  // nvidiactl
    CHECK(run(p, kBpfDevChar, access, 1, 5) == 1);      // /dev/zero: same major as a refused one
    CHECK(run(p, kBpfDevChar, access, 3, 1) == 1);      // minor and major swapped
    CHECK(run(p, kBpfDevChar, access, 0, 0) == 1);
  }
}

TEST_CASE("device filter: an empty list allows everything - one entry refuses exactly that device") {
  auto none = device_deny_program({});
  CHECK(run(none, kBpfDevChar, kRead, 195, 0) == 1);
  CHECK(run(none, kBpfDevBlock, kWrite, 8, 0) == 1);
  auto one = device_deny_program({{508, 0}});
  CHECK(run(one, kBpfDevChar, kRead, 508, 0) == 0);
  CHECK(run(one, kBpfDevChar, kRead, 508, 1) == 1);
  CHECK(run(one, kBpfDevChar, kRead, 507, 0) == 1);
}

TEST_CASE("device filter: large device numbers are compared exactly (minors up to 2^20)") {
  auto p = device_deny_program({{4095, (1u << 20) - 1}, {240, 65536}});
  CHECK(run(p, kBpfDevChar, kRead, 4095, (1u << 20) - 1) == 0);
  CHECK(run(p, kBpfDevChar, kRead, 4095, (1u << 20) - 2) == 1);
  CHECK(run(p, kBpfDevChar, kRead, 240, 65536) == 0);
  CHECK(run(p, kBpfDevChar, kRead, 240, 0) == 1);  // 65536's low 16 bits
}
