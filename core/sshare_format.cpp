#include "core/sshare_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "core/units.hpp"

namespace hq {
namespace {

enum class Col { kAccount, kCluster, kEffUsage, kFairShare, kGrpTresMins, kGrpTresRaw, kId, kLevelFs, kNormShares,
                 kNormUsage, kPartition, kRawShares, kRawUsage, kTresRunMins, kUser };

struct Field {
  const char* name;
  int width;  // negative: left-justified
  Col col;
};

// Slurm's table, in its order: a --format name matches the first field it is a prefix of.
constexpr Field kFields[] = {
    {"Account", -20, Col::kAccount},      {"Cluster", 10, Col::kCluster},     {"EffectvUsage", 13, Col::kEffUsage},
    {"FairShare", 10, Col::kFairShare},   {"GrpTRESMins", 30, Col::kGrpTresMins}, {"GrpTRESRaw", 30, Col::kGrpTresRaw},
    {"ID", 6, Col::kId},                  {"LevelFS", 10, Col::kLevelFs},     {"NormShares", 11, Col::kNormShares},
    {"NormUsage", 11, Col::kNormUsage},   {"Partition", 12, Col::kPartition}, {"RawShares", 10, Col::kRawShares},
    {"RawUsage", 11, Col::kRawUsage},     {"TRESRunMins", 30, Col::kTresRunMins}, {"User", 10, Col::kUser},
};

Result<std::vector<Field>> columns(const ShareOptions& opt) {
  std::string list = opt.format;
  if (list.empty()) {
    std::string part = opt.partitions ? "P," : "";
    list = opt.long_format ? "A,User," + part + "RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,GrpTRESMins,TRESRunMins"
                           : "A,User," + part + "RawShares,NormShares,RawUsage,Eff,Fairshare";
  }
  std::vector<Field> out;
  for (std::string item : split_list(list)) {
    int width = 0;
    if (size_t pct = item.find('%'); pct != std::string::npos) {
      width = static_cast<int>(std::clamp(std::strtol(item.c_str() + pct + 1, nullptr, 10), -4096L, 4096L));
      item.resize(pct);
    }
    width = std::clamp(width, -4096, 4096);  // the controller does not print here, but a client should not either
    const Field* found = nullptr;
    for (const Field& f : kFields) {
      std::string_view name(f.name);
      if (item.size() <= name.size() && to_lower(name.substr(0, item.size())) == to_lower(item)) {
        found = &f;
        break;
      }
    }
    if (!found || item.empty()) return invalid("Invalid field requested: \"" + item + "\"");
    Field f = *found;
    if (width) f.width = width;
    out.push_back(f);
  }
  return out;
}

std::string fixed6(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

// A cell's text, or nullopt-like "\x01" for Slurm's blank (an unset number).
constexpr const char* kBlank = "\x01";

std::string cell(const ShareRow& r, Col col, const ShareOptions& opt) {
  bool root = r.depth == 0 && r.user.empty() && r.account == "root";
  bool user = !r.user.empty();
  switch (col) {
    case Col::kAccount: return (opt.users_only ? "" : std::string(static_cast<size_t>(r.depth), ' ')) + r.account;
    case Col::kCluster: return opt.cluster;
    case Col::kEffUsage: return fixed6(r.effective_usage);
    case Col::kFairShare: return user ? fixed6(r.fair_share) : kBlank;
    case Col::kGrpTresMins: return r.grp_tres_mins;
    case Col::kGrpTresRaw: return "";
    case Col::kId: return std::to_string(r.assoc);
    case Col::kLevelFs: return root || r.raw_shares == kSharesParent ? kBlank : fixed6(r.level_fs);
    case Col::kNormShares: return fixed6(r.norm_shares);
    case Col::kNormUsage: return root ? kBlank : fixed6(r.norm_usage);
    case Col::kPartition: return r.partition;
    case Col::kRawShares:
      if (root) return kBlank;
      return r.raw_shares == kSharesParent ? "parent" : std::to_string(r.raw_shares);
    case Col::kRawUsage: return std::to_string(static_cast<long long>(r.raw_usage));
    case Col::kTresRunMins: return r.tres_run_mins;
    case Col::kUser: return r.user;
  }
  return "";
}

void put(std::string& out, const Field& f, std::string text, bool last, const ShareOptions& opt) {
  if (text == kBlank) text.clear();
  if (opt.parsable2) {
    out += text;
    if (!last) out += '|';
    return;
  }
  if (opt.parsable) {
    out += text + '|';
    return;
  }
  auto width = static_cast<size_t>(std::abs(f.width));
  if (text.size() > width && width > 0) text = text.substr(0, width - 1) + "+";
  std::string pad(width > text.size() ? width - text.size() : 0, ' ');
  out += f.width < 0 ? text + pad : pad + text;
  out += ' ';
}

}  // namespace

std::vector<ShareRow> sshare_rows(const std::vector<ShareRow>& all, const ShareOptions& opt) {
  auto user_shown = [&](const ShareRow& r) {
    if (opt.all) return true;
    if (!opt.users.empty()) return std::find(opt.users.begin(), opt.users.end(), r.user) != opt.users.end();
    return r.user == opt.caller;
  };
  std::vector<ShareRow> out;
  if (opt.accounts.empty()) {
    for (const ShareRow& r : all)
      if (r.user.empty() ? !opt.users_only : user_shown(r)) out.push_back(r);
    return out;
  }
  for (const std::string& account : opt.accounts) {
    for (const ShareRow& r : all) {
      if (r.account != account) continue;
      ShareRow shown = r;
      if (r.user.empty()) {
        if (opt.users_only) continue;
        shown.depth = 0;
      } else {
        if (!user_shown(r)) continue;
        shown.depth = 1;
      }
      out.push_back(shown);
    }
  }
  return out;
}

Result<std::string> render_sshare(const std::vector<ShareRow>& all, const ShareOptions& opt) {
  auto cols = columns(opt);
  if (!cols) return cols.status();
  std::string out;
  if (!opt.noheader) {
    for (size_t i = 0; i < cols->size(); ++i) put(out, (*cols)[i], (*cols)[i].name, i + 1 == cols->size(), opt);
    out += '\n';
    if (!opt.parsable && !opt.parsable2) {
      for (const Field& f : *cols) out += std::string(static_cast<size_t>(std::abs(f.width)), '-') + ' ';
      out += '\n';
    }
  }
  for (const ShareRow& r : sshare_rows(all, opt)) {
    for (size_t i = 0; i < cols->size(); ++i) put(out, (*cols)[i], cell(r, (*cols)[i].col, opt), i + 1 == cols->size(), opt);
    out += '\n';
  }
  return out;
}

std::string sshare_helpformat() {
  std::string out;
  size_t n = 0, count = std::size(kFields);
  for (const Field& f : kFields) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-17s", f.name);
    out += buf;
    ++n;
    out += n % 4 == 0 || n == count ? '\n' : ' ';
  }
  return out;
}

}  // namespace hq
