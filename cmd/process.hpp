// Small process helpers for commands that start daemons (hq local, benchmarks, tests).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <sys/types.h>
#include <vector>

#include "core/status.hpp"

namespace hq::cmd {

std::string self_exe();
// Starts `argv` detached (own session), stdin from /dev/null, stdout+stderr to `log_path`.
Result<pid_t> spawn_daemon(const std::vector<std::string>& argv, const std::string& log_path);
bool process_alive(pid_t pid);  // false for zombies too
// Raises the open-files soft limit to the hard limit: a controller holds one socket per
// node and client (Debian's default soft limit is 1024).
void raise_fd_limit();
// Addresses rounded down or up to the page they fall in.
uintptr_t page_down(uintptr_t address);
uintptr_t page_up(uintptr_t address);
// The whole pages within [data, data + size) mapped writable now, in one
// MADV_POPULATE_WRITE (about 1 us a page, where touching them one by one costs a page
// fault each: 15-20 us on a VM). Returns the range mapped; empty when the kernel would not
// (before Linux 5.14).
std::pair<void*, size_t> populate_within(void* data, size_t size);
// Keeps up to 64 MiB of freed heap memory in the process instead of returning it to the
// kernel: each scheduling pass allocates some megabytes per 10,000 pending jobs and frees
// them at its end, and getting them back costs a page fault per 4 KiB (about 10 ms of a
// 100,000-job pass). The price is RSS: up to 64 MiB more than the live heap.
void keep_freed_memory();
// Keeps up to `bytes` of freed heap (malloc's trim threshold only; never lowers one set
// before): the node agent's, whose heap top each job step grew and gave back by `brk`
// (a read buffer of 64 KiB per srun connection among others), 2.8% of its CPU a step.
void keep_freed_heap(int bytes);
// Turns off malloc's fast bins (M_MXFAST 0) for a daemon that frees many small blocks
// between large requests: each request of 1 KiB or more (a request's frame, a job's
// script) first merged every fast-bin block (`malloc_consolidate`, 3% of the controller's
// CPU over sequential submissions). Small frees still go to the per-thread cache first.
// Sequential `sbatch -H` on `hq local`, 12 runs of 1,000 in the order A B B A B A A B A B B A:
// 692/s and 0.32 ms of the controller's CPU a submission on average against 646/s and 0.34 ms.
void no_fast_bins();
// Maps about `bytes` of heap now, for allocations about to come (a restore building a
// state of 100,000 jobs): one madvise per 16 MiB maps what those allocations would fault
// in page by page, at 3 to 4 times the CPU on a VM (the 100,000-job replay: 0.9 -> 0.5 s).
// The memory goes back to the heap's free top, kept there while this lives; once it ends,
// the next free at the top trims what no allocation took. Tunes malloc as
// keep_freed_memory() does (the blocks must come from the heap).
class HeapPrefault {
 public:
  explicit HeapPrefault(size_t bytes);
  ~HeapPrefault();
  HeapPrefault(const HeapPrefault&) = delete;
  HeapPrefault& operator=(const HeapPrefault&) = delete;
};
// For a client about to build a long listing in its heap (thousands of records, a few
// MiB): the heap grows by `bytes` at once, large blocks come from it too, and the kernel
// is asked to back it with 2 MiB pages where it can (transparent huge pages, "madvise"
// mode). One page fault per 2 MiB touched instead of one per 4 KiB: 1,750 faults of a
// 5,000-job squeue were a quarter of its time. Pages never touched are never backed. The
// heap below the first 2 MiB boundary is then kept by a block of its own, so that the
// next blocks start on a huge page.
void prefer_huge_heap_pages(size_t bytes);
// For a client about to receive a reply of `frame_bytes` and parse it: the heap that the
// reply's buffer and its records take (kHeapPerReplyByte times the reply, at most 32 MiB)
// is mapped now in one MADV_POPULATE_WRITE, instead of a page fault per 4 KiB as it is
// written (on a VM 15-20 us each: 380 of them were a third of a 5,000-job squeue). Where
// THP is on (prefer_huge_heap_pages) the kernel maps 2 MiB pages where it can. Keeps freed
// memory as keep_freed_memory() does (never lowering what prefer_huge_heap_pages set).
// Installed as net::FrameDecoder's long-frame hook by squeue's listing. Returns the range
// it mapped (empty when the kernel would not), for tests.
std::pair<void*, size_t> prefault_heap_for(size_t frame_bytes);
void prefault_heap_hook(size_t frame_bytes);  // the same, as a FrameDecoder::LongFrameHook
inline constexpr size_t kHeapPerReplyByte = 5;
// For a reply that is text to print (a listing the controller made, QueueRequest.render):
// the heap's next block of `frame_bytes` moved to start on a 2 MiB boundary, asked for in
// 2 MiB pages (transparent huge pages, "madvise" mode) and mapped now. On a VM a 4 KiB
// page costs its first write even once mapped: 450 KB of text took 0.55 ms to write first
// in 4 KiB pages mapped ahead, 1.2 ms unmapped, 0.15 ms in one 2 MiB page. Returns the
// range mapped (empty when the kernel would not), for tests.
std::pair<void*, size_t> prefault_text_block(size_t frame_bytes);
void prefault_text_hook(size_t frame_bytes);  // the same, as a FrameDecoder::LongFrameHook
// The fields of /proc/PID/stat from the state (field 3) on, past the command name (which
// may hold spaces); empty when the process is gone. proc_stat(pid)[0] is the state letter.
// One string read, its fields picked as views on demand (an agent reads a shim's start
// time for every job; a string per field was most of that).
class ProcStat {
 public:
  explicit ProcStat(std::string text);
  size_t size() const;
  bool empty() const { return text_.empty(); }
  std::string_view operator[](size_t i) const;  // "" past the last field

 private:
  std::string text_;  // from the state letter on, no trailing newline
};
ProcStat proc_stat(pid_t pid);
// VmRSS of a process in KiB, or -1.
int64_t rss_kib(pid_t pid);
// SIGTERM, wait up to `grace_ms`, then SIGKILL. Reaps the child if it is ours.
void stop_process(pid_t pid, int grace_ms = 10000);

}  // namespace hq::cmd
