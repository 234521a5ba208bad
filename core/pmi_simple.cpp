#include "core/pmi_simple.hpp"

#include <charconv>

namespace hq {
namespace {

void reply(PmiEffects& fx, size_t task, std::string line) {
  line += '\n';
  fx.replies.emplace_back(task, std::move(line));
}

// The words whose value is the rest of the line (they come last).
bool runs_to_end(std::string_view key) { return key == "value" || key == "error_msg"; }

bool valid_key(const std::string& key) {
  return !key.empty() && key.size() <= kPmiKeyMax && key.find('=') == std::string::npos;
}

// MPICH sends `exitcode`, older clients `exit_code`; anything else aborts with 1.
int abort_code(const PmiLine& l) {
  const std::string* v = l.get("exitcode");
  if (!v) v = l.get("exit_code");
  int code = 1;
  if (v && std::from_chars(v->data(), v->data() + v->size(), code).ec != std::errc()) code = 1;
  return code;
}

}  // namespace

const std::string* PmiLine::get(std::string_view key) const {
  for (const auto& [k, v] : words)
    if (k == key) return &v;
  return nullptr;
}

Result<PmiLine> parse_pmi_line(std::string_view line) {
  PmiLine out;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    size_t eq = line.find('=', i), space = line.find(' ', i);
    if (eq == std::string_view::npos || space < eq) return invalid("pmi: a word without '='");
    if (eq == i) return invalid("pmi: an empty key");
    std::string key(line.substr(i, eq - i));
    size_t end = runs_to_end(key) || space == std::string_view::npos ? line.size() : space;
    out.words.emplace_back(std::move(key), std::string(line.substr(eq + 1, end - eq - 1)));
    i = end;
  }
  return out;
}

std::string encode_pmi_puts(const std::map<std::string, std::string>& puts) {
  std::string blob;
  for (const auto& [k, v] : puts) blob += k + "=" + v + "\n";
  return blob;
}

Status decode_pmi_puts(std::string_view blob, std::map<std::string, std::string>& into) {
  while (!blob.empty()) {
    size_t nl = blob.find('\n');
    if (nl == std::string_view::npos) return invalid("pmi: a put without its newline");
    std::string_view kv = blob.substr(0, nl);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return invalid("pmi: a put without '='");
    std::string key(kv.substr(0, eq));
    if (!valid_key(key) || kv.size() - eq - 1 > kPmiValueMax) return invalid("pmi: a malformed put");
    into.insert_or_assign(std::move(key), std::string(kv.substr(eq + 1)));
    blob.remove_prefix(nl + 1);
  }
  return Status::ok();
}

PmiNode::PmiNode(PmiStep step) : step_(std::move(step)), tasks_(step_.local_tasks) {}

PmiEffects PmiNode::line(size_t task, std::string_view text) {
  PmiEffects fx;
  if (task >= tasks_.size() || !tasks_[task].talking) return fx;
  Task& t = tasks_[task];
  if (t.in_spawn) {  // spawn is not supported: its block is read to its end, then refused
    if (text == "endcmd") {
      t.in_spawn = false;
      reply(fx, task, "cmd=spawn_result rc=-1 msg=not_supported");
    }
    return fx;
  }
  auto l = parse_pmi_line(text);
  if (l && !l->words.empty() && l->words[0].first == "mcmd") t.in_spawn = true;
  else if (!l || l->words.empty() || l->words[0].first != "cmd") reply(fx, task, "cmd=error rc=-1 msg=bad_line");
  else command(task, *l, fx);
  return fx;
}

void PmiNode::command(size_t task, const PmiLine& l, PmiEffects& fx) {
  const std::string& cmd = l.words[0].second;
  if (cmd == "init") {
    const std::string* v = l.get("pmi_version");
    reply(fx, task, std::string("cmd=response_to_init rc=") + (v && *v == "1" ? "0" : "-1") +
                        " pmi_version=1 pmi_subversion=1");
  } else if (cmd == "get_maxes") {
    reply(fx, task, "cmd=maxes rc=0 kvsname_max=" + std::to_string(kPmiKvsNameMax) + " keylen_max=" +
                        std::to_string(kPmiKeyMax) + " vallen_max=" + std::to_string(kPmiValueMax));
  } else if (cmd == "get_appnum") {
    reply(fx, task, "cmd=appnum rc=0 appnum=-1");  // as Slurm: no MPMD application number
  } else if (cmd == "get_universe_size") {
    reply(fx, task, "cmd=universe_size rc=0 size=" + std::to_string(step_.size));
  } else if (cmd == "get_my_kvsname") {
    reply(fx, task, "cmd=my_kvsname rc=0 kvsname=" + step_.kvsname);
  } else if (cmd == "put") {
    put(task, l, fx);
  } else if (cmd == "get") {
    get(task, l, fx);
  } else if (cmd == "barrier_in") {
    barrier_in(task, fx);
  } else if (cmd == "finalize") {
    reply(fx, task, "cmd=finalize_ack rc=0");
    fx.close.push_back(task);
    tasks_[task] = Task{false, false, false};
    maybe_exchange(fx);
  } else if (cmd == "abort") {
    fx.abort = abort_code(l);
  } else if (cmd == "publish_name" || cmd == "unpublish_name" || cmd == "lookup_name") {
    reply(fx, task, "cmd=" + cmd.substr(0, cmd.size() - 5) + "_result rc=-1 info=fail msg=not_supported");
  } else {
    reply(fx, task, "cmd=" + cmd + "_result rc=-1 msg=unknown_command");
  }
}

void PmiNode::put(size_t task, const PmiLine& l, PmiEffects& fx) {
  const std::string *key = l.get("key"), *value = l.get("value");
  if (!key || !value || !valid_key(*key) || value->size() > kPmiValueMax)
    return reply(fx, task, "cmd=put_result rc=-1 msg=invalid_key_or_value");
  auto old = pending_.find(*key);
  size_t replaced = old == pending_.end() ? 0 : old->first.size() + old->second.size();
  size_t bytes = pending_bytes_ - replaced + key->size() + value->size();
  if (bytes > kPmiMaxPendingBytes) return reply(fx, task, "cmd=put_result rc=-1 msg=too_much_data");
  pending_bytes_ = bytes;
  pending_.insert_or_assign(*key, *value);
  reply(fx, task, "cmd=put_result rc=0");
}

void PmiNode::get(size_t task, const PmiLine& l, PmiEffects& fx) {
  const std::string* key = l.get("key");
  const std::string* found = nullptr;
  if (key) {
    if (auto it = step_.preput.find(*key); it != step_.preput.end()) found = &it->second;
    else if (auto at = store_.find(*key); at != store_.end()) found = &at->second;
  }
  if (!found) return reply(fx, task, "cmd=get_result rc=-1 msg=key_not_found");
  reply(fx, task, "cmd=get_result rc=0 value=" + *found);
}

void PmiNode::barrier_in(size_t task, PmiEffects& fx) {
  if (tasks_[task].in_barrier) return reply(fx, task, "cmd=barrier_out rc=-1 msg=already_in_barrier");
  tasks_[task].in_barrier = true;
  maybe_exchange(fx);
}

// Once every task that still talks is in the barrier, this node's puts go out.
void PmiNode::maybe_exchange(PmiEffects& fx) {
  if (exchanging_) return;
  bool any = false;
  for (const Task& t : tasks_) {
    if (t.talking && !t.in_barrier) return;
    any = any || t.in_barrier;
  }
  if (!any) return;
  exchanging_ = true;
  fx.exchange = encode_pmi_puts(pending_);
  pending_.clear();
  pending_bytes_ = 0;
}

PmiEffects PmiNode::exchanged(const Result<std::vector<std::string>>& blobs) {
  PmiEffects fx;
  if (!exchanging_) return fx;
  exchanging_ = false;
  Status s = blobs ? merge(*blobs) : blobs.status();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!tasks_[i].in_barrier) continue;
    tasks_[i].in_barrier = false;
    reply(fx, i, s ? "cmd=barrier_out rc=0" : "cmd=barrier_out rc=-1 msg=exchange_failed");
  }
  return fx;
}

Status PmiNode::merge(const std::vector<std::string>& blobs) {
  std::map<std::string, std::string> fresh;
  size_t bytes = 0;
  for (const auto& blob : blobs) {
    bytes += blob.size();
    if (Status s = decode_pmi_puts(blob, fresh); !s) return s;
  }
  if (store_bytes_ + bytes > kPmiMaxStoreBytes) return unavailable("pmi: the step's key-value store is full");
  store_bytes_ += bytes;
  for (auto& [k, v] : fresh) store_.insert_or_assign(k, std::move(v));
  return Status::ok();
}

PmiEffects PmiNode::gone(size_t task) {
  PmiEffects fx;
  if (task >= tasks_.size() || !tasks_[task].talking) return fx;
  tasks_[task] = Task{false, false, false};
  maybe_exchange(fx);
  return fx;
}

}  // namespace hq
