#include "cmd/agent/pmix_server.hpp"

#include <asio/post.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <pmix.h>
#include <pmix_server.h>

#include "cmd/agent/probe.hpp"

namespace hq::cmd {
namespace {

// The server PMIx calls back: set before PMIx_server_init, cleared after PMIx_server_finalize
// (which stops PMIx's thread), so the callbacks never see it change.
PmixServer* g_server = nullptr;

Status pmix_error(const std::string& what, pmix_status_t rc) {
  return internal(what + ": " + PMIx_Error_string(rc));
}

bool ok(pmix_status_t rc) { return rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED; }

// A PMIx info list, released when it goes; `to_array` makes the pmix_info_t array PMIx takes.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() { PMIx_Info_list_release(list_); }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  void add(const char* key, const void* value, pmix_data_type_t type) { PMIx_Info_list_add(list_, key, value, type); }
  void str(const char* key, const std::string& v) { add(key, v.c_str(), PMIX_STRING); }
  void u32(const char* key, uint32_t v) { add(key, &v, PMIX_UINT32); }
  void u16(const char* key, uint16_t v) { add(key, &v, PMIX_UINT16); }
  void rank(const char* key, pmix_rank_t v) { add(key, &v, PMIX_PROC_RANK); }
  void flag(const char* key, bool v) { add(key, &v, PMIX_BOOL); }
  // As a PMIX_DATA_ARRAY value under `key` of `into`.
  void nest_into(InfoList& into, const char* key) {
    pmix_data_array_t array;
    PMIx_Info_list_convert(list_, &array);
    into.add(key, &array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&array);
  }
  pmix_data_array_t to_array() {
    pmix_data_array_t array;
    PMIx_Info_list_convert(list_, &array);
    return array;
  }

 private:
  void* list_;
};

// PMIx's regex of a comma-separated list ("pmix[e[1:1-3]]"); the plain list if it has none.
std::string regex_of(const std::string& csv, pmix_status_t (*make)(const char*, char**)) {
  char* out = nullptr;
  if (make(csv.c_str(), &out) != PMIX_SUCCESS || !out) return csv;
  std::string s(out);
  std::free(out);
  return s;
}

void add_rank(InfoList& job, const PmixStepMap& map, uint32_t rank) {
  const PmixRank& where = map.ranks[rank];
  InfoList r;
  r.rank(PMIX_RANK, rank);
  r.u32(PMIX_APPNUM, 0);
  r.rank(PMIX_GLOBAL_RANK, rank);
  r.rank(PMIX_APP_RANK, rank);
  r.u16(PMIX_LOCAL_RANK, where.local_rank);
  r.u16(PMIX_NODE_RANK, where.local_rank);
  r.str(PMIX_HOSTNAME, map.hosts.at(where.node));
  r.u32(PMIX_NODEID, where.node);
  r.nest_into(job, PMIX_PROC_DATA);
}

// The job-level keys of Slurm's mpi/pmix and flux-pmix, and every rank's data.
void add_job(InfoList& job, const PmixStepMap& map, const std::string& tmpdir) {
  auto size = static_cast<uint32_t>(map.ranks.size());
  job.str(PMIX_JOBID, map.job_id);
  job.flag(PMIX_SPAWNED, false);
  job.str(PMIX_TMPDIR, tmpdir);
  job.str(PMIX_NSDIR, tmpdir);
  job.flag(PMIX_TDIR_RMCLEAN, true);
  job.u32(PMIX_UNIV_SIZE, size);
  job.u32(PMIX_JOB_SIZE, size);
  job.u32(PMIX_MAX_PROCS, size);
  job.u32(PMIX_APP_SIZE, size);
  job.u32(PMIX_JOB_NUM_APPS, 1);
  job.u32(PMIX_APPNUM, 0);
  job.u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(map.local.size()));
  job.u32(PMIX_NODE_SIZE, static_cast<uint32_t>(map.local.size()));
  job.str(PMIX_LOCAL_PEERS, map.local_peers);
  if (!map.local.empty()) job.rank(PMIX_LOCALLDR, map.local.front());
  job.str(PMIX_NODE_MAP, regex_of(map.nodes, PMIx_generate_regex));
  job.str(PMIX_PROC_MAP, regex_of(map.proc_map, PMIx_generate_ppn));
  for (uint32_t rank = 0; rank < size; ++rank) add_rank(job, map, rank);
}

std::vector<std::string> take_env(char** env) {
  std::vector<std::string> out;
  for (char** e = env; e && *e; ++e) {
    out.emplace_back(*e);
    std::free(*e);
  }
  std::free(env);
  return out;
}

}  // namespace

// PMIx's calls into the host, on PMIx's progress thread: copy, post, return.
struct PmixCallbacks {
  static pmix_status_t fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char* data,
                             size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
    PmixServer* server = g_server;
    if (!server || nprocs == 0) return PMIX_ERR_NOT_SUPPORTED;
    std::string nspace(procs[0].nspace), blob(data ? data : "", data ? ndata : 0);
    PmixServer::FenceReply reply = [cbfunc, cbdata](bool good, const std::string& all) {
      char* copy = static_cast<char*>(std::malloc(all.size() + 1));
      if (copy) std::memcpy(copy, all.data(), all.size());
      cbfunc(good && copy ? PMIX_SUCCESS : PMIX_ERROR, copy, copy ? all.size() : 0, cbdata, std::free, copy);
    };
    asio::post(server->io_, [nspace, blob = std::move(blob), reply = std::move(reply)]() mutable {
      if (g_server && g_server->events_.fence) g_server->events_.fence(nspace, std::move(blob), std::move(reply));
      else reply(false, "");
    });
    return PMIX_SUCCESS;
  }

  static pmix_status_t abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[], size_t,
                             pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (PmixServer* server = g_server) {
      std::string nspace(proc->nspace), message(msg ? msg : "");
      asio::post(server->io_, [nspace, status, message] {
        if (g_server && g_server->events_.abort) g_server->events_.abort(nspace, status, message);
      });
    }
    if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);  // as Slurm: the rank goes on to exit
    return PMIX_SUCCESS;
  }

  // A client's PMIx_Init (connected) and PMIx_Finalize, both done at once.
  static void client(const pmix_proc_t* proc, bool finalized) {
    PmixServer* server = g_server;
    if (!server || !proc) return;
    std::string nspace(proc->nspace);
    uint32_t rank = proc->rank;
    asio::post(server->io_, [nspace, rank, finalized] {
      if (g_server && g_server->events_.client) g_server->events_.client(nspace, rank, finalized);
    });
  }
  static pmix_status_t connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
    client(proc, false);
    return PMIX_OPERATION_SUCCEEDED;
  }
  static pmix_status_t finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
    client(proc, true);
    return PMIX_OPERATION_SUCCEEDED;
  }

  static pmix_status_t direct_modex(const pmix_proc_t*, const pmix_info_t[], size_t, pmix_modex_cbfunc_t, void*) {
    return PMIX_ERR_NOT_SUPPORTED;  // every fence collects the data (Open MPI's default)
  }
};

PmixServer::PmixServer(asio::io_context& io, std::string dir, std::string node, Events events)
    : io_(io), dir_(std::move(dir)), node_(std::move(node)), events_(std::move(events)) {}

PmixServer::~PmixServer() {
  if (!started_) return;
  PMIx_server_finalize();
  g_server = nullptr;
}

Status PmixServer::start() {
  if (started_) return Status::ok();
  if (g_server) return internal("a PMIx server already runs in this process");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);  // what steps of an earlier agent left (steps end with their agent)
  std::filesystem::create_directories(dir_, ec);
  if (ec) return io_error("cannot create " + dir_ + ": " + ec.message());
  forbid_hwloc_plugins();
  setenv("PMIX_MCA_gds", "hash", 1);
  setenv("PMIX_MCA_psec", "native", 1);
  static pmix_server_module_t module{};
  module.fence_nb = PmixCallbacks::fence;
  module.abort = PmixCallbacks::abort;
  module.direct_modex = PmixCallbacks::direct_modex;
  module.client_connected = PmixCallbacks::connected;
  module.client_finalized = PmixCallbacks::finalized;
  InfoList info;
  info.str(PMIX_SERVER_TMPDIR, dir_);
  info.str(PMIX_SYSTEM_TMPDIR, dir_);
  info.str(PMIX_HOSTNAME, node_);
  pmix_data_array_t array = info.to_array();
  g_server = this;
  pmix_status_t rc = PMIx_server_init(&module, static_cast<pmix_info_t*>(array.array), array.size);
  PMIX_DATA_ARRAY_DESTRUCT(&array);
  if (rc != PMIX_SUCCESS) {
    g_server = nullptr;
    return pmix_error("PMIx_server_init", rc);
  }
  started_ = true;
  return Status::ok();
}

Result<std::vector<std::vector<std::string>>> PmixServer::add(const PmixStepMap& map, const std::string& tmpdir,
                                                               uid_t uid, gid_t gid) {
  if (!started_) return internal("the PMIx server is not running");
  InfoList job;
  add_job(job, map, tmpdir);
  pmix_data_array_t array = job.to_array();
  pmix_status_t rc = PMIx_server_register_nspace(map.nspace.c_str(), static_cast<int>(map.local.size()),
                                                 static_cast<pmix_info_t*>(array.array), array.size, nullptr, nullptr);
  PMIX_DATA_ARRAY_DESTRUCT(&array);
  if (!ok(rc)) return pmix_error("PMIx_server_register_nspace " + map.nspace, rc);
  std::vector<std::vector<std::string>> envs;
  for (uint32_t rank : map.local) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, map.nspace.c_str(), rank);
    rc = PMIx_server_register_client(&proc, uid, gid, nullptr, nullptr, nullptr);
    char** env = nullptr;
    if (ok(rc)) rc = PMIx_server_setup_fork(&proc, &env);
    std::vector<std::string> vars = take_env(env);
    if (!ok(rc)) {
      remove(map.nspace);
      return pmix_error("PMIx client " + map.nspace + ":" + std::to_string(rank), rc);
    }
    envs.push_back(std::move(vars));
  }
  return envs;
}

void PmixServer::remove(const std::string& nspace) {
  if (started_) PMIx_server_deregister_nspace(nspace.c_str(), nullptr, nullptr);
}

}  // namespace hq::cmd
