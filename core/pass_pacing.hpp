// When the controller runs which scheduling pass. Events (a submit, a job end, a node
// change) want both passes: the quick pass (the first default_queue_depth jobs, strict
// order) and the full pass (the whole queue with backfill). Each kind is paced so that
// it takes at most about a third of the loop: it runs again no sooner than twice its
// last cost after it last ended. A full pass is due right after an event if its pacing
// allows; otherwise a quick pass runs first and the full pass follows when allowed. The
// 1 s tick wants a quick pass, and a full pass once bf_interval has passed without one.
// Pure: the caller passes monotonic seconds. Not thread-safe (a plain value).
#pragma once

namespace hq {

enum class PassKind { kQuick, kFull };

struct PassTimes {
  double end = -1e18;   // when the last pass of this kind ended
  double cost = 0;      // how long it took
  double ready() const { return end + 2 * cost; }
};

struct PassPacing {
  PassTimes quick, full;
  bool quick_wanted = false, full_wanted = false;

  void on_event() { quick_wanted = full_wanted = true; }
  void on_tick(double now, double bf_interval);
  // Records a pass that ran from `start` to `end`.
  void ran(PassKind kind, double start, double end);
};

struct NextPass {
  bool any = false;     // false: nothing is wanted
  PassKind kind = PassKind::kQuick;
  double at = 0;        // when to run it (monotonic seconds)
};

NextPass next_pass(const PassPacing& p, double now);

}  // namespace hq
