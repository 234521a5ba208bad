// model_change and the choice of backend (see acct_store.hpp).
#include "store/acct_store.hpp"

#include "store/accounting_db.hpp"
#include "store/pg_accounting_db.hpp"

namespace hq::store {

bool is_postgres_uri(const std::string& path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<AcctStore>> open_acct_store(const std::string& path) {
  if (is_postgres_uri(path)) {
    auto db = PgAccountingDb::open(path);
    if (!db) return db.status();
    return std::unique_ptr<AcctStore>(std::move(db).value());
  }
  auto db = AccountingDb::open(path);
  if (!db) return db.status();
  return std::unique_ptr<AcctStore>(std::move(db).value());
}

std::pair<AcctStore::ModelRows, AcctStore::ModelRows> model_change(const AcctStore::ModelRows& before,
                                                                   const AcctStore::ModelRows& next) {
  std::pair<AcctStore::ModelRows, AcctStore::ModelRows> out;
  for (const auto& [key, bytes] : before) {
    auto it = next.find(key);
    if (it == next.end() || it->second != bytes) out.first.emplace(key, bytes);
  }
  for (const auto& [key, bytes] : next) {
    auto it = before.find(key);
    if (it == before.end() || it->second != bytes) out.second.emplace(key, bytes);
  }
  return out;
}

}  // namespace hq::store
