#include "cmd/config_toml.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unistd.h>
#include <toml++/toml.h>

#include "core/acct_policy.hpp"
#include "core/hostlist.hpp"
#include "core/switch_tree.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Status where(const toml::node& n, const std::string& msg) const {
    return invalid(source_ + ":" + std::to_string(n.source().begin.line) + ": " + msg);
  }

  Status check_keys(const toml::table& t, const std::set<std::string>& allowed, const std::string& section) const {
    for (const auto& [k, v] : t) {
      if (!allowed.count(std::string(k.str()))) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        return where(v, "unknown key '" + std::string(k.str()) + "' in " + section + " (expected one of: " + list + ")");
      }
    }
    return Status::ok();
  }

  Status get_string(const toml::table& t, const char* key, std::string& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    if (!n->is_string()) return where(*n, std::string("'") + key + "' must be a string");
    out = **n->as_string();
    return Status::ok();
  }

  Status get_int(const toml::table& t, const char* key, int64_t min, int64_t max, int64_t& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    if (!n->is_integer()) return where(*n, std::string("'") + key + "' must be an integer");
    int64_t v = **n->as_integer();
    if (v < min || v > max)
      return where(*n, std::string("'") + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max));
    out = v;
    return Status::ok();
  }

  Status get_bool(const toml::table& t, const char* key, bool& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    if (!n->is_boolean()) return where(*n, std::string("'") + key + "' must be true or false");
    out = **n->as_boolean();
    return Status::ok();
  }

  // Durations may be strings ("30s", "1-00:00:00", "UNLIMITED") or integers (seconds).
  Status get_duration(const toml::table& t, const char* key, Duration& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    if (n->is_integer()) { out = **n->as_integer(); return Status::ok(); }
    if (!n->is_string()) return where(*n, std::string("'") + key + "' must be a duration like \"30s\" or \"1-00:00:00\"");
    auto d = parse_duration(**n->as_string());
    if (!d) return where(*n, std::string("'") + key + "': " + d.status().message());
    out = *d;
    return Status::ok();
  }

  Status get_hostlist(const toml::table& t, const char* key, std::string& expr, std::vector<std::string>& out) const {
    const toml::node* n = t.get(key);
    if (!n || !n->is_string()) return invalid(source_ + ":" + std::to_string(t.source().begin.line) + ": '" + key + "' (a hostlist string) is required");
    expr = **n->as_string();
    auto hosts = expand_hostlist(expr);
    if (!hosts) return where(*n, hosts.status().message());
    if (hosts->empty()) return where(*n, std::string("'") + key + "' names no hosts");
    out = std::move(hosts).value();
    return Status::ok();
  }

  Status get_strings(const toml::table& t, const char* key, std::vector<std::string>& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    const toml::array* arr = n->as_array();
    if (!arr) return where(*n, std::string("'") + key + "' must be an array of strings");
    for (const auto& e : *arr) {
      if (!e.is_string()) return where(e, std::string("'") + key + "' must hold only strings");
      out.push_back(**e.as_string());
    }
    return Status::ok();
  }

  Result<ClusterConfig> load(const toml::table& root) const {
    ClusterConfig c;
    Status s =
        check_keys(root, {"cluster", "controller", "scheduler", "partition", "node", "agents", "accounting", "topology"},
                   "the top level");
    if (s) s = load_cluster(root, c);
    if (s) s = load_controller(root, c);
    if (s) s = load_accounting(root, c);
    if (s) s = load_scheduler(root, c);
    if (s) s = load_agents(root, c);
    if (s) s = load_nodes(root, c);
    if (s) s = load_partitions(root, c);
    if (s) s = load_topology(root, c);
    if (s) s = validate_config(c).with_context(source_);
    if (!s) return s;
    return c;
  }

 private:
  const toml::table* section(const toml::table& root, const char* key, Status& s) const {
    const toml::node* n = root.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) s = where(*n, std::string("[") + key + "] must be a table");
    return n->as_table();
  }

  // One [[topology.switch]] (Slurm's SwitchName= line): name, nodes (a leaf switch's
  // hostlist) or switches (the hostlist of its child switches), link_speed.
  Status load_switch(const toml::table& sw, SwitchConfig& out) const {
    int64_t speed = out.link_speed;
    Status s = check_keys(sw, {"name", "nodes", "switches", "link_speed"}, "[[topology.switch]]");
    if (s) s = get_string(sw, "name", out.name);
    if (s) s = get_string(sw, "nodes", out.nodes_expr);
    if (s) s = get_string(sw, "switches", out.switches_expr);
    if (s) s = get_int(sw, "link_speed", 0, std::numeric_limits<uint32_t>::max(), speed);
    out.link_speed = static_cast<uint32_t>(speed);
    if (s && !out.nodes_expr.empty()) {
      auto names = expand_hostlist(out.nodes_expr);
      if (!names)
        return where(*sw.get("nodes"), "Invalid node name (" + out.nodes_expr + ") in switch config (" + out.name +
                                           "): " + names.status().message());
      out.nodes = std::move(names).value();
    }
    if (s && !out.switches_expr.empty()) {
      auto names = expand_hostlist(out.switches_expr);
      if (!names)
        return where(*sw.get("switches"), "Invalid switches: " + out.switches_expr + " (" + names.status().message() + ")");
      out.switches = std::move(names).value();
    }
    return s;
  }

  // [[topology.switch]] tables: loaded, then Slurm's checks of the tree, each error at the
  // switch it is about.
  Status load_switches(const toml::table& t, TopologyConfig& topo) const {
    std::vector<const toml::table*> tables;
    Status s = each_table(t, "switch", [&](const toml::table& sw) -> Status {
      SwitchConfig config;
      Status ss = load_switch(sw, config);
      if (ss) topo.switches.push_back(std::move(config)), tables.push_back(&sw);
      return ss;
    });
    if (!s || topo.switches.empty()) return s;
    if (!topo.blocks.empty() || !topo.block_sizes.empty()) return where(t, std::string(kBlocksOrSwitches));
    if (auto e = check_switches(topo.switches)) return where(*tables[e->switch_index], e->message);
    return s;
  }

  // [topology] (one topology, "default"), or [[topology]] tables (Slurm 25.05's
  // topology.yaml): each a name, `default = true` for the cluster default (the first such;
  // else the first table), and its blocks, switches, or `flat = true`.
  Status load_topology(const toml::table& root, ClusterConfig& c) const {
    const toml::node* n = root.get("topology");
    if (!n) return Status::ok();
    if (const toml::table* t = n->as_table()) return load_one_topology(*t, false, c.topology);
    const toml::array* arr = n->as_array();
    if (!arr || !arr->is_array_of_tables()) return where(*n, "[topology] must be a table, or [[topology]] tables");
    std::vector<TopologyConfig> all;
    int32_t chosen = -1;
    for (const auto& e : *arr) {
      TopologyConfig topo;
      bool is_default = false;
      if (Status s = load_one_topology(*e.as_table(), true, topo, &is_default); !s) return s;
      if (is_default && chosen >= 0)
        return where(*e.as_table(), "only one [[topology]] may have default = true (" + all[static_cast<size_t>(chosen)].name +
                                        " has it)");
      if (is_default) chosen = static_cast<int32_t>(all.size());
      all.push_back(std::move(topo));
    }
    if (all.empty()) return where(*n, "[[topology]] tables name no topology");
    size_t first = chosen < 0 ? 0 : static_cast<size_t>(chosen);
    c.topology = std::move(all[first]);
    for (size_t i = 0; i < all.size(); ++i)
      if (i != first) c.other_topologies.push_back(std::move(all[i]));
    return Status::ok();
  }

  // One topology's table: block_sizes = [N, ...] and [[topology.block]] tables (name,
  // nodes), or [[topology.switch]] tables; in a [[topology]], also name, default and flat.
  Status load_one_topology(const toml::table& t, bool named, TopologyConfig& topo, bool* is_default = nullptr) const {
    topo.present = true;
    Status s = named ? check_keys(t, {"name", "default", "flat", "block_sizes", "block", "switch"}, "[[topology]]")
                     : check_keys(t, {"block_sizes", "block", "switch"}, "[topology]");
    if (s && named) {
      topo.name.clear();
      s = get_string(t, "name", topo.name);
      bool named_well = !topo.name.empty() && topo.name.size() <= 64 && std::all_of(topo.name.begin(), topo.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
      if (s && !named_well)
        s = where(t, "[[topology]] needs a name of 1-64 letters, digits, '-', '_' or '.' (as node labels name it), like name = \"nvl\"");
      if (s && is_default) s = get_bool(t, "default", *is_default);
      if (s) s = get_bool(t, "flat", topo.flat);
    }
    if (s) {
      if (const toml::node* n = t.get("block_sizes")) {
        const toml::array* arr = n->as_array();
        if (!arr) return where(*n, "'block_sizes' must be a list of node counts, like [18, 36]");
        for (const auto& e : *arr) {
          auto v = e.value<int64_t>();
          if (!v || *v < 0 || *v > 1000000) return where(e, "'block_sizes' must be a list of node counts, like [18, 36]");
          topo.block_sizes.push_back(static_cast<int32_t>(*v));
        }
      }
    }
    if (s) s = each_table(t, "block", [&](const toml::table& b) -> Status {
      BlockConfig block;
      Status bs = check_keys(b, {"name", "nodes"}, "[[topology.block]]");
      if (bs) bs = get_string(b, "name", block.name);
      if (bs) bs = get_string(b, "nodes", block.nodes_expr);
      if (bs) {
        auto names = expand_hostlist(block.nodes_expr);
        if (!names) return where(b, "[[topology.block]] " + block.name + ": 'nodes': " + names.status().message());
        block.nodes = std::move(names).value();
      }
      if (bs) topo.blocks.push_back(std::move(block));
      return bs;
    });
    if (s) s = load_switches(t, topo);
    if (s) {
      if (Status v = validate_topology(topo); !v) s = where(t, v.message());
    }
    return s;
  }

  Status load_accounting(const toml::table& root, ClusterConfig& c) const {
    Status s;
    const toml::table* t = section(root, "accounting", s);
    if (!t) return s;
    s = check_keys(*t, {"storage", "path", "enforce", "host", "port"}, "[accounting]");
    if (s) s = get_string(*t, "storage", c.accounting.storage);
    if (s) s = get_string(*t, "path", c.accounting.path);
    if (s) s = get_string(*t, "enforce", c.accounting.enforce);
    if (s) s = get_string(*t, "host", c.accounting.host);
    if (s) s = get_int32(*t, "port", 0, 65535, c.accounting.port);
    const std::string& storage = c.accounting.storage;
    if (s && storage != "internal" && storage != "remote" && storage != "none")
      s = where(*t->get("storage"), "'storage' must be \"internal\" (SQLite inside the controller), \"remote\" (an "
                                    "`hq accounting` daemon at host:port) or \"none\"");
    if (s && storage == "remote" && c.accounting.host.empty())
      s = where(*t->get("storage"), "storage = \"remote\" needs 'host' (where `hq accounting` listens)");
    if (s && storage == "remote" && c.accounting.port == 0)
      s = where(*t->get("port"), "storage = \"remote\" needs a 'port' other than 0");
    if (s && t->get("enforce")) {
      auto e = parse_acct_enforce(c.accounting.enforce);
      if (!e) s = where(*t->get("enforce"), "'enforce': " + e.status().message());
      else if (e->associations && c.accounting.storage == "none")
        s = where(*t->get("enforce"), "'enforce' needs an accounting store (storage = \"internal\" or \"remote\"): limits live there");
    }
    return s;
  }

  // [agents]: programs must be absolute paths to readable files (they are sent to nodes).
  Status load_agents(const toml::table& root, ClusterConfig& c) const {
    Status s;
    const toml::table* t = section(root, "agents", s);
    if (!t) return s;
    s = check_keys(*t, {"health_check", "health_interval", "prolog", "epilog", "helper_timeout", "job_pids_max"}, "[agents]");
    AgentSettings& a = c.agents;
    for (auto [key, field] : {std::pair{"health_check", &a.health_check}, std::pair{"prolog", &a.prolog},
                              std::pair{"epilog", &a.epilog}}) {
      if (s) s = get_string(*t, key, *field);
      if (s && !field->empty() && (field->front() != '/' || access(field->c_str(), R_OK) != 0))
        s = where(*t->get(key), std::string("'") + key + "' must be an absolute path to a readable program: " + *field);
    }
    if (s) s = get_duration(*t, "health_interval", a.health_interval);
    if (s) s = get_duration(*t, "helper_timeout", a.helper_timeout);
    if (s) s = get_int(*t, "job_pids_max", 0, 1 << 22, a.job_pids_max);
    if (s && (a.health_interval < 1 || a.helper_timeout < 1))
      s = where(*t, "health_interval and helper_timeout must be at least 1 second");
    return s;
  }

  Status load_cluster(const toml::table& root, ClusterConfig& c) const {
    Status s;
    const toml::table* t = section(root, "cluster", s);
    if (!t) return s;
    if (s = check_keys(*t, {"name", "keys_dir", "operators", "allow_root_jobs", "private_jobs", "max_array_size", "mail_prog"},
                       "[cluster]");
        !s)
      return s;
    if (s = get_string(*t, "mail_prog", c.mail_prog); !s) return s;
    int64_t max_array = c.max_array_size;
    if (s = get_int(*t, "max_array_size", 1, 4000001, max_array); !s) return s;
    c.max_array_size = static_cast<int32_t>(max_array);
    if (s = get_bool(*t, "allow_root_jobs", c.allow_root_jobs); !s) return s;
    if (s = get_bool(*t, "private_jobs", c.private_jobs); !s) return s;
    if (s = get_strings(*t, "operators", c.operators); !s) return s;
    if (s = get_string(*t, "keys_dir", c.keys_dir); !s) return s;
    return get_string(*t, "name", c.name);
  }

  // [controller] http_*: plain HTTP on 127.0.0.1 only; not the RPC port.
  Status check_http(const toml::table& t, const ControllerConfig& c, int64_t port) const {
    if (c.http_port < 0) return Status::ok();
    std::string host = c.http_host.empty() ? c.host : c.http_host;
    if (c.http_plain && host != "127.0.0.1" && host != "localhost")
      return where(t, "http_plain = true serves plain HTTP on 127.0.0.1 only (set http_host = \"127.0.0.1\"), not on " + host);
    if (c.http_port != 0 && c.http_port == port && host == c.host)
      return where(t, "http_port " + std::to_string(c.http_port) + " is the controller's RPC port: give HTTP a port of its own");
    return Status::ok();
  }

  Status load_controller(const toml::table& root, ClusterConfig& c) const {
    Status s;
    const toml::table* t = section(root, "controller", s);
    if (!t) return s;
    s = check_keys(*t, {"host", "port", "state_dir", "auth_socket", "client_socket", "node_timeout", "handshake_timeout",
                        "client_idle_timeout", "max_connections", "max_connections_per_peer", "heartbeat_interval", "kill_wait",
                        "min_job_age", "snapshot_every", "dynamic_nodes", "return_to_service", "fence_timeout",
                        "inactive_limit", "http_port", "http_host", "http_plain", "metrics_public"}, "[controller]");
    int64_t port = c.controller.port, snap = c.snapshot_every, http_port = c.controller.http_port;
    if (s) s = get_string(*t, "host", c.controller.host);
    if (s) s = get_int(*t, "port", 0, 65535, port);
    if (s) s = get_int(*t, "http_port", -1, 65535, http_port);
    c.controller.http_port = static_cast<int32_t>(http_port);
    if (s) s = get_string(*t, "http_host", c.controller.http_host);
    if (s) s = get_bool(*t, "http_plain", c.controller.http_plain);
    if (s) s = get_bool(*t, "metrics_public", c.controller.metrics_public);
    if (s) s = check_http(*t, c.controller, port);
    if (s) s = get_string(*t, "state_dir", c.controller.state_dir);
    if (s) s = get_string(*t, "auth_socket", c.controller.auth_socket);
    if (s) s = get_string(*t, "client_socket", c.controller.client_socket);
    if (s) s = get_duration(*t, "node_timeout", c.node_timeout);
    if (s) s = get_duration(*t, "fence_timeout", c.fence_timeout);
    if (s) s = get_duration(*t, "handshake_timeout", c.handshake_timeout);
    if (s) s = get_duration(*t, "client_idle_timeout", c.client_idle_timeout);
    int64_t max_conn = c.max_connections, max_peer = c.max_connections_per_peer;
    if (s) s = get_int(*t, "max_connections", 1, 1000000, max_conn);
    if (s) s = get_int(*t, "max_connections_per_peer", 1, 1000000, max_peer);
    c.max_connections = static_cast<int32_t>(max_conn);
    c.max_connections_per_peer = static_cast<int32_t>(max_peer);
    if (s) s = get_duration(*t, "heartbeat_interval", c.heartbeat_interval);
    if (s) s = get_duration(*t, "kill_wait", c.kill_wait);
    if (s) s = get_duration(*t, "inactive_limit", c.inactive_limit);
    if (s) s = get_duration(*t, "min_job_age", c.min_job_age);
    if (s) s = get_bool(*t, "dynamic_nodes", c.dynamic_nodes);
    if (s) s = get_int32(*t, "return_to_service", 0, 2, c.return_to_service);
    if (s) s = get_int(*t, "snapshot_every", 100, 100000000, snap);
    c.controller.port = static_cast<int32_t>(port);
    c.snapshot_every = static_cast<int32_t>(snap);
    return s;
  }

  Status get_int32(const toml::table& t, const char* key, int64_t min, int64_t max, int32_t& out) const {
    int64_t v = out;
    Status s = get_int(t, key, min, max, v);
    out = static_cast<int32_t>(v);
    return s;
  }

  template <typename E>
  Status get_enum(const toml::table& t, const char* key, bool (*parse)(std::string_view, E&), const char* expected, E& out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::ok();
    if (!n->is_string() || !parse(**n->as_string(), out))
      return where(*n, std::string("'") + key + "' must be one of " + expected);
    return Status::ok();
  }

  Status load_scheduler(const toml::table& root, ClusterConfig& c) const {
    Status s;
    const toml::table* t = section(root, "scheduler", s);
    if (!t) return s;
    SchedulerConfig& k = c.scheduler;
    PriorityWeights& w = k.weights;
    s = check_keys(*t, {"policy", "sched_interval", "default_queue_depth", "bf_interval", "bf_window", "bf_resolution",
                        "bf_max_job_test", "bf_max_job_start", "bf_max_job_user", "bf_max_job_part",
                        "bf_job_part_count_reserve", "bf_min_age_reserve", "bf_min_prio_reserve", "bf_topopt_delay",
                        "bf_topopt_iterations", "max_switch_wait", "preempt_type",
                        "preempt_exempt_time", "priority_weight_age", "priority_weight_job_size",
                        "priority_weight_partition", "priority_weight_qos", "priority_weight_fairshare",
                        "priority_max_age", "priority_favor_small", "priority_decay_half_life",
                        "priority_calc_period", "fair_share", "fairshare_dampening_factor",
                        "priority_usage_reset_period"}, "[scheduler]");
    if (s) s = get_enum(*t, "policy", parse_sched_policy, "fifo, easy, backfill", k.policy);
    if (s) s = get_duration(*t, "sched_interval", k.sched_interval);
    if (s) s = get_int32(*t, "default_queue_depth", 1, 1000000, k.default_queue_depth);
    if (s) s = get_duration(*t, "bf_interval", k.bf_interval);
    if (s) s = get_duration(*t, "bf_window", k.bf_window);
    if (s) s = get_duration(*t, "bf_resolution", k.bf_resolution);
    if (s) s = get_int32(*t, "bf_max_job_test", 1, 1000000, k.bf_max_job_test);
    if (s) s = get_int32(*t, "bf_max_job_start", 0, 10000, k.bf_max_job_start);
    if (s) s = get_int32(*t, "bf_max_job_user", 0, 1000000, k.bf_max_job_user);
    if (s) s = get_int32(*t, "bf_max_job_part", 0, 1000000, k.bf_max_job_part);
    if (s) s = get_int32(*t, "bf_job_part_count_reserve", 0, 100000, k.bf_job_part_count_reserve);
    if (s) s = get_duration(*t, "bf_min_age_reserve", k.bf_min_age_reserve);
    if (s) s = get_int(*t, "bf_min_prio_reserve", 0, 4294967295LL, k.bf_min_prio_reserve);
    if (s) s = get_duration(*t, "bf_topopt_delay", k.bf_topopt_delay);
    if (s) s = get_int32(*t, "bf_topopt_iterations", 2, 30, k.bf_topopt_iterations);
    if (s) s = get_duration(*t, "max_switch_wait", k.max_switch_wait);
    if (s && t->get("max_switch_wait") && (k.max_switch_wait < 0 || (t->get("max_switch_wait")->is_string() && k.max_switch_wait == kUnlimited))) {
      bool zero = t->get("max_switch_wait")->is_string() && **t->get("max_switch_wait")->as_string() == "0";
      if (zero) k.max_switch_wait = 0;
      else s = where(*t->get("max_switch_wait"), "'max_switch_wait' must be 0 or more seconds (Slurm's SchedulerParameters=max_switch_wait)");
    }
    if (s) {
      std::string preempt = "none";
      s = get_string(*t, "preempt_type", preempt);
      if (s && preempt != "none" && preempt != "partition_prio")
        s = where(*t->get("preempt_type"), "'preempt_type' must be \"none\" or \"partition_prio\"");
      k.preempt_partition_prio = preempt == "partition_prio";
    }
    if (s) s = get_duration(*t, "preempt_exempt_time", k.preempt_exempt_time);
    if (s) s = get_int(*t, "priority_weight_age", 0, 4294967295LL, w.age);
    if (s) s = get_int(*t, "priority_weight_job_size", 0, 4294967295LL, w.job_size);
    if (s) s = get_int(*t, "priority_weight_partition", 0, 4294967295LL, w.partition);
    if (s) s = get_int(*t, "priority_weight_qos", 0, 4294967295LL, w.qos);
    if (s) s = get_int(*t, "priority_weight_fairshare", 0, 4294967295LL, w.fairshare);
    if (s) s = get_duration(*t, "priority_max_age", w.max_age);
    if (s) s = get_bool(*t, "priority_favor_small", w.favor_small);
    if (s) s = get_duration(*t, "priority_decay_half_life", w.decay_half_life);
    if (s) s = get_duration(*t, "priority_calc_period", w.calc_period);
    if (s && w.calc_period < 1) s = where(*t->get("priority_calc_period"), "'priority_calc_period' must be at least 1 second");
    if (s && t->get("fair_share")) {
      std::string kind;
      s = get_string(*t, "fair_share", kind);
      if (s && kind != "fair_tree" && kind != "classic")
        s = where(*t->get("fair_share"), "'fair_share' must be \"fair_tree\" (the default) or \"classic\"");
      w.fair_share_classic = kind == "classic";
    }
    if (s) s = get_int(*t, "fairshare_dampening_factor", 1, 1000000, w.fair_share_dampening);
    if (s)
      s = get_enum(*t, "priority_usage_reset_period", parse_usage_reset, "none, daily, weekly, monthly, quarterly, yearly",
                   w.usage_reset);
    return s;
  }

  template <typename Fn>
  Status each_table(const toml::table& root, const char* key, Fn fn) const {
    const toml::node* n = root.get(key);
    if (!n) return Status::ok();
    const toml::array* arr = n->as_array();
    if (!arr) return where(*n, std::string("'") + key + "' must be written as [[" + key + "]] tables");
    for (const auto& e : *arr) {
      if (!e.is_table()) return where(e, std::string("[[") + key + "]] entries must be tables");
      if (Status s = fn(*e.as_table()); !s) return s;
    }
    return Status::ok();
  }

  Status load_nodes(const toml::table& root, ClusterConfig& c) const {
    return each_table(root, "node", [&](const toml::table& t) -> Status {
      NodeConfig n;
      Status s = check_keys(t, {"names", "cpus", "memory", "features", "weight", "boards", "sockets",
                                "cores_per_socket", "threads_per_core", "gres", "restricted_cores_per_gpu"}, "[[node]]");
      int64_t cpus = 0;
      if (s) s = get_int32(t, "weight", 0, 65533, n.weight);
      if (s) s = get_int32(t, "boards", 0, 1024, n.boards);
      if (s) s = get_int32(t, "sockets", 0, 1 << 16, n.sockets);
      if (s) s = get_int32(t, "cores_per_socket", 0, 1 << 16, n.cores_per_socket);
      if (s) s = get_int32(t, "threads_per_core", 0, 1024, n.threads_per_core);
      if (s) s = get_int32(t, "restricted_cores_per_gpu", 0, 1 << 16, n.restricted_cores_per_gpu);
      if (s) {
        std::string gres;
        s = get_string(t, "gres", gres);
        if (s) {
          auto parsed = parse_gres(gres);
          if (parsed) n.gres = std::move(parsed).value();
          else s = where(*t.get("gres"), "'gres': " + parsed.status().message());
          int64_t total = 0;
          for (const auto& g : n.gres) total += g.count;
          if (s && total > kMaxNodeGpus)
            s = where(*t.get("gres"), "'gres' gives " + std::to_string(total) + " GPUs; a node has at most " +
                                          std::to_string(kMaxNodeGpus));
        }
      }
      if (s) s = get_hostlist(t, "names", n.names_expr, n.names);
      if (s) s = get_int(t, "cpus", 0, 1 << 20, cpus);
      if (s) s = get_strings(t, "features", n.features);
      if (s) {
        if (const toml::node* m = t.get("memory")) {
          if (m->is_integer()) n.mem_mib = **m->as_integer();
          else if (auto v = m->is_string() ? parse_size_mib(**m->as_string()) : Result<int64_t>(invalid("must be a size like \"256G\""))) n.mem_mib = *v;
          else s = where(*m, "'memory' " + v.status().message());
        }
      }
      n.cpus = static_cast<int32_t>(cpus);
      if (s && cpus && n.sockets && n.cores_per_socket && n.threads_per_core) {
        int64_t layout = int64_t{n.sockets} * n.cores_per_socket * n.threads_per_core;
        if (cpus != layout)
          s = where(*t.get("cpus"), "'cpus' is " + std::to_string(cpus) + " but sockets x cores_per_socket x "
                                    "threads_per_core is " + std::to_string(layout));
      }
      if (s) c.nodes.push_back(std::move(n));
      return s;
    });
  }

  Status load_partitions(const toml::table& root, ClusterConfig& c) const {
    return each_table(root, "partition", [&](const toml::table& t) -> Status {
      PartitionConfig p;
      Status s = check_keys(t, {"name", "nodes", "default", "max_time", "default_time", "state", "max_nodes", "min_nodes",
                                "priority_tier", "priority_job_factor", "allow_accounts", "allow_groups",
                                "def_mem_per_cpu", "oversubscribe", "exclusive_topo", "preempt_mode", "grace_time", "qos",
                                "topology"},
                       "[[partition]]");
      if (s) s = get_string(t, "name", p.name);
      if (s && p.name.empty()) s = invalid(source_ + ":" + std::to_string(t.source().begin.line) + ": [[partition]] needs a name");
      if (s) {
        const toml::node* n = t.get("nodes");
        if (!n || !n->is_string()) s = where(t, "'nodes' (hostlists, feature{NAME} or ALL) is required");
        else if (p.nodes_expr = **n->as_string(); !(s = parse_partition_nodes(p.nodes_expr, p)))
          s = where(*n, "'nodes': " + s.message());
      }
      if (s) s = get_bool(t, "default", p.is_default);
      if (s) s = get_duration(t, "max_time", p.max_time);
      if (s) s = get_duration(t, "default_time", p.default_time);
      if (s) s = get_enum(t, "state", parse_partition_state, "UP, DOWN, DRAIN, INACTIVE", p.state);
      if (s) s = get_int32(t, "max_nodes", 0, 65536, p.max_nodes);
      if (s) s = get_int32(t, "min_nodes", 0, 65536, p.min_nodes);
      if (s) s = get_int32(t, "priority_tier", 0, 65533, p.priority_tier);
      if (s) s = get_int32(t, "priority_job_factor", 0, 65533, p.priority_job_factor);
      if (s) s = get_strings(t, "allow_accounts", p.allow_accounts);
      if (s) s = get_strings(t, "allow_groups", p.allow_groups);
      if (s) {
        if (const toml::node* m = t.get("def_mem_per_cpu")) {
          auto v = m->is_string() ? parse_size_mib(**m->as_string())
                                  : m->is_integer() ? Result<int64_t>(**m->as_integer()) : Result<int64_t>(invalid("must be a size like \"2G\""));
          if (v) p.def_mem_per_cpu_mib = *v;
          else s = where(*m, "'def_mem_per_cpu' " + v.status().message());
        }
      }
      if (s) {
        std::string over = "NO";
        s = get_string(t, "oversubscribe", over);
        if (s && over != "NO" && over != "EXCLUSIVE")
          s = where(*t.get("oversubscribe"), "'oversubscribe' must be \"NO\" or \"EXCLUSIVE\"");
        p.exclusive = over == "EXCLUSIVE";
      }
      if (s) s = get_bool(t, "exclusive_topo", p.exclusive_topo);
      if (s) s = get_enum(t, "preempt_mode", parse_preempt_mode, "OFF, CANCEL, REQUEUE", p.preempt_mode);
      if (s) s = get_duration(t, "grace_time", p.grace_time);
      if (s) s = get_string(t, "qos", p.qos);
      if (s) s = get_string(t, "topology", p.topology);
      if (s) c.partitions.push_back(std::move(p));
      return s;
    });
  }

  std::string source_;
};

// hq configs are ASCII without control characters (tab and line ends aside), checked
// before toml++ sees the text: Debian's toml++ 3.3.0 reaches TOML_UNREACHABLE (undefined
// behaviour) when it classifies some non-ASCII characters, in bare positions and, after a
// syntax error, anywhere (found by tests/fuzz/fuzz_config).
Status precheck_toml(const std::string& text, const std::string& source) {
  int line = 1;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n') ++line;
    else if (c >= 0x80) return invalid(source + ":" + std::to_string(line) + ": non-ASCII character (hq configs are ASCII)");
    else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
      return invalid(source + ":" + std::to_string(line) + ": control character in config");
  }
  return Status::ok();
}

}  // namespace

Result<ClusterConfig> load_config_text(const std::string& text, const std::string& source_name) {
  if (Status s = precheck_toml(text, source_name); !s) return s;
  try {
    toml::table root = toml::parse(text, source_name);
    return Loader(source_name).load(root);
  } catch (const toml::parse_error& e) {
    return invalid(source_name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

Result<ClusterConfig> load_config_file(const std::string& path) {
  std::error_code ec;
  auto kind = std::filesystem::status(path, ec).type();
  if (kind == std::filesystem::file_type::not_found) return not_found("cannot read config file " + path);
  if (kind != std::filesystem::file_type::regular)  // a directory opens, and reads as an empty config
    return invalid("config file " + path + " is not a regular file");
  std::ifstream in(path);
  if (!in) return not_found("cannot read config file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error("cannot read config file " + path);
  auto cfg = load_config_text(ss.str(), path);
  if (cfg) cfg->text = ss.str();
  return cfg;
}

}  // namespace hq::cmd
