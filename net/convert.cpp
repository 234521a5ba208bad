#include "net/convert.hpp"

#include <algorithm>
#include <climits>
#include <google/protobuf/io/coded_stream.h>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/hostlist.hpp"
#include "net/wire_read.hpp"
#include "net/wire_type.hpp"

namespace hq::net {
namespace {

template <typename Vec>
void copy_to(const Vec& v, google::protobuf::RepeatedPtrField<std::string>* r) {
  for (const auto& x : v) *r->Add() = x;
}
template <typename Vec, typename T>
void copy_to(const Vec& v, google::protobuf::RepeatedField<T>* r) {
  for (const auto& x : v) r->Add(x);
}

pb::NodeAlloc to_pb(const NodeAlloc& a) {
  pb::NodeAlloc p;
  p.set_node(a.node);
  p.set_cpus(a.cpus);
  p.set_mem_mib(a.mem_mib);
  p.set_tasks(a.tasks);
  copy_to(a.gpus, p.mutable_gpus());
  return p;
}

NodeAlloc from_pb(const pb::NodeAlloc& p) {
  return {p.node(), p.cpus(), p.mem_mib(), p.tasks(), std::vector<int32_t>(p.gpus().begin(), p.gpus().end())};
}

Result<JobState> state_from(const std::string& name) {
  JobState s;
  if (!parse_job_state(name, s)) return invalid("unknown job state '" + name + "'");
  return s;
}

// A job reason as written by hq (any version): one of JobReason's names, or empty for none
// (an agent's end without a failure). Other text is refused, not shown as a reason.
Result<JobReason> reason_from(const std::string& name) {
  if (name.empty()) return JobReason::kNone;
  auto r = parse_job_reason(name);
  if (!r) return invalid("unknown job reason '" + name + "'");
  return *r;
}

}  // namespace

void to_pb(const JobSpec& s, bool with_script, pb::JobSpec& p) {
  // Strings only when not empty: the same on the wire, and no allocation for each (a
  // listing of many jobs makes millions).
  if (!s.name.empty()) p.set_name(s.name);
  if (with_script) {
    p.set_script(*s.script);
    copy_to(s.argv, p.mutable_argv());
    copy_to(*s.env, p.mutable_env());
  }
  if (!s.workdir.empty()) p.set_workdir(s.workdir);
  if (!s.output.empty()) p.set_output(s.output);
  if (!s.error.empty()) p.set_error(s.error);
  if (!s.partition.empty()) p.set_partition(s.partition);
  if (!s.user.empty()) p.set_user(s.user);
  p.set_uid(s.uid);
  p.set_gid(s.gid);
  copy_to(s.groups, p.mutable_groups());
  if (!s.submit_host.empty()) p.set_submit_host(s.submit_host);
  p.set_nodes_min(s.nodes_min);
  p.set_nodes_max(s.nodes_max);
  p.set_nodes_set(s.nodes_set);
  p.set_ntasks(s.ntasks);
  p.set_ntasks_set(s.ntasks_set);
  p.set_ntasks_per_node(s.ntasks_per_node);
  p.set_cpus_per_task(s.cpus_per_task);
  p.set_cpus_per_task_set(s.cpus_per_task_set);
  p.set_mem_per_node_mib(s.mem_per_node_mib);
  p.set_mem_per_cpu_mib(s.mem_per_cpu_mib);
  p.set_mem_all(s.mem_all);
  p.set_nomultithread(s.nomultithread);
  p.set_time_limit(s.time_limit);
  p.set_hold(s.hold);
  if (!s.account.empty()) p.set_account(s.account);
  if (!s.constraint.empty()) p.set_constraint(s.constraint);
  if (!s.nodelist.empty()) p.set_nodelist(s.nodelist);
  if (!s.exclude.empty()) p.set_exclude(s.exclude);
  p.set_exclusive(s.exclusive);
  p.set_exclusive_topo(s.exclusive_topo);
  p.set_segment(s.segment);
  p.set_switches(s.switches);
  p.set_switch_wait(s.switch_wait);
  p.set_nice(s.nice);
  p.set_begin_time(s.begin_time);
  if (!s.dependency.empty()) p.set_dependency(s.dependency);
  p.set_kill_on_invalid_dep(s.kill_on_invalid_dep);
  if (!s.array.empty()) p.set_array(s.array);
  p.set_signal(s.signal);
  p.set_signal_time(s.signal_time);
  p.set_signal_batch_only(s.signal_batch_only);
  p.set_requeue(s.requeue);
  p.set_gpus(s.gpus);
  p.set_gpus_per_node(s.gpus_per_node);
  p.set_gpus_per_task(s.gpus_per_task);
  if (!s.gpu_type.empty()) p.set_gpu_type(s.gpu_type);
  p.set_cpus_per_gpu(s.cpus_per_gpu);
  p.set_mem_per_gpu_mib(s.mem_per_gpu_mib);
  if (!s.cpu_bind.empty()) p.set_cpu_bind(s.cpu_bind);
  p.set_alloc_kind(static_cast<int32_t>(s.alloc_kind));
  const JobExtras& e = *s.extra;
  if (!e.comment.empty()) p.set_comment(e.comment);
  if (!e.qos.empty()) p.set_qos(e.qos);
  if (!e.wckey.empty()) p.set_wckey(e.wckey);
  if (!e.reservation.empty()) p.set_reservation(e.reservation);
  if (!e.input.empty()) p.set_input(e.input);
  if (!e.mail_type.empty()) p.set_mail_type(e.mail_type);
  if (!e.mail_user.empty()) p.set_mail_user(e.mail_user);
  p.set_open_mode(e.open_mode);
  p.set_time_min(e.time_min);
  p.set_deadline(e.deadline);
  p.set_priority(e.priority);
  if (!e.command.empty()) p.set_command(e.command);
  if (!e.qos_list.empty()) p.set_qos_list(e.qos_list);
}

pb::JobSpec to_pb(const JobSpec& s, bool with_script) {
  pb::JobSpec p;
  to_pb(s, with_script, p);
  return p;
}

namespace {

// Fills a default-constructed spec. An empty script or environment stays unset (no copy to
// allocate: a snapshot's jobs refer to shared ones instead).
void decode_spec(const pb::JobSpec& p, JobSpec& s) {
  s.name = p.name();
  if (!p.script().empty()) s.script = p.script();
  s.argv.assign(p.argv().begin(), p.argv().end());
  s.workdir = p.workdir();
  s.output = p.output();
  s.error = p.error();
  s.partition = p.partition();
  s.user = p.user();
  s.uid = p.uid();
  s.gid = p.gid();
  s.groups.assign(p.groups().begin(), p.groups().end());
  s.submit_host = p.submit_host();
  s.nodes_min = p.nodes_min();
  s.nodes_max = p.nodes_max();
  s.nodes_set = p.nodes_set();
  s.ntasks = p.ntasks();
  s.ntasks_set = p.ntasks_set();
  s.ntasks_per_node = p.ntasks_per_node();
  s.cpus_per_task = p.cpus_per_task();
  s.cpus_per_task_set = p.cpus_per_task_set();
  s.mem_per_node_mib = p.mem_per_node_mib();
  s.mem_per_cpu_mib = p.mem_per_cpu_mib();
  s.mem_all = p.mem_all();
  s.nomultithread = p.nomultithread();
  s.time_limit = p.time_limit();
  if (!p.env().empty()) s.env = std::vector<std::string>(p.env().begin(), p.env().end());
  s.hold = p.hold();
  s.account = p.account();
  s.constraint = p.constraint();
  s.nodelist = p.nodelist();
  s.exclude = p.exclude();
  s.exclusive = p.exclusive();
  s.exclusive_topo = p.exclusive_topo();
  s.segment = p.segment();
  s.switches = p.switches();
  s.switch_wait = p.switch_wait();
  s.nice = p.nice();
  s.begin_time = p.begin_time();
  s.dependency = p.dependency();
  s.kill_on_invalid_dep = p.kill_on_invalid_dep();
  s.array = p.array();
  s.signal = p.signal();
  s.signal_time = p.signal_time();
  s.signal_batch_only = p.signal_batch_only();
  s.requeue = p.requeue();
  s.gpus = p.gpus();
  s.gpus_per_node = p.gpus_per_node();
  s.gpus_per_task = p.gpus_per_task();
  s.gpu_type = p.gpu_type();
  s.cpus_per_gpu = p.cpus_per_gpu();
  s.mem_per_gpu_mib = p.mem_per_gpu_mib();
  s.cpu_bind = p.cpu_bind();
  JobExtras e;
  e.comment = p.comment();
  e.qos = p.qos();
  e.wckey = p.wckey();
  e.reservation = p.reservation();
  e.input = p.input();
  e.mail_type = p.mail_type();
  e.mail_user = p.mail_user();
  e.open_mode = p.open_mode();
  e.time_min = p.time_min();
  e.deadline = p.deadline();
  e.priority = p.priority();
  e.command = p.command();
  e.qos_list = p.qos_list();
  if (!(e == JobExtras{})) s.extra = std::move(e);
  int32_t kind = p.alloc_kind();
  s.alloc_kind = kind >= 0 && kind <= static_cast<int32_t>(AllocKind::kSalloc) ? static_cast<AllocKind>(kind)
                                                                                 : AllocKind::kBatch;
}

Result<StopIntent> stop_intent_from(int32_t raw) {
  if (raw < 0 || raw > static_cast<int32_t>(StopIntent::kPreemptCancel)) return invalid("bad stop intent " + std::to_string(raw));
  return static_cast<StopIntent>(raw);
}

// Fills a default-constructed job in place (a job is large: decoders build it where it
// will be applied from, not in a temporary moved from there).
Status decode_job(const pb::Job& p, Job& j) {
  j.id = JobId{p.job_id()};
  if (!j.id) return invalid("job record without an id");
  decode_spec(p.spec(), j.spec);
  auto st = state_from(p.state());
  if (!st) return st.status();
  j.state = *st;
  auto reason = reason_from(p.reason());
  if (!reason) return reason.status();
  j.reason = *reason;
  j.priority = p.priority();
  j.partition = p.partition();
  j.time_limit = p.time_limit();
  j.submit_time = p.submit_time();
  j.start_time = p.start_time();
  j.end_time = p.end_time();
  j.alloc.reserve(static_cast<size_t>(p.alloc_size()));
  for (const auto& a : p.alloc()) j.alloc.push_back(from_pb(a));
  j.exit_code = p.exit_code();
  j.exit_signal = p.exit_signal();
  j.peak_mem_bytes = p.has_peak_mem_bytes() ? p.peak_mem_bytes() : -1;
  j.cpu_time_usec = p.has_cpu_time_usec() ? p.cpu_time_usec() : -1;
  if (p.hold() < 0 || p.hold() > 2 || p.dep_state() < 0 || p.dep_state() > 2) return invalid("bad hold or dependency state");
  j.hold = p.held() ? HoldKind::kUser : static_cast<HoldKind>(p.hold());
  j.restart_count = p.restart_count();
  j.submit_key = p.submit_key();
  j.cancel_requested = p.cancel_requested();
  j.cancel_key = p.cancel_key();
  j.cancel_uid = p.has_cancel_uid() ? static_cast<int64_t>(p.cancel_uid()) : -1;
  j.sluid = p.sluid();
  j.original_sluid = p.original_sluid();
  auto intent = stop_intent_from(p.stop_intent());
  if (!intent) return intent.status();
  j.stop_intent = *intent;
  j.partitions.assign(p.partitions().begin(), p.partitions().end());
  j.dep_state = static_cast<DepState>(p.dep_state());
  j.eligible_time = p.eligible_time();
  j.array_job_id = p.array_job_id();
  j.array_task_id = p.array_job_id() ? p.array_task_id() : -1;
  j.array_throttle = p.array_throttle();
  j.array_task_count = p.array_task_count();
  j.array_task_min = p.array_task_min();
  j.array_task_max = p.array_task_max();
  j.array_task_step = p.array_task_step() > 0 ? p.array_task_step() : 1;
  j.expected_start = p.expected_start();
  j.sched_nodes = p.sched_nodes();
  j.state_desc = p.state_desc().substr(0, 256);
  j.preempting = p.preempting();
  if (p.suspended() && j.state != JobState::kRunning) return invalid("a suspended job that is not running");
  if (p.suspend_time() < 0 || p.pre_suspend_secs() < 0 || p.suspended_secs() < 0)
    return invalid("negative suspension times");
  j.suspended = p.suspended();
  j.suspend_time = p.suspend_time();
  j.pre_suspend_secs = p.pre_suspend_secs();
  j.suspended_secs = p.suspended_secs();
  return Status::ok();
}

}  // namespace

JobSpec from_pb(const pb::JobSpec& p) {
  JobSpec s;
  decode_spec(p, s);
  return s;
}

namespace {

// What a listing shows of a job, and so both views carry: ids, state, reason, priority,
// partition, limit and times, allocation, hold, array ids, expected start, suspension.
// A field added here (or to to_pb_brief) goes into net/brief_wire.cpp's append_brief_job
// too, which writes the same record straight to the wire; tests/net/brief_wire_test.cpp
// fails until both agree for the fields its random jobs set.
void listing_fields(const Job& j, pb::Job& p) {
  p.set_job_id(j.id.value);
  p.set_state(std::string(job_state_name(j.state)));
  p.set_reason(std::string(to_string(j.reason)));
  p.set_priority(j.priority);
  if (!j.partition.empty()) p.set_partition(j.partition);
  p.set_time_limit(j.time_limit);
  p.set_submit_time(j.submit_time);
  p.set_start_time(j.start_time);
  p.set_end_time(j.end_time);
  p.set_eligible_time(j.eligible_time);
  for (const auto& a : j.alloc) *p.add_alloc() = to_pb(a);
  if (!j.alloc.empty()) p.set_nodelist(alloc_hostlist(j.alloc));
  p.set_hold(static_cast<int32_t>(j.hold));
  p.set_array_job_id(j.array_job_id);
  if (j.array_job_id) p.set_array_task_id(j.array_task_id);  // else -1, ten bytes a job for nothing
  p.set_array_throttle(j.array_throttle);
  p.set_expected_start(j.expected_start);
  p.set_suspended(j.suspended);
  p.set_suspend_time(j.suspend_time);
  p.set_suspended_secs(j.suspended_secs);
}

}  // namespace

void to_pb(const Job& j, bool with_script, pb::Job& p) {
  listing_fields(j, p);
  to_pb(j.spec, with_script, *p.mutable_spec());
  p.set_exit_code(j.exit_code);
  p.set_exit_signal(j.exit_signal);
  p.set_restart_count(j.restart_count);
  if (!j.submit_key.empty()) p.set_submit_key(j.submit_key);
  p.set_cancel_requested(j.cancel_requested);
  if (!j.cancel_key.empty()) p.set_cancel_key(j.cancel_key);
  if (j.cancel_uid >= 0) p.set_cancel_uid(static_cast<uint32_t>(j.cancel_uid));
  p.set_sluid(j.sluid);
  p.set_original_sluid(j.original_sluid);
  p.set_stop_intent(static_cast<int32_t>(j.stop_intent));
  copy_to(j.partitions, p.mutable_partitions());
  p.set_dep_state(static_cast<int32_t>(j.dep_state));
  if (j.array_job_id) {
    p.set_array_task_count(j.array_task_count);
    p.set_array_task_min(j.array_task_min);
    p.set_array_task_max(j.array_task_max);
    p.set_array_task_step(j.array_task_step);
  }
  if (!j.sched_nodes.empty()) p.set_sched_nodes(j.sched_nodes);
  if (!j.state_desc.empty()) p.set_state_desc(j.state_desc);
  p.set_preempting(j.preempting);
  p.set_pre_suspend_secs(j.pre_suspend_secs);
  if (j.peak_mem_bytes >= 0) p.set_peak_mem_bytes(j.peak_mem_bytes);
  if (j.cpu_time_usec >= 0) p.set_cpu_time_usec(j.cpu_time_usec);
}

pb::Job to_pb(const Job& j, bool with_script) {
  pb::Job p;
  to_pb(j, with_script, p);
  return p;
}

void to_pb_brief(const Job& j, pb::Job& p) {
  listing_fields(j, p);
  if (j.partitions.size() > 1) copy_to(j.partitions, p.mutable_partitions());
  pb::JobSpec& spec = *p.mutable_spec();  // every field set, none left to the spec before (convert.hpp)
  spec.set_name(j.spec.name);
  spec.set_user(j.spec.user);
  spec.set_uid(j.spec.uid);
  spec.set_nodes_min(j.spec.nodes_min);
  spec.set_ntasks(j.spec.ntasks);
  spec.set_cpus_per_task(j.spec.cpus_per_task);
  spec.set_begin_time(j.spec.begin_time);
}

Result<Job> from_pb(const pb::Job& p) {
  Job j;
  if (Status s = decode_job(p, j); !s) return s;
  return j;
}

pb::Node to_pb(const Node& n) {
  pb::Node p;
  p.set_name(n.name);
  p.set_cpus(n.cpus);
  p.set_mem_mib(n.mem_mib);
  copy_to(n.features, p.mutable_features());
  copy_to(n.partitions, p.mutable_partitions());
  p.set_state(node_state_name(n));
  p.set_responding(n.responding);
  p.set_reason(node_reason(n));
  p.set_alloc_cpus(n.alloc_cpus);
  p.set_alloc_mem_mib(n.alloc_mem_mib);
  for (JobId id : n.jobs) p.add_jobs(id.value);
  p.set_last_heard(n.last_heard);
  p.set_boot_time(n.boot_time);
  p.set_gres(node_gres(n));
  p.set_gres_used(node_gres_used(n));
  p.set_gpus(static_cast<int32_t>(n.gpus.size()));
  p.set_alloc_gpus(n.alloc_gpus);
  p.set_dynamic(n.dynamic);
  p.set_block(n.block);
  p.set_switch_name(n.switch_name);
  p.set_weight(n.weight);
  if (n.drain) {
    p.set_reason_time(n.drain_time);
    p.set_reason_uid(n.drain_uid);
  } else if (n.down) {
    p.set_reason_time(n.down_time);  // the controller's doing: its caller sets reason_uid
  }
  return p;
}

pb::JobEnded to_pb(const JobEnded& e) {
  pb::JobEnded p;
  p.set_job_id(e.id.value);
  p.set_state(std::string(job_state_name(e.state)));
  p.set_exit_code(e.exit_code);
  p.set_exit_signal(e.exit_signal);
  p.set_reason(std::string(to_string(e.reason)));
  p.set_end_time(e.time);
  if (e.peak_mem_bytes >= 0) p.set_peak_mem_bytes(e.peak_mem_bytes);
  if (e.cpu_time_usec >= 0) p.set_cpu_time_usec(e.cpu_time_usec);
  p.set_detail(e.detail);
  return p;
}

Result<JobEnded> from_pb(const pb::JobEnded& p) {
  auto st = state_from(p.state());
  if (!st) return st.status();
  if (!is_terminal(*st)) return invalid("JobEnded with non-final state " + p.state());
  auto reason = reason_from(p.reason());
  if (!reason) return reason.status();
  JobEnded e{JobId{p.job_id()}, p.end_time(), *st, p.exit_code(), p.exit_signal(), *reason};
  e.peak_mem_bytes = p.has_peak_mem_bytes() ? std::max<int64_t>(-1, p.peak_mem_bytes()) : -1;
  e.cpu_time_usec = p.has_cpu_time_usec() ? std::max<int64_t>(-1, p.cpu_time_usec()) : -1;
  e.detail = p.detail().substr(0, 256);
  return e;
}

namespace {
// A job event's record with the fields every one has (job id, time) filled in.
template <typename Msg, typename Ev>
Msg* stamped(Msg* msg, const Ev& ev) {
  msg->set_job_id(ev.id.value);
  msg->set_time(ev.time);
  return msg;
}

// A decoded record as an Event, or its error.
template <typename T>
Result<Event> as_event(Result<T> decoded);

Result<Event> decode_reservation_event(const pb::ReservationEvent& p) {
  auto r = net::from_pb(p.reservation());
  if (!r) return r.status().with_context("reservation event");
  return Event{ReservationChanged{p.time(), std::move(r).value(), p.deleted()}};
}

pb::PartitionUpdatedEvent to_pb(const PartitionUpdated& e) {
  pb::PartitionUpdatedEvent p;
  p.set_partition(e.partition);
  p.set_time(e.time);
  p.set_state(std::string(partition_state_name(e.state)));
  p.set_max_time(e.max_time);
  p.set_default_time(e.default_time);
  return p;
}

Result<PartitionUpdated> from_pb(const pb::PartitionUpdatedEvent& p) {
  PartitionUpdated e{p.partition(), p.time()};
  if (e.partition.empty()) return invalid("partition update event without a partition");
  if (!parse_partition_state(p.state(), e.state)) return invalid("partition update event with state '" + p.state() + "'");
  e.max_time = p.max_time();
  e.default_time = p.default_time();
  return e;
}

template <typename T>
Result<Event> as_event(Result<T> decoded) {
  if (!decoded) return decoded.status();
  return Event{std::move(decoded).value()};
}
}  // namespace

std::string encode_event(const Event& e) {
  pb::JournalEvent p;
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) {
          *p.mutable_submitted() = to_pb(ev.job);
        } else if constexpr (std::is_same_v<T, JobStarted>) {
          auto* s = p.mutable_started();
          s->set_job_id(ev.id.value);
          s->set_time(ev.time);
          for (const auto& a : ev.alloc) *s->add_alloc() = to_pb(a);
          s->set_partition(ev.partition);
          s->set_time_limit(ev.time_limit);
          s->set_qos(ev.qos);
        } else if constexpr (std::is_same_v<T, JobEnded>) {
          *p.mutable_ended() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, JobRequeued>) {
          stamped(p.mutable_requeued(), ev)->set_reason(std::string(to_string(ev.reason)));
          p.mutable_requeued()->set_sluid(ev.sluid);
        } else if constexpr (std::is_same_v<T, JobHoldChanged>) {
          stamped(p.mutable_hold(), ev)->set_hold(static_cast<int32_t>(ev.hold));
        } else if constexpr (std::is_same_v<T, JobDependencyChanged>) {
          stamped(p.mutable_dependency(), ev)->set_dep_state(static_cast<int32_t>(ev.state));
        } else if constexpr (std::is_same_v<T, JobStopRequested>) {
          stamped(p.mutable_stop(), ev)->set_intent(static_cast<int32_t>(ev.intent));
        } else if constexpr (std::is_same_v<T, JobCancelRequested>) {
          auto* c = stamped(p.mutable_cancel(), ev);
          c->set_key(ev.key);
          if (ev.uid >= 0) c->set_uid(static_cast<uint32_t>(ev.uid));
        } else if constexpr (std::is_same_v<T, NodeRegistered>) {
          *p.mutable_node_registered() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, NodeDownChanged>) {
          *p.mutable_node_down() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, NodeRemoved>) {
          *p.mutable_node_removed() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, JobUpdated>) {
          *stamped(p.mutable_updated(), ev)->mutable_job() = to_pb(ev.job, false);
        } else if constexpr (std::is_same_v<T, PartitionUpdated>) {
          *p.mutable_partition() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, JobSuspended>) {
          stamped(p.mutable_suspend(), ev)->set_suspend(ev.suspend);
        } else if constexpr (std::is_same_v<T, NodeUpdated>) {
          *p.mutable_node_updated() = to_pb(ev);
        } else if constexpr (std::is_same_v<T, ReservationChanged>) {
          auto* r = p.mutable_reservation();
          r->set_time(ev.time);
          r->set_deleted(ev.deleted);
          *r->mutable_reservation() = to_pb(ev.resv);
        } else {
          auto* d = p.mutable_node_drain();
          d->set_node(ev.node);
          d->set_time(ev.time);
          d->set_drain(ev.drain);
          d->set_reason(ev.reason);
          d->set_uid(ev.uid);
        }
      },
      e);
  return p.SerializeAsString();
}

Result<Event> decode_event(const std::string& bytes) {
  pb::JournalEvent p;
  if (!p.ParseFromString(bytes)) return invalid("undecodable journal event");
  if (p.has_submitted()) {
    Event event{std::in_place_type<JobSubmitted>};
    if (Status s = decode_job(p.submitted(), std::get<JobSubmitted>(event).job); !s) return s;
    return event;
  }
  if (p.has_started()) {
    JobStarted s{JobId{p.started().job_id()}, p.started().time(), {}, p.started().partition(), p.started().time_limit(),
                 p.started().qos()};
    if (s.time_limit < 0) return invalid("job start event with a negative time limit");
    for (const auto& a : p.started().alloc()) s.alloc.push_back(from_pb(a));
    return Event{std::move(s)};
  }
  if (p.has_ended()) {
    auto e = from_pb(p.ended());
    if (!e) return e.status();
    return Event{std::move(e).value()};
  }
  if (p.has_requeued()) {
    auto reason = reason_from(p.requeued().reason());
    if (!reason) return reason.status();
    return Event{JobRequeued{JobId{p.requeued().job_id()}, p.requeued().time(), *reason, p.requeued().sluid()}};
  }
  if (p.has_hold()) {
    if (p.hold().hold() < 0 || p.hold().hold() > 2) return invalid("bad hold kind in journal event");
    return Event{JobHoldChanged{JobId{p.hold().job_id()}, p.hold().time(), static_cast<HoldKind>(p.hold().hold())}};
  }
  if (p.has_node_drain()) {
    const auto& d = p.node_drain();
    if (d.node().empty()) return invalid("node drain event without a node");
    return Event{NodeDrainChanged{d.node(), d.time(), d.drain(), d.reason(), d.uid()}};
  }
  if (p.has_dependency()) {
    int32_t d = p.dependency().dep_state();
    if (d != 0 && d != 2) return invalid("bad dependency state in journal event");
    return Event{JobDependencyChanged{JobId{p.dependency().job_id()}, p.dependency().time(), static_cast<DepState>(d)}};
  }
  if (p.has_suspend())
    return Event{JobSuspended{JobId{p.suspend().job_id()}, p.suspend().time(), p.suspend().suspend()}};
  if (p.has_cancel()) {
    const auto& c = p.cancel();
    return Event{JobCancelRequested{JobId{c.job_id()}, c.time(), c.key(), c.has_uid() ? static_cast<int64_t>(c.uid()) : -1}};
  }
  if (p.has_stop()) {
    auto intent = stop_intent_from(p.stop().intent());
    if (!intent) return intent.status();
    return Event{JobStopRequested{JobId{p.stop().job_id()}, p.stop().time(), *intent}};
  }
  if (p.has_node_registered()) return as_event(from_pb(p.node_registered()));
  if (p.has_node_down()) return as_event(from_pb(p.node_down()));
  if (p.has_node_removed()) return as_event(from_pb(p.node_removed()));
  if (p.has_node_updated()) return as_event(from_pb(p.node_updated()));
  if (p.has_partition()) return as_event(from_pb(p.partition()));
  if (p.has_reservation()) return decode_reservation_event(p.reservation());
  if (p.has_updated()) {
    Event event{std::in_place_type<JobUpdated>};
    auto& u = std::get<JobUpdated>(event);
    u.id = JobId{p.updated().job_id()};
    u.time = p.updated().time();
    if (Status s = decode_job(p.updated().job(), u.job); !s) return s;
    if (u.job.id != u.id) return invalid("job update event for job " + std::to_string(u.id.value) + " carries job " +
                                         std::to_string(u.job.id.value));
    return event;
  }
  return invalid("empty journal event");
}

namespace {

// Numbers each distinct shared value once (1, 2, ...; 0 for an empty one), for snapshots.
template <typename T>
class RefTable {
 public:
  template <typename Add>
  uint32_t ref(const Shared<T>& v, Add&& add) {
    if (!v.identity()) return 0;
    auto [it, fresh] = refs_.try_emplace(v.identity(), static_cast<uint32_t>(refs_.size() + 1));
    if (fresh) add(*v);
    return it->second;
  }

 private:
  std::unordered_map<const void*, uint32_t> refs_;
};

}  // namespace

std::string encode_snapshot(const ClusterState& s) {
  pb::StateSnapshot p;
  p.set_next_job_id(s.next_job_id);
  RefTable<std::string> scripts;
  RefTable<std::vector<std::string>> environments;
  for (const auto& [id, job] : s.jobs) {
    pb::Job* pj = p.add_jobs();
    *pj = to_pb(job, false);
    copy_to(job.spec.argv, pj->mutable_spec()->mutable_argv());
    pj->set_script_ref(scripts.ref(job.spec.script, [&](const std::string& text) { p.add_scripts(text); }));
    pj->set_env_ref(environments.ref(job.spec.env, [&](const std::vector<std::string>& env) {
      copy_to(env, p.add_environments()->mutable_env());
    }));
  }
  add_nodes(s, p);
  for (const auto& part : s.partitions)
    *p.add_partitions() = to_pb(PartitionUpdated{part.name, 0, part.state, part.max_time, part.default_time});
  for (const auto& [name, r] : s.reservations) *p.add_reservations() = to_pb(r);
  p.set_next_resv_id(s.next_resv_id);
  for (const auto& [node, mark] : s.drained) {
    auto* d = p.add_drained();
    d->set_node(node);
    d->set_drain(true);
    d->set_reason(mark.reason);
    d->set_time(mark.time);
    d->set_uid(mark.uid);
  }
  return p.SerializeAsString();
}

namespace {

// Where each entry of a StateSnapshot's fields lies in its encoding. restore_snapshot
// parses one job's message at a time from these: the whole snapshot as messages would be
// more memory to fault in than the jobs themselves (130 MB at 100,000 jobs). Scripts are
// taken as they are (protobuf's parse would also check that they are UTF-8: hq only ever
// stores scripts it parsed as such).
struct SnapshotEntries {
  uint64_t next_job_id = 0;
  uint64_t next_resv_id = 0;
  std::vector<std::string_view> jobs, drained, scripts, environments, nodes, down, partitions, reservations, node_updates;
};


// Reads the top level of a StateSnapshot as protobuf's parser does: fields in any order,
// unknown ones (and known ones with another wire type) skipped. False: malformed.
bool scan_snapshot(std::string_view bytes, SnapshotEntries& out) {
  if (bytes.size() > INT_MAX) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  while (static_cast<size_t>(in.CurrentPosition()) < bytes.size()) {
    uint32_t tag = in.ReadTag();  // 0: malformed
    if (tag >> 3 == 0) return false;
    std::vector<std::string_view>* entries = tag == field_tag(2, kLengthDelimited)   ? &out.jobs
                                             : tag == field_tag(3, kLengthDelimited) ? &out.drained
                                             : tag == field_tag(4, kLengthDelimited) ? &out.scripts
                                             : tag == field_tag(5, kLengthDelimited) ? &out.environments
                                             : tag == field_tag(6, kLengthDelimited) ? &out.nodes
                                             : tag == field_tag(7, kLengthDelimited) ? &out.down
                                             : tag == field_tag(8, kLengthDelimited) ? &out.partitions
                                             : tag == field_tag(9, kLengthDelimited) ? &out.reservations
                                             : tag == field_tag(11, kLengthDelimited) ? &out.node_updates
                                                                                      : nullptr;
    bool ok = tag == field_tag(1, kVarint)    ? in.ReadVarint64(&out.next_job_id)
              : tag == field_tag(10, kVarint) ? in.ReadVarint64(&out.next_resv_id)
              : entries                    ? read_bytes(in, bytes, entries->emplace_back())
                                           : skip_field(in, tag);
    if (!ok) return false;
  }
  return true;
}

template <typename Message>
bool parse(Message& message, std::string_view bytes) {
  return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

Status restore_snapshot(const std::string& bytes, ClusterState& s, const std::function<void(size_t jobs)>& before_jobs) {
  SnapshotEntries snapshot;
  if (!scan_snapshot(bytes, snapshot)) return invalid("undecodable state snapshot");
  if (before_jobs) before_jobs(snapshot.jobs.size());
  std::vector<Shared<std::string>> scripts;
  scripts.reserve(snapshot.scripts.size());
  for (std::string_view text : snapshot.scripts) scripts.emplace_back(std::string(text));
  std::vector<Shared<std::vector<std::string>>> environments;
  pb::Environment pe;
  for (std::string_view entry : snapshot.environments) {
    if (!parse(pe, entry)) return invalid("undecodable state snapshot");
    environments.emplace_back(std::vector<std::string>(pe.env().begin(), pe.env().end()));
  }
  pb::StateSnapshot nodes;  // first: restored jobs hold resources on them
  for (std::string_view entry : snapshot.nodes)
    if (!parse(*nodes.add_nodes(), entry)) return invalid("undecodable state snapshot");
  for (std::string_view entry : snapshot.down)
    if (!parse(*nodes.add_down(), entry)) return invalid("undecodable state snapshot");
  for (std::string_view entry : snapshot.node_updates)
    if (!parse(*nodes.add_node_updates(), entry)) return invalid("undecodable state snapshot");
  if (Status st = restore_nodes(nodes, s); !st) return st;
  pb::PartitionUpdatedEvent pp;
  for (std::string_view entry : snapshot.partitions) {
    if (!parse(pp, entry)) return invalid("undecodable state snapshot");
    auto e = from_pb(pp);
    if (!e) return e.status().with_context("state snapshot");
    hq::apply(s, *e);
  }
  pb::AdvanceReservation pr;
  for (std::string_view entry : snapshot.reservations) {
    if (!parse(pr, entry)) return invalid("undecodable state snapshot");
    auto r = from_pb(pr);
    if (!r) return r.status().with_context("state snapshot");
    hq::apply(s, ReservationChanged{0, std::move(r).value(), false});
  }
  s.next_resv_id = std::max<uint64_t>(s.next_resv_id, snapshot.next_resv_id);
  reserve_jobs(s, snapshot.jobs.size());
  pb::Job pj;  // one message, reused for every job: its own strings keep their buffers
  for (std::string_view entry : snapshot.jobs) {
    if (!parse(pj, entry)) return invalid("undecodable state snapshot");
    Event event{std::in_place_type<JobSubmitted>};
    Job& job = std::get<JobSubmitted>(event).job;
    if (Status st = decode_job(pj, job); !st) return st.with_context("snapshot job " + std::to_string(pj.job_id()));
    if (pj.script_ref() > scripts.size() || pj.env_ref() > environments.size())
      return invalid("snapshot job " + std::to_string(pj.job_id()) + ": no shared script or environment " +
                     std::to_string(std::max(pj.script_ref(), pj.env_ref())));
    if (pj.script_ref() > 0) job.spec.script = scripts[pj.script_ref() - 1];
    if (pj.env_ref() > 0) job.spec.env = environments[pj.env_ref() - 1];
    hq::apply(s, std::move(event));
  }
  pb::NodeDrainEvent d;
  for (std::string_view entry : snapshot.drained) {
    if (!parse(d, entry)) return invalid("undecodable state snapshot");
    if (!d.node().empty()) hq::apply(s, NodeDrainChanged{d.node(), d.time(), true, d.reason(), d.uid()});
  }
  if (snapshot.next_job_id > s.next_job_id) s.next_job_id = snapshot.next_job_id;
  return Status::ok();
}

}  // namespace hq::net
