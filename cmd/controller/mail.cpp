// Job mail (--mail-type, --mail-user): what a recorded change of a job sends (core/mail),
// handed to the config's mail_prog (`sendmail -t`, the message on its stdin) once the change
// is durable; without a mail_prog it is logged instead. The program runs detached (a
// double fork), so the event loop never waits for it. Runs on the controller's event-loop
// thread.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/controller/controller.hpp"
#include "cmd/users.hpp"
#include "core/mail.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// Every task of array `array` still kept, in id order (the tasks' ids follow the array's).
std::vector<const Job*> array_tasks(const ClusterState& s, uint64_t array) {
  std::vector<const Job*> out;
  for (auto it = s.jobs.lower_bound(JobId{array}); it != s.jobs.end() && it->second.array_job_id == array; ++it)
    out.push_back(&it->second);
  return out;
}

// Starts `prog -t` detached with `message` on its stdin; false when it cannot be started.
bool run_mail_prog(const std::string& prog, const std::string& message) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (child == 0) {  // the grandchild runs the program; the child exits at once
    if (fork() == 0) {
      dup2(fds[0], 0);
      int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, 1), dup2(devnull, 2);
      setsid();
      execl(prog.c_str(), prog.c_str(), "-t", static_cast<char*>(nullptr));
      _exit(127);
    }
    _exit(0);
  }
  close(fds[0]);
  bool written = write(fds[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
  close(fds[1]);
  waitpid(child, nullptr, 0);
  return written;
}

}  // namespace

std::vector<Controller::Mail> Controller::mails_after(const Event& event) const {
  JobId id;
  bool started = false, requeued = false;
  if (const auto* s = std::get_if<JobStarted>(&event)) id = s->id, started = true;
  else if (const auto* e = std::get_if<JobEnded>(&event)) id = e->id;
  else if (const auto* r = std::get_if<JobRequeued>(&event)) id = r->id, requeued = true;
  else return {};
  const Job* job = find_job(state_, id);
  if (!job || job->spec.extra->mail_type.empty()) return {};
  std::vector<const Job*> tasks = job->array_job_id ? array_tasks(state_, job->array_job_id) : std::vector<const Job*>{};
  auto events = started ? mails_for_start(*job, tasks) : mails_for_end(*job, tasks, requeued);
  std::string to = job->spec.extra->mail_user.empty() ? job->spec.user.str() : job->spec.extra->mail_user;
  std::vector<Mail> out;
  for (MailEvent e : events) out.push_back({to, mail_subject(*job, tasks, e)});
  return out;
}

void Controller::send_mails(const std::vector<Mail>& mails) const {
  bool have_prog = !config_.mail_prog.empty() && access(config_.mail_prog.c_str(), X_OK) == 0;
  for (const Mail& m : mails) {
    std::string message = "To: " + m.to + "\nSubject: " + m.subject + "\n\n" + m.subject + "\n";
    if (have_prog && run_mail_prog(config_.mail_prog, message)) {
      log::info("mail to " + m.to + ": " + m.subject);
      continue;
    }
    log::info("mail to " + m.to + " not sent (" +
              (config_.mail_prog.empty() ? std::string("no mail_prog") : config_.mail_prog + " cannot run") + "): " + m.subject);
  }
}

}  // namespace hq::cmd
