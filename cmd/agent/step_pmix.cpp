#include "cmd/agent/step_pmix.hpp"

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/agent/pmix_server.hpp"
#include "cmd/agent/task_launch.hpp"
#include "core/pmix_map.hpp"
#include "net/log.hpp"
#include "core/step_exit.hpp"

namespace hq::cmd {

StepPmix::StepPmix(asio::io_context& io, std::string dir, std::string node, Hooks hooks)
    : io_(io), dir_(std::move(dir)), node_(std::move(node)), hooks_(std::move(hooks)) {}

StepPmix::~StepPmix() = default;

std::string StepPmix::step_dir(Key key) const {
  return dir_ + "/" + step_label(key.first, key.second);
}

Status StepPmix::attach(Key key, const std::vector<StepNode>& layout, size_t here, std::vector<TaskPlan>& plans) {
  if (here >= layout.size() || plans.size() != layout[here].tasks.size() || plans.empty())
    return invalid("PMIx: the step's layout does not match its tasks here");
  if (steps_.count(key)) return invalid("PMIx: the step is already attached here");
  if (!server_) {
    PmixServer::Events events{
        [this](const std::string& ns, std::string blob, PmixServer::FenceReply reply) {
          fence(ns, std::move(blob), std::move(reply));
        },
        [this](const std::string& ns, int status, const std::string&) { abort(ns, status); },
        [this](const std::string& ns, uint32_t rank, bool finalized) { client(ns, rank, finalized); }};
    server_ = std::make_unique<PmixServer>(io_, dir_, node_, std::move(events));
  }
  if (Status s = server_->start(); !s) return s.with_context("PMIx server");
  const TaskPlan& first = plans.front();
  uid_t uid = first.switch_user ? first.uid : geteuid();
  gid_t gid = first.switch_user ? first.gid : getegid();
  std::string dir = step_dir(key);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || ::chmod(dir.c_str(), 0700) != 0 || (geteuid() == 0 && ::chown(dir.c_str(), uid, gid) != 0))
    return io_error("PMIx: cannot make the step's directory " + dir);
  PmixStepMap map = pmix_step_map(key.first, key.second, layout, here);
  auto envs = server_->add(map, dir, uid, gid);
  if (!envs) {
    std::filesystem::remove_all(dir, ec);
    return envs.status();
  }
  for (size_t i = 0; i < plans.size(); ++i)
    plans[i].env = with_pmix_env(std::move(plans[i].env), (*envs)[i], key.first, key.second);
  steps_[key] = Attached{map.nspace, {}, {}};
  by_nspace_[map.nspace] = key;
  return Status::ok();
}

void StepPmix::detach(Key key) {
  auto it = steps_.find(key);
  if (it == steps_.end()) return;
  server_->remove(it->second.nspace);
  by_nspace_.erase(it->second.nspace);
  steps_.erase(it);
  std::error_code ec;
  std::filesystem::remove_all(step_dir(key), ec);
}

void StepPmix::fence(const std::string& nspace, std::string blob, std::function<void(bool, const std::string&)> reply) {
  auto at = by_nspace_.find(nspace);
  if (at == by_nspace_.end() || !hooks_.exchange) return reply(false, "");
  hooks_.exchange(at->second, std::move(blob), [reply = std::move(reply)](Status s, const std::string& all) {
    if (!s) log::warn("PMIx fence failed: " + s.message());
    reply(s.is_ok(), all);
  });
}

void StepPmix::abort(const std::string& nspace, int status) {
  auto at = by_nspace_.find(nspace);
  if (at != by_nspace_.end() && hooks_.abort) hooks_.abort(at->second, status);
}

void StepPmix::client(const std::string& nspace, uint32_t rank, bool finalized) {
  auto at = by_nspace_.find(nspace);
  if (at == by_nspace_.end()) return;
  Attached& step = steps_[at->second];
  (finalized ? step.finalized : step.connected).insert(rank);
}

bool StepPmix::lost(Key key, uint32_t rank) const {
  auto it = steps_.find(key);
  return it != steps_.end() && it->second.connected.count(rank) && !it->second.finalized.count(rank);
}

}  // namespace hq::cmd
