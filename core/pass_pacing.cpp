#include "core/pass_pacing.hpp"

#include <algorithm>

namespace hq {

void PassPacing::on_tick(double now, double bf_interval) {
  quick_wanted = true;
  if (now - full.end >= bf_interval) full_wanted = true;
}

void PassPacing::ran(PassKind kind, double start, double end) {
  PassTimes& t = kind == PassKind::kFull ? full : quick;
  t.end = end;
  t.cost = std::max(0.0, end - start);
  last = t;
  quick_wanted = false;  // a full pass looks at the head of the queue too
  if (kind == PassKind::kFull) full_wanted = false;
}

NextPass next_pass(const PassPacing& p, double now) {
  double any_at = std::max(now, p.last.ready(PassPacing::kAnyPassGap));
  double full_gap = p.full.cost > PassPacing::kLongFullPass ? PassPacing::kLongFullPassGap : PassPacing::kAnyPassGap;
  double full_at = std::max(any_at, p.full.ready(full_gap));
  if (p.full_wanted && full_at <= now) return {true, PassKind::kFull, now};
  if (p.quick_wanted) {
    double quick_at = any_at;  // paced by the last pass, whichever kind it was
    if (p.full_wanted && full_at <= quick_at) return {true, PassKind::kFull, full_at};
    return {true, PassKind::kQuick, quick_at};
  }
  if (p.full_wanted) return {true, PassKind::kFull, full_at};
  return {};
}

}  // namespace hq
