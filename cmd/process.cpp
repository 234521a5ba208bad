#include "cmd/process.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "core/units.hpp"

namespace hq::cmd {

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "hq";
}

Result<pid_t> spawn_daemon(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return io_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setsid();
    int in = open("/dev/null", O_RDONLY);
    int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) dup2(in, 0);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  int status;
  if (waitpid(pid, &status, WNOHANG) == pid) return false;  // our child, now reaped
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  // An exited process that nobody has reaped yet (a daemon's parent is init, which may
  // take its time) is not alive.
  ProcStat stat = proc_stat(pid);
  if (stat.empty()) return kill(pid, 0) == 0 || errno == EPERM;  // gone meanwhile, or no /proc
  return stat[0] != "Z";
}

void stop_process(pid_t pid, int grace_ms) {
  if (!process_alive(pid)) return;
  kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_alive(pid)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

namespace {
constexpr int kKeptFreeBytes = 64 << 20;
constexpr int kLargestMmapThreshold = 32 << 20;  // glibc's largest: blocks below it come from the heap
constexpr size_t kPrefaultBlock = 16 << 20;  // below the mmap threshold: from the heap
constexpr size_t kMostPrefault = 1 << 30;

// malloc's trim threshold as last set here (glibc's default until then): the calls below
// raise it and never lower what an earlier one set (the heap prefer_huge_heap_pages grew
// must not be trimmed by a later, smaller setting). Main thread only.
int trim_threshold = 128 << 10;

void set_trim_threshold(int bytes) {
  trim_threshold = bytes;
  mallopt(M_TRIM_THRESHOLD, bytes);
}

void raise_malloc_thresholds(int trim_bytes) {
  mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold);
  if (trim_bytes > trim_threshold) set_trim_threshold(trim_bytes);
}
}  // namespace

void keep_freed_memory() { raise_malloc_thresholds(kKeptFreeBytes); }  // the heap's free top is kept up to this

void keep_freed_heap(int bytes) {
  if (bytes > trim_threshold) set_trim_threshold(bytes);
}

void no_fast_bins() { mallopt(M_MXFAST, 0); }

namespace {
// Takes (for good) a block from the heap's next free place, `next` (the address its next
// block would have), that ends where a block starting at `boundary` begins, so that the
// next block from there starts at `boundary`. Never written past its header: address
// space, no memory. False when there is no room for one, or no memory.
bool fill_heap_to(uintptr_t next, uintptr_t boundary) {
  if (boundary <= next || boundary - next < 4 * sizeof(size_t)) return false;
  void* kept = malloc(boundary - next - sizeof(size_t));  // glibc's: its chunk ends 16 bytes before `boundary`
  asm volatile("" : : "r"(kept) : "memory");              // else the compiler drops a malloc whose block is unused
  return kept != nullptr;
}
}  // namespace

void prefer_huge_heap_pages(size_t bytes) {
  constexpr uintptr_t kHuge = 2 << 20;
  raise_malloc_thresholds(static_cast<int>(2 * bytes));  // a listing's buffers from the heap; the grown top stays
  std::vector<void*> blocks;  // the heap grows by `bytes` now, in blocks below the threshold
  for (size_t grown = 0; grown < bytes; grown += kPrefaultBlock)
    if (void* block = malloc(kPrefaultBlock)) blocks.push_back(block);
  if (blocks.empty()) return;
  auto* top = static_cast<char*>(sbrk(0));
  uintptr_t from = (reinterpret_cast<uintptr_t>(blocks.front()) + kHuge - 1) / kHuge * kHuge;
  uintptr_t to = reinterpret_cast<uintptr_t>(top) / kHuge * kHuge;
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  for (void* block : blocks) free(block);  // back to the heap's top: one free block, of huge pages to be
  // The heap's next blocks from the first huge page on: what lies below it (up to 2 MiB of
  // 4 KiB pages, each costing its first write on a VM even once mapped ahead) is kept by a
  // block never written past its header, whose end is where the next block's starts.
  // The top's first block starts past its chunk's header; the top may have merged with a
  // free block below the first grown one, so it is read from malloc (its size), not assumed.
  // A filler that a free block elsewhere gave leaves the top where it was: tried again.
  auto top_next = [] { return reinterpret_cast<uintptr_t>(sbrk(0)) - mallinfo2().keepcost + 2 * sizeof(size_t); };
  for (int tries = 0; tries < 8 && to > from; ++tries)
    if (uintptr_t first = top_next(); first == from || !fill_heap_to(first, from)) break;
}

uintptr_t page_down(uintptr_t address) {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return address / page * page;
}

uintptr_t page_up(uintptr_t address) {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return (address + page - 1) / page * page;
}

std::pair<void*, size_t> populate_within(void* data, size_t size) {
  uintptr_t begin = page_up(reinterpret_cast<uintptr_t>(data));
  uintptr_t end = page_down(reinterpret_cast<uintptr_t>(data) + size);
  if (end <= begin || madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) != 0) end = begin;
  return {reinterpret_cast<void*>(begin), end - begin};
}

std::pair<void*, size_t> prefault_heap_for(size_t frame_bytes) {
  constexpr size_t kMost = kLargestMmapThreshold - (1 << 20);  // from the heap, not a mapping
  size_t bytes = std::min(frame_bytes * kHeapPerReplyByte, kMost);
  raise_malloc_thresholds(kKeptFreeBytes + static_cast<int>(bytes));  // freed, it stays in the heap
  void* block = malloc(bytes);
  if (!block) return {nullptr, 0};
  auto mapped = populate_within(block, bytes);
  free(block);  // back to the heap's free top, where the reply and its records are made next
  return mapped;
}

void prefault_heap_hook(size_t frame_bytes) { (void)prefault_heap_for(frame_bytes); }

std::pair<void*, size_t> prefault_text_block(size_t frame_bytes) {
  constexpr uintptr_t kHuge = 2 << 20;
  constexpr size_t kMost = kLargestMmapThreshold - 2 * kHuge;  // from the heap, not a mapping
  if (frame_bytes > kMost) return {nullptr, 0};
  size_t span = (frame_bytes + 1 + kHuge - 1) / kHuge * kHuge;
  raise_malloc_thresholds(kKeptFreeBytes + static_cast<int>(span + 2 * kHuge));  // freed, it stays in the heap
  // A block of `span` bytes, until one starts a 2 MiB page: each that does not is kept for
  // good, with a block after it that ends where the next page starts, so that the next
  // block, from the heap's top, starts there. The probe is `span` long, not the buffer's
  // size, so that malloc's header for the top that follows it lies past the huge page:
  // a page written there first would be mapped alone, and the range could then never be
  // mapped as one huge page. Freed, the probe goes back to the top, where the frame's
  // buffer is made next. A fresh client's first try is at the top, and what it keeps is
  // never written past its headers (address space, no memory); a heap used longer may
  // give free blocks, kept too (at most eight of each). Another allocator (a sanitizer's)
  // places blocks its own way: nothing is lost but the page size.
  auto chunk_bytes = [](size_t request) { return (request + sizeof(size_t) + 15) / 16 * 16; };  // glibc's
  void* block = malloc(span);
  for (int tries = 0; tries < 8 && block && reinterpret_cast<uintptr_t>(block) % kHuge != 0; ++tries) {
    uintptr_t next = reinterpret_cast<uintptr_t>(block) + chunk_bytes(span);  // the memory after it
    uintptr_t from = (next + kHuge - 1) / kHuge * kHuge;
    if (from - next < 4 * sizeof(size_t)) from += kHuge;  // room for the smallest block
    if (!fill_heap_to(next, from)) return {nullptr, 0};
    block = malloc(span);
  }
  if (!block) return {nullptr, 0};
  std::pair<void*, size_t> mapped{nullptr, 0};
  if (reinterpret_cast<uintptr_t>(block) % kHuge == 0) {
    (void)madvise(block, span, MADV_HUGEPAGE);
    mapped = populate_within(block, frame_bytes + 1);
  }
  free(block);  // back where it came from, where the frame's buffer is made next
  return mapped;
}

void prefault_text_hook(size_t frame_bytes) { (void)prefault_text_block(frame_bytes); }

HeapPrefault::HeapPrefault(size_t bytes) {
  bytes = std::min(bytes, kMostPrefault);
  keep_freed_memory();
  set_trim_threshold(kKeptFreeBytes + static_cast<int>(bytes));
  std::vector<void*> blocks;  // all held at once, so that each is new memory
  for (size_t mapped = kPrefaultBlock; mapped <= bytes; mapped += kPrefaultBlock) {
    void* block = malloc(kPrefaultBlock);
    if (!block) break;
    blocks.push_back(block);
    if (populate_within(block, kPrefaultBlock).second == 0) break;  // before Linux 5.14
  }
  for (void* block : blocks) free(block);
}

HeapPrefault::~HeapPrefault() { set_trim_threshold(kKeptFreeBytes); }

ProcStat::ProcStat(std::string text) : text_(std::move(text)) {
  size_t close = text_.rfind(')');
  if (close == std::string::npos || close + 2 >= text_.size()) {
    text_.clear();
    return;
  }
  text_.erase(0, close + 2);
  while (!text_.empty() && std::isspace(static_cast<unsigned char>(text_.back()))) text_.pop_back();
}

size_t ProcStat::size() const { return empty() ? 0 : 1 + static_cast<size_t>(std::count(text_.begin(), text_.end(), ' ')); }

std::string_view ProcStat::operator[](size_t i) const {
  std::string_view rest = text_;
  for (; i > 0; --i) {
    size_t space = rest.find(' ');
    if (space == std::string_view::npos) return {};
    rest.remove_prefix(space + 1);
  }
  return trim(rest.substr(0, rest.find(' ')));
}

ProcStat proc_stat(pid_t pid) { return ProcStat(read_small_file("/proc/" + std::to_string(pid) + "/stat")); }

int64_t rss_kib(pid_t pid) {
  std::string status = read_small_file("/proc/" + std::to_string(pid) + "/status");
  for (std::string_view line : split(status, '\n')) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    line = trim(line.substr(6));
    auto kib = parse_int(line.substr(0, line.find(' ')), 0, INT64_MAX);
    return kib ? *kib : -1;
  }
  return -1;
}

}  // namespace hq::cmd
