#include "cmd/client/srun_output.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/units.hpp"

namespace hq::cmd {
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = fd < 0 ? -1 : ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

OutputFiles::~OutputFiles() {
  for (auto& [path, fd] : fds_) ::close(fd);
}

Result<int> OutputFiles::open(const std::string& path) {
  if (auto it = fds_.find(path); it != fds_.end()) return it->second;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("Could not open stdout file " + path + ": " + std::strerror(errno));
  fds_[path] = fd;
  return fd;
}

PatternContext TaskOutput::task_context(const Step& step, uint32_t t) {
  PatternContext ctx = step.base;
  ctx.task = t;
  ctx.node_index = t < step.task_node.size() ? step.task_node[t] : 0;
  ctx.node = ctx.node_index < step.nodes.size() ? step.nodes[ctx.node_index] : "";
  return ctx;
}

Result<std::unique_ptr<TaskOutput>> TaskOutput::make(const std::string& spec, int own_fd, const Step& step,
                                                     OutputFiles& files) {
  auto out = std::make_unique<TaskOutput>();
  int32_t ntasks = static_cast<int32_t>(step.task_node.size());
  bool labelled = step.label;
  if (spec.empty()) {
    out->shared_fd_ = own_fd;
  } else if (spec == "none") {
    labelled = false;  // everything is dropped
  } else if (auto n = parse_int(spec, 0, INT32_MAX)) {
    if (*n >= ntasks) return invalid("task " + spec + " of -o/-e is not in the step (" + std::to_string(ntasks) + " tasks)");
    out->shared_fd_ = own_fd;
    out->only_task_ = static_cast<int>(*n);
  } else if (!names_a_task(spec)) {
    auto fd = files.open(expand_pattern(spec, step.base));
    if (!fd) return fd.status();
    out->shared_fd_ = *fd;
  } else {
    labelled = false;
    for (uint32_t t = 0; t < step.task_node.size(); ++t) {
      auto fd = files.open(expand_pattern(spec, task_context(step, t)));
      if (!fd) return fd.status();
      out->per_task_[t] = *fd;
    }
  }
  if (labelled) out->label_ = std::make_unique<LabelledOutput>(ntasks);
  else if (out->shared_fd_ >= 0 && out->only_task_ < 0 && !step.unbuffered)  // tasks share it: whole lines
    out->label_ = std::make_unique<LabelledOutput>(ntasks, false);
  return out;
}

int TaskOutput::fd_for(uint32_t task) const {
  if (only_task_ >= 0 && static_cast<int>(task) != only_task_) return -1;
  if (shared_fd_ >= 0) return shared_fd_;
  auto it = per_task_.find(task);
  return it == per_task_.end() ? -1 : it->second;
}

void TaskOutput::write(uint32_t task, const std::string& data) {
  int fd = fd_for(task);
  if (fd < 0) return;
  (void)write_all(fd, label_ ? label_->feed(task, data) : data);
}

void TaskOutput::finish(uint32_t task) {
  if (label_) (void)write_all(fd_for(task), label_->finish(task));
}

}  // namespace hq::cmd
