// When the controller runs which scheduling pass. Events (a submit, a job end, a node
// change) want both passes: the quick pass (the first default_queue_depth jobs, strict
// order) and the full pass (the whole queue with backfill). A pass holds the event loop,
// and every request that comes meanwhile waits for it, so passes are paced by what they
// last cost: passes of both kinds together take at most about a third of the loop (no
// pass starts sooner than twice the last one's cost after it ended), and a full pass that
// took more than a millisecond is followed by the next no sooner than twenty times its
// cost after it ended (full passes then take at most a twentieth of the loop). A pass of
// a small queue costs tens of microseconds and runs at once, as before; one of 100,000
// pending jobs costs several milliseconds, and a stream of submissions then meets a full
// pass a few times a second instead of at every other request. A full pass is due right after an event if its pacing allows; otherwise a
// quick pass runs first and the full pass follows when allowed. The 1 s tick wants a
// quick pass, and a full pass once bf_interval has passed without one.
// Pure: the caller passes monotonic seconds. Not thread-safe (a plain value).
#pragma once

namespace hq {

enum class PassKind { kQuick, kFull };

struct PassTimes {
  double end = -1e18;   // when the last pass of this kind ended
  double cost = 0;      // how long it took
  // The earliest the next pass may start, `times` its cost after it ended.
  double ready(double times) const { return end + times * cost; }
};

struct PassPacing {
  static constexpr double kAnyPassGap = 2;      // after any pass: passes take <= 1/3 of the loop
  static constexpr double kLongFullPass = 1e-3;  // seconds: a full pass longer than this...
  static constexpr double kLongFullPassGap = 20;  // ...is followed by the next after 20x its cost

  PassTimes quick, full;
  PassTimes last;  // the last pass of either kind
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
