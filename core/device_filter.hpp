// The cgroup v2 device filter: a BPF program (BPF_PROG_TYPE_CGROUP_DEVICE) that refuses
// the listed character devices and lets every other access through, as cgroup v1's
// `devices.deny` lines do for a job's and a step's group. Built here as the kernel's
// instruction encoding (struct bpf_insn) so that its logic is tested without a kernel;
// cmd/agent/bpf_devices loads and attaches it. Pure; any thread.
#pragma once
#include <cstdint>
#include <vector>

namespace hq {

// A character device, by number (a GPU's /dev/nvidiaN is 195:N).
struct DeviceId {
  uint32_t major = 0, minor = 0;
};

// One instruction as the kernel reads it: opcode, destination register (low 4 bits) and
// source register (high 4 bits), a jump offset and an immediate.
struct BpfInsn {
  uint8_t code = 0;
  uint8_t regs = 0;
  int16_t off = 0;
  int32_t imm = 0;
};
static_assert(sizeof(BpfInsn) == 8);

// The opcodes the filter uses (the kernel's ABI: linux/bpf_common.h and linux/bpf.h).
namespace bpf_op {
constexpr uint8_t kLoadWord = 0x61;     // BPF_LDX | BPF_MEM | BPF_W: dst = *(u32*)(src + off)
constexpr uint8_t kAndImm = 0x57;       // BPF_ALU64 | BPF_AND | BPF_K: dst &= imm
constexpr uint8_t kMovImm = 0xb7;       // BPF_ALU64 | BPF_MOV | BPF_K: dst = imm
constexpr uint8_t kJumpIfNotImm = 0x55; // BPF_JMP | BPF_JNE | BPF_K: if dst != imm, skip off
constexpr uint8_t kExit = 0x95;         // BPF_JMP | BPF_EXIT: return r0
}  // namespace bpf_op

// The device access a filter is asked about (struct bpf_cgroup_dev_ctx): `access_type` is
// the access (read 2, write 4, mknod 1) shifted left 16, or'ed with the type (block 1, char 2).
constexpr uint32_t kBpfDevBlock = 1, kBpfDevChar = 2;

// The program: 0 (refuse) for a character device in `deny`, 1 (allow) for anything else.
// An empty list gives a program that allows everything.
std::vector<BpfInsn> device_deny_program(const std::vector<DeviceId>& deny);

}  // namespace hq
