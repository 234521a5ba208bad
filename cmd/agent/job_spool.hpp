// A job's spool directory on its node (script, launch record, exit file, end record) and how
// an ended job's directory is kept for the next job instead of being removed.
// Why kept: creating a file takes an inode, and on ext4 without a journal each allocation
// reads past every inode freed in the last seconds (`recently_deleted`); a node running a
// few hundred short jobs a second spent a quarter of its agents' CPU there. A kept
// directory carries the agent's own files as stale `.new` files, which the next job's
// records are written over (in place, cut to their new length, then renamed into place as
// before: truncating them to nothing first made ext4 free their blocks and, at close,
// write them out at once, its guard for files replaced by truncation). The script, which
// the job's user owns (and may hold open), is written over only for a job of the same user.
// Thread rules: any thread; the list of kept directories is behind a mutex.
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>

#include "core/status.hpp"

namespace hq::cmd {

// The job's spool directory (script, launch record, exit file).
std::string job_dir(const std::string& spool_dir, uint64_t job_id);
// The file where the shim leaves the script's wait status (decimal) when it ends.
std::string exit_file(const std::string& spool_dir, uint64_t job_id);
// The agent's record of a launched job: a line of pids (shim, script, the shim's start
// time, CPUs), then the LaunchJob (cmd/agent/adopt.cpp).
std::string pids_file(const std::string& spool_dir, uint64_t job_id);
// Touched by the agent while it hears from the controller; its age is how long it has not.
std::string lease_file(const std::string& spool_dir);
// Made by a shim that killed its job for a stale lease (the end is a node failure).
std::string fenced_file(const std::string& spool_dir, uint64_t job_id);
// The end of the job's latest run on this node (a pb::JobEnded) until the controller acks it.
std::string ended_file(const std::string& spool_dir, uint64_t job_id);

// Makes the job's spool directory, from a kept directory when there is one (the script's
// writer sets its mode).
Status make_job_dir(const std::string& spool_dir, uint64_t job_id);
// The script file in the job's directory `dir`, open for writing (mode 0700): the kept one
// when its owner is `uid` and it opens at once (no lease, not being run), else a new one.
// A kept one still holds its old text: write the new one with write_whole_file. -1 with
// errno on failure.
int open_script_file(const std::string& dir, uid_t uid);
// Makes the file open on `fd` hold exactly `data`: written from its start over what it held,
// then cut to `size` if it was longer. Only system calls (the shim calls it after fork).
bool write_whole_file(int fd, const char* data, size_t size);
// Writes `text` to `path.new` (over a stale one, never following a link), then renames it
// over `path`: a reader sees the old file or the new, never part of one.
Status replace_spool_file(const std::string& path, const std::string& text, mode_t mode);
// Removes the job's spool directory: kept for a later job when it can be.
void cleanup_spool(const std::string& spool_dir, uint64_t job_id);
// Removes the files of the job's run (script, records, exit status), keeping its ended_file.
void clear_run(const std::string& spool_dir, uint64_t job_id);
// An agent's start: takes up the directories an earlier agent kept in `spool_dir` (each
// stripped again to its stale files; any past the bound, or not a directory, removed), then
// makes new ones up to `want` (at most the bound), so that the first jobs after a start
// allocate no inodes in the spool (on a busy ext4 without a journal, 0.3 ms each).
void prepare_kept_dirs(const std::string& spool_dir, size_t want);
// Removes the directories kept in `spool_dir` and forgets them.
void drop_kept_dirs(const std::string& spool_dir);
// How many directories are kept for `spool_dir` now (tests).
size_t kept_dir_count(const std::string& spool_dir);

}  // namespace hq::cmd
