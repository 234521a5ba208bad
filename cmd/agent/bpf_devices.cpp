#include "cmd/agent/bpf_devices.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace hq::cmd {
namespace {

static_assert(sizeof(BpfInsn) == sizeof(bpf_insn));
static_assert(bpf_op::kLoadWord == (BPF_LDX | BPF_MEM | BPF_W));
static_assert(bpf_op::kAndImm == (BPF_ALU64 | BPF_AND | BPF_K));
static_assert(bpf_op::kMovImm == (BPF_ALU64 | BPF_MOV | BPF_K));
static_assert(bpf_op::kJumpIfNotImm == (BPF_JMP | BPF_JNE | BPF_K));
static_assert(bpf_op::kExit == (BPF_JMP | BPF_EXIT));
static_assert(kBpfDevChar == BPF_DEVCG_DEV_CHAR && kBpfDevBlock == BPF_DEVCG_DEV_BLOCK);

long bpf(int cmd, bpf_attr& attr) { return ::syscall(__NR_bpf, cmd, &attr, sizeof(attr)); }

// The program's file descriptor, or -1 with errno set.
int load(const std::vector<BpfInsn>& program) {
  static const char kLicense[] = "GPL";  // the kernel asks; the program calls no GPL-only helper
  bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(program.data());
  attr.insn_cnt = static_cast<uint32_t>(program.size());
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  return static_cast<int>(bpf(BPF_PROG_LOAD, attr));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

bool device_filters_work(const std::string& dir) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) return false;
  struct rlimit unlimited {RLIM_INFINITY, RLIM_INFINITY};
  (void)::setrlimit(RLIMIT_MEMLOCK, &unlimited);
  std::string scratch = dir + "/hq_device_probe";
  if (::mkdir(scratch.c_str(), 0755) != 0 && errno != EEXIST) return false;
  bool ok = attach_device_filter(scratch, {{0, 0}}).is_ok();  // 0:0 is no device
  ::rmdir(scratch.c_str());
  return ok;
}

Status attach_device_filter(const std::string& dir, const std::vector<DeviceId>& deny) {
  if (deny.empty()) return Status::ok();
  Fd prog(load(device_deny_program(deny)));
  if (prog.get() < 0) return io_error("cannot load a device filter for " + dir + ": " + std::strerror(errno));
  Fd group(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (group.get() < 0) return io_error("cannot open " + dir + ": " + std::strerror(errno));
  bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.target_fd = static_cast<uint32_t>(group.get());
  attr.attach_bpf_fd = static_cast<uint32_t>(prog.get());
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf(BPF_PROG_ATTACH, attr) != 0)
    return io_error("cannot attach a device filter to " + dir + ": " + std::strerror(errno));
  return Status::ok();
}

}  // namespace hq::cmd
