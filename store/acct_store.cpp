// model_change (see acct_store.hpp).
#include "store/acct_store.hpp"

namespace hq::store {

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
