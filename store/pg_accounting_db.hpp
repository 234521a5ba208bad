// The accounting store's PostgreSQL backend (an AcctStore), for large and multi-cluster
// sites: the same tables, keys and selections as the SQLite one (store/acct_sql.hpp), in
// a database that many clusters' controllers or `hq accounting` daemons share, with read
// replicas and failover through libpq's multi-host connection strings
// (`host=db1,db2 target_session_attrs=read-write`). Job rows of a batch go in one multi-row
// upsert (COPY into a staging table; a batch's several records of one job folded into its last), in one transaction
// with the source's last seq; a commit returns once PostgreSQL has it durable
// (synchronous_commit). A connection lost is made again at the next call.
// libpq is linked statically (third_party/pq_shim.c stands in for GSSAPI and LDAP).
// Threads: one owner thread (the accounting worker); not thread-safe.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "store/acct_sql.hpp"
#include "store/acct_store.hpp"

struct pg_conn;

namespace hq::store {

class PgResult;

class PgAccountingDb final : public AcctStore {
 public:
  // `conninfo`: a libpq connection string or URI (checked here). Connects at first use,
  // making the tables where missing.
  static Result<std::unique_ptr<PgAccountingDb>> open(const std::string& conninfo);
  ~PgAccountingDb() override;
  PgAccountingDb(const PgAccountingDb&) = delete;
  PgAccountingDb& operator=(const PgAccountingDb&) = delete;

  std::string where() const override { return where_; }
  Result<int64_t> shipped(const std::string& source) override;
  Result<int64_t> apply(const std::string& source, const std::vector<AcctJob>& jobs) override;
  Result<std::vector<std::string>> query(const AcctJobQuery& q, std::vector<std::string>* steps = nullptr) override;
  Result<int64_t> count() override;
  Result<std::vector<std::string>> node_spans(const AcctJobQuery& q) override;
  Result<ModelRows> load_model() override;
  Status save_model(const ModelRows& before, const ModelRows& next) override;

 private:
  explicit PgAccountingDb(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  Status connect();
  // Connected, and the tables made (once per store).
  Status ready();
  Status create_schema();
  // Runs `sql` (`?` placeholders) with `binds`; results in binary form.
  Result<PgResult> exec(const std::string& sql, const std::vector<Bind>& binds, const char* what);
  Status run(const std::string& sql, const std::vector<Bind>& binds, const char* what);
  // Runs `body` between BEGIN and COMMIT (ROLLBACK when it fails).
  template <typename Body>
  Status in_transaction(Body body);
  // Step rows, or nodes' spans (`spans`), as parameters of multi-row upserts.
  Status upsert_rows(const std::vector<const AcctJob*>& rows, bool spans);
  Status copy_job_rows(const std::vector<const AcctJob*>& rows);
  Status steps_of(const std::string& cluster, const std::vector<std::pair<int64_t, int64_t>>& keys,
                  std::vector<std::string>& out);

  std::string conninfo_, where_;
  pg_conn* conn_ = nullptr;
  bool schema_ready_ = false;
  int64_t written_since_analyze_ = 0, rows_at_analyze_ = 0;
};

}  // namespace hq::store
