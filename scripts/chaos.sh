#!/usr/bin/env bash
# Chaos suite: a private `hq local` cluster under a steady load of submissions, cancels and
# short jobs, while its controller and agents are killed with -9 at random moments (and,
# where possible, its state disk filled and some agents' links cut by a flaky proxy).
# Then it checks the invariants (docs/robustness.md) and prints a summary with figures:
# no acknowledged job lost, no duplicate job from a retried submission, no job ran twice at
# once, every node back in service within 2 s, every job ended with the right state and
# exit code. Exit 0 only if all hold. Builds nothing: uses build/hq or $HQ_BIN.
#
#   scripts/chaos.sh                                  # a brief run (about a minute)
#   scripts/chaos.sh --duration 3600 --nodes 4        # a long one
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/chaos.sh [--duration SECONDS] [--nodes N] [--controller-kills K] [--agent-kills K]
                        [--submitters N] [--cpus C] [--seed N] [--drain-timeout SECONDS]
                        [--no-disk-full] [--no-proxy] [--dir DIR]
  --duration         seconds of load and kills (default 60)
  --nodes            local agents (default 3); --cpus per node (default 4)
  --controller-kills kill -9 episodes of the controller (default: one per 20 s); a third
                     of them kill it twice in a row, the second time while agents re-register
  --agent-kills      kill -9 of a random agent during the run (default: one per 15 s)
  --submitters       concurrent submission loops (default 3)
  --seed             seed of the random choices (default: random; printed)
  --drain-timeout    bound on the wait for every job to end after the load (default 90)
  --no-disk-full     skip the full-disk episode (needs root and tmpfs otherwise)
  --no-proxy         skip the agent behind a flaky proxy (needs python3 otherwise)
  --dir              work directory (default: <dir of hq>/chaos, wiped at start)
Environment: HQ_BIN (default build/hq, or $HQ_BUILD_DIR/hq).
EOF
}

# ---- options ----------------------------------------------------------------------------
duration=60 nodes=3 cpus=4 ctl_kills="" agent_kills="" submitters=3 seed=$((RANDOM * 32768 + RANDOM))
drain_timeout=90 want_disk_full=1 want_proxy=1 work=""
while [ $# -gt 0 ]; do
  case $1 in
    --duration|--nodes|--cpus|--controller-kills|--agent-kills|--submitters|--seed|--drain-timeout|--dir)
      [ $# -ge 2 ] || { echo "chaos: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --duration) duration=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --cpus) cpus=$2; shift ;;
    --controller-kills) ctl_kills=$2; shift ;;
    --agent-kills) agent_kills=$2; shift ;;
    --submitters) submitters=$2; shift ;;
    --seed) seed=$2; shift ;;
    --drain-timeout) drain_timeout=$2; shift ;;
    --no-disk-full) want_disk_full=0 ;;
    --no-proxy) want_proxy=0 ;;
    --dir) work=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
ctl_kills=${ctl_kills:-$(( duration / 20 > 0 ? duration / 20 : 1 ))}
agent_kills=${agent_kills:-$(( duration / 15 > 0 ? duration / 15 : 1 ))}
for v in duration nodes cpus submitters seed drain_timeout ctl_kills agent_kills; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "chaos: $v must be a number" >&2; exit 2; }
done
[ "$nodes" -ge 1 ] && [ "$cpus" -ge 1 ] && [ "$submitters" -ge 1 ] || { echo "chaos: nodes, cpus, submitters >= 1" >&2; exit 2; }
RANDOM=$seed

root=$(cd "$(dirname "$0")/.." && pwd)
hq=${HQ_BIN:-${HQ_BUILD_DIR:-$root/build}/hq}
hq=$(realpath "$hq" 2>/dev/null || echo "$hq")
[ -x "$hq" ] || { echo "chaos: no hq binary at $hq (scripts/build.sh, or set HQ_BIN)" >&2; exit 2; }
work=${work:-$(dirname "$hq")/chaos}

# A private cluster: nothing from the caller's environment may point clients elsewhere.
unset HQ_CONTROLLER HQ_CONFIG HQ_CA_FILE HQ_AUTH_SOCKET HQ_SECRET_FILE HQ_WAIT_FOR_CONTROLLER
export HQ_HOME=$work/home
local_dir=$HQ_HOME/local
rec=$work/records        # what the load and the kills did, read by the final check
return_bound=10          # seconds a node may take to come back before it counts as not back
node_timeout=8           # the cluster's node_timeout (hq local has 30 s): outages longer than
                         # it fit in a short run
mounted=""               # the tmpfs under the controller's state, when we mounted one
bg_pids=()               # every background process we started
prepared=0               # the work dir is ours: cleanup may act

# ---- small helpers ----------------------------------------------------------------------
now_us() { echo "${EPOCHREALTIME/./}"; }
t0_us=$(now_us)
elapsed() { local us=$(( $(now_us) - t0_us )); printf '%d.%03d' $((us / 1000000)) $((us % 1000000 / 1000)); }
log() { echo "[chaos $(elapsed)s] $*"; }
event() { echo "$* $(elapsed)" >> "$rec/events.log"; }           # a line for the final check
rand() { echo $(( $1 + RANDOM % ($2 - $1 + 1) )); }                # integer in [lo, hi]
rsleep() { local ms; ms=$(rand "$1" "$2"); sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"; }  # ms range
hqc() { timeout 10 "$hq" "$@"; }                                   # a client call that cannot hang
skip() { echo "skipped: $*" | tee -a "$rec/skipped.log"; }         # an optional part that cannot run here

# Names of the nodes that are responding and not DOWN, one per line.
ok_nodes() {
  hqc nodes --json 2>/dev/null |
    awk -F'"' '/"name":/ {n = $4} /"state":/ {s = $4} /"responding": true/ && s !~ /DOWN/ {print n}' || true
}
# The pid `hq local status` lists for a daemon.
daemon_pid() { { "$hq" local status 2>/dev/null || true; } | awk -v n="$1" '$1 == n && $2 == "pid" {print $3}'; }
# Waits (bounded, seconds) until a command succeeds.
wait_until() {
  local bound=$1; shift
  local deadline=$(( $(now_us) + bound * 1000000 ))
  until "$@"; do
    [ "$(now_us)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
node_ok() { ok_nodes | grep -qx "$1"; }
all_ok() { local ok n; ok=$(ok_nodes); for n in "$@"; do grep -qx "$n" <<<"$ok" || return 1; done; }
node_not_ok() { ! node_ok "$1"; }
pid_gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# ---- cleanup: every process we started, even on failure ----------------------------------
cleanup() {
  local rc=$?
  set +e
  [ "$prepared" -eq 1 ] || exit "$rc"
  touch "$rec/stop" 2>/dev/null
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${bg_pids[@]}"; do
    wait_until 5 pid_gone "$p" || kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  "$hq" local stop >/dev/null 2>&1  # agents run with --kill-jobs-on-exit: their jobs go too
  # Jobs of an agent killed with -9 and not revived end by themselves within seconds.
  [ -n "$mounted" ] && { umount "$mounted" 2>/dev/null || umount -l "$mounted"; }
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the job every submission runs ------------------------------------------------------
# It proves it never runs twice at once: it holds an exclusive lock on a file named by its
# job id for its whole run (an flock, inherited by its children). A second run of the same
# job while any process of another still lives fails to take it and logs "double". (A
# marker file removed at the end would stay behind when a run is killed with SIGKILL,
# which a requeue may do; the lock dies with its last holder.)
job_script() {  # sleep_seconds exit_code
  local q_runs q_locks
  q_runs=$(printf %q "$rec/runs.log") q_locks=$(printf %q "$rec/locks")
  cat <<EOF
exec 9>>$q_locks/"\$SLURM_JOB_ID"
if flock -n 9; then s=start; else s=double; fi
echo "\$s \$SLURM_JOB_ID \$SLURM_RESTART_COUNT \$(date +%s.%N)" >> $q_runs
sleep $1
echo "end \$SLURM_JOB_ID \$SLURM_RESTART_COUNT \$(date +%s.%N)" >> $q_runs
exit $2
EOF
}

# ---- the load ---------------------------------------------------------------------------
# Submits until told to stop. Each submission has a unique name chaos-K-SEQ and exits with
# SEQ % 5 after a random 0.1-2.5 s; one in ten runs 5-20 s, so that kills and cancels also
# meet jobs in the middle of their run. A printed id is an acknowledgement; anything else
# (refused, controller down, acknowledgement lost to a kill) is recorded as unacknowledged.
submitter() {
  local k=$1 seq=0 name code secs out rc t1
  RANDOM=$((seed + k))
  while [ ! -e "$rec/stop" ]; do
    seq=$((seq + 1)) name="chaos-$k-$seq" code=$((seq % 5))
    if [ $((RANDOM % 10)) -eq 0 ]; then secs=$(rand 5000 20000); else secs=$(rand 100 2500); fi
    secs="$((secs / 1000)).$(printf %03d $((secs % 1000)))"
    t1=$(elapsed) rc=0
    out=$(hqc submit --parsable -J "$name" -o "$work/out/%j.out" --wrap "$(job_script "$secs" "$code")" 2>&1) || rc=$?
    if [ "$rc" -eq 0 ] && [[ $out =~ ^[0-9]+$ ]]; then
      echo "ack $name $out $code $t1 $(elapsed)" >> "$rec/submit-$k.log"
    else
      echo "unack $name $rc $t1 $(elapsed) ${out//$'\n'/ }" >> "$rec/submit-$k.log"
    fi
    rsleep 100 700
  done
}

# Cancels one of the latest acknowledged jobs every 1-3 s; records each attempt and its rc
# (an attempt whose answer was lost may still have cancelled).
canceller() {
  local id rc t1
  RANDOM=$((seed + 1000))
  while [ ! -e "$rec/stop" ]; do
    rsleep 1000 3000
    id=$(tail -q -n 3 "$rec"/submit-*.log 2>/dev/null | awk '$1 == "ack" {print $3}' | shuf -n 1 || true)
    [ -n "$id" ] || continue
    t1=$(elapsed) rc=0
    hqc cancel "$id" >/dev/null 2>&1 || rc=$?
    echo "cancel $id $rc $t1 $(elapsed)" >> "$rec/cancels.log"
  done
}

# ---- kills and returns ------------------------------------------------------------------
# Seconds until each named node is responding and not DOWN again, counted from `since`
# (µs); "back NODE SECONDS CAUSE" or "notback NODE BOUND CAUSE" per node.
measure_return() {
  local cause=$1 since=$2; shift 2
  local -A back=()
  local deadline=$((since + return_bound * 1000000)) ok n t missing
  while :; do
    ok=$(ok_nodes) t=$(now_us) missing=0
    for n in "$@"; do
      [ -n "${back[$n]:-}" ] && continue
      if grep -qx "$n" <<<"$ok"; then back[$n]=$t; else missing=1; fi
    done
    [ "$missing" -eq 0 ] || [ "$t" -ge "$deadline" ] && break
    sleep 0.05
  done
  for n in "$@"; do
    if [ -n "${back[$n]:-}" ]; then
      t=$(( back[$n] - since ))
      event "back $n $((t / 1000000)).$(printf %03d $((t % 1000000 / 1000))) $cause"
    else
      event "notback $n $return_bound $cause"
      log "node $n not back within ${return_bound}s after $cause"
    fi
  done
}

# `hq local start` revives whatever died, with its command line and port; then measures.
revive() {  # cause nodes-to-measure...
  local cause=$1 out rc=0 since; shift
  out=$(timeout 60 "$hq" local start --no-wait 2>&1) || rc=$?
  since=$(now_us)
  [ "$rc" -eq 0 ] || { event "revive-failed $cause $rc"; log "hq local start failed ($rc): $out"; }
  [[ $out == *"started "* ]] || cause=$cause-check  # nothing was dead: not a return, a check
  measure_return "$cause" "$since" "$@"
}

all_nodes=()
# One controller kill episode; a third of them are a crash loop: the revived controller is
# killed again within 0.4 s, while the agents are re-registering.
kill_controller() {
  local pid round rounds=1
  [ "$(rand 1 3)" -eq 1 ] && rounds=2
  for ((round = 1; round <= rounds; round++)); do
    pid=$(daemon_pid controller)
    kill -9 "$pid" && event "kill controller $pid"
    wait_until 10 pid_gone "$pid" || true
    rsleep 0 1500  # clients and agents meet a dead controller for a while
    [ "$round" -eq "$rounds" ] && break
    timeout 60 "$hq" local start --no-wait >/dev/null 2>&1 || event "revive-failed crash-loop 1"
    rsleep 0 400
  done
  revive controller-restart "${all_nodes[@]}"
}

# One agent kill: its jobs keep running. It is revived after 0-1.5 s, or (the 2nd, 6th,
# 10th... kill) after a long outage of node_timeout + 2-4 s: the node goes DOWN and its
# jobs are requeued while their first runs still run, and the revived agent meets that.
agent_kills_done=0
kill_agent() {
  local name="local$(rand 1 "$nodes")" pid cause=agent-restart
  pid=$(daemon_pid "$name")
  kill -9 "$pid" && event "kill agent $name $pid"
  wait_until 10 pid_gone "$pid" || true
  # The controller must have seen it go, or the old registration would count as a return.
  wait_until 5 node_not_ok "$name" || event "unnoticed $name"
  agent_kills_done=$((agent_kills_done + 1))
  if [ $((agent_kills_done % 4)) -eq 2 ]; then
    cause=agent-restart-after-outage
    rsleep $((node_timeout * 1000 + 2000)) $((node_timeout * 1000 + 4000))
  else
    rsleep 0 1500
  fi
  revive "$cause" "$name"
}

# ---- optional: a full disk under the controller's state -----------------------------------
# The state dir sits on a small tmpfs mounted before the cluster starts (root only). An
# episode fills it, keeps it full for a few seconds while the load goes on, frees it, then
# kills the controller with -9 if it did not exit by itself, and revives it. A submission
# acknowledged inside the window must survive that restart.
setup_disk_full() {
  [ "$want_disk_full" -eq 1 ] || { skip "disk full (--no-disk-full)"; return; }
  [ "$(id -u)" -eq 0 ] || { skip "disk full (needs root to mount a tmpfs)"; return; }
  local size=$(( duration / 10 > 64 ? duration / 10 : 64 ))  # MiB: the journal of a long run fits
  mkdir -p "$local_dir/state"
  if mount -t tmpfs -o "size=${size}m,mode=0755" chaos-state "$local_dir/state" 2>/dev/null; then
    mounted=$local_dir/state
    log "controller state on a ${size} MiB tmpfs"
  else
    skip "disk full (cannot mount a tmpfs here)"
  fi
}

disk_full_episode() {
  local fill=$mounted/chaos-fill pid
  pid=$(daemon_pid controller)
  cat /dev/zero > "$fill" 2>/dev/null || true   # until ENOSPC
  event "full-start"
  log "state disk full"
  sleep 3
  event "full-end"
  rm -f "$fill"
  log "state disk freed"
  if pid_gone "$pid"; then
    event "full-controller-exited"
  else  # what it acknowledged meanwhile must have been durable: the restart must have it
    kill -9 "$pid" && event "kill controller $pid"
    wait_until 10 pid_gone "$pid" || true
  fi
  revive disk-full "${all_nodes[@]}"
}

# ---- optional: agents behind a flaky proxy -----------------------------------------------
# A TCP proxy in Python between an extra agent and the controller, until $rec/calm exists:
# it delays 30% of new connections by up to 2 s; of the others' connections, after 1-6 s,
# it cuts 35% (both ends see it) and stalls 35% (a black hole: nothing passes, nobody is
# told) for 2 s to node_timeout + 4 s before cutting them. A stall longer than
# node_timeout makes the node DOWN while its jobs still run behind the proxy.
proxy_py() {
  cat <<'EOF'
import os, random, socket, sys, threading, time
port_file, upstream, calm, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
random.seed(int(sys.argv[5]))
stall_max = float(sys.argv[6])
lock = threading.Lock()
def note(what):
    with lock, open(log, "a") as f: f.write(what + "\n")
def calm_for(seconds):  # sleeps; True if calm came meanwhile
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(calm): return True
        time.sleep(0.1)
    return os.path.exists(calm)
def close(*socks):
    for s in socks:
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def pump(src, dst, flowing):
    try:
        while data := src.recv(65536):
            flowing.wait()
            dst.sendall(data)
    except OSError: pass
    close(src, dst)
def serve(c):
    chaotic = not os.path.exists(calm)
    if chaotic and random.random() < 0.3:
        note("delay"); time.sleep(random.uniform(0.2, 2.0))
    try: u = socket.create_connection(("127.0.0.1", upstream))
    except OSError: c.close(); return
    flowing = threading.Event(); flowing.set()
    for a, b in ((c, u), (u, c)): threading.Thread(target=pump, args=(a, b, flowing), daemon=True).start()
    fate = random.random()
    if not chaotic or fate < 0.3 or calm_for(random.uniform(1, 6)): return
    if fate < 0.65:
        note("stall"); flowing.clear(); calm_for(random.uniform(2, stall_max))
    note("cut"); close(c, u); flowing.set()
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(64)
with open(port_file + ".tmp", "w") as f: f.write(str(srv.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = srv.accept(); note("accept")
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
}

proxied_nodes=()
setup_proxy() {
  [ "$want_proxy" -eq 1 ] || { skip "proxy (--no-proxy)"; return; }
  command -v python3 >/dev/null || { skip "proxy (no python3)"; return; }
  local port addr name
  port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$local_dir/config.toml")
  proxy_py > "$work/proxy.py"
  local stall_max=$((node_timeout + 4))
  python3 "$work/proxy.py" "$work/proxy.port" "$port" "$rec/calm" "$rec/proxy.log" "$seed" "$stall_max" \
    2>>"$work/proxy.err" &
  bg_pids+=($!)
  wait_until 10 test -s "$work/proxy.port" || { skip "proxy (did not start; see $work/proxy.err)"; return; }
  addr=127.0.0.1:$(cat "$work/proxy.port")
  name=chaosp1  # a dynamic node: the partition takes feature{chaosproxy}
  mkdir -p "$work/$name"
  "$hq" node --controller "$addr" --name "$name" --feature chaosproxy --state-dir "$work/$name" \
    --ca "$local_dir/keys/ca.pem" --secret "$local_dir/keys/secret" --run-dir "$work/$name/run" \
    --kill-jobs-on-exit >>"$work/$name.log" 2>&1 &
  bg_pids+=($!)
  proxied_nodes+=("$name")
  log "agent $name behind a flaky proxy at $addr"
}

# ---- the run ----------------------------------------------------------------------------
# Wipes the work dir of an earlier run (stopping its cluster and unmounting its tmpfs, in
# case that run was killed), and only a dir that is new, empty or marked as ours.
prepare_work_dir() {
  if [ -d "$work" ] && [ -n "$(ls -A "$work")" ] && [ ! -e "$work/.hq-chaos" ]; then
    echo "chaos: $work is not a chaos work dir; not wiping it (use --dir)" >&2
    exit 2
  fi
  [ -d "$local_dir" ] && { "$hq" local stop >/dev/null 2>&1 || true; }
  mountpoint -q "$local_dir/state" 2>/dev/null && umount "$local_dir/state"
  rm -rf "$work"
  mkdir -p "$rec/locks" "$work/out"
  touch "$work/.hq-chaos"
  prepared=1
}

main() {
  prepare_work_dir
  write_check_py
  log "seed $seed, $duration s, $nodes nodes x $cpus CPUs, $ctl_kills controller kills, $agent_kills agent kills, work dir $work"
  local i
  for ((i = 1; i <= nodes; i++)); do all_nodes+=("local$i"); done

  setup_disk_full
  "$hq" local start --nodes "$nodes" --cpus "$cpus" >/dev/null
  # Finished jobs stay visible until the final check; a short node_timeout; proxied agents may
  # join; agents cut off from the controller kill their jobs before they are requeued elsewhere
  # (fence_timeout: without it a partition longer than node_timeout runs a job twice at once).
  local age=$(( 2 * duration + drain_timeout + 600 ))
  sed -i -e "s/^\[controller\]$/[controller]\nmin_job_age = \"${age}s\"\nfence_timeout = \"$((node_timeout - 4))s\"/" \
    -e "s/^node_timeout = .*/node_timeout = \"${node_timeout}s\"/" -e "s/^heartbeat_interval = .*/heartbeat_interval = \"2s\"/" \
    -e "s/^nodes = \"local\[1-$nodes\]\"$/nodes = \"local[1-$nodes],feature{chaosproxy}\"/" "$local_dir/config.toml"
  "$hq" local restart controller --no-wait >/dev/null
  wait_until 20 all_ok "${all_nodes[@]}" || log "not every node in service before the load"
  setup_proxy
  [ ${#proxied_nodes[@]} -eq 0 ] || wait_until 20 node_ok "${proxied_nodes[0]}" || log "proxied node not in service yet"

  for ((i = 1; i <= submitters; i++)); do submitter "$i" & bg_pids+=($!); done
  canceller & bg_pids+=($!)

  # The kills (and the disk-full episode), shuffled, at jittered even intervals.
  local plan=() kind gap target
  for ((i = 0; i < ctl_kills; i++)); do plan+=(controller); done
  for ((i = 0; i < agent_kills; i++)); do plan+=(agent); done
  [ -n "$mounted" ] && plan+=(disk-full)
  [ ${#plan[@]} -eq 0 ] || mapfile -t plan < <(printf '%s\n' "${plan[@]}" | shuf --random-source=<(yes "$seed"))
  gap=$(( duration * 1000000 / (${#plan[@]} + 1) ))
  local start=$(now_us) done_ctl=0 done_agent=0
  for ((i = 0; i < ${#plan[@]}; i++)); do
    target=$(( start + gap * (i + 1) + (RANDOM % 1000 - 500) * gap / 1500 ))
    while [ "$(now_us)" -lt "$target" ]; do sleep 0.1; done
    [ "$(now_us)" -lt $(( start + duration * 1000000 )) ] || { log "out of time: ${#plan[@]} events planned, $i done"; break; }
    kind=${plan[$i]}
    log "$kind"
    case $kind in
      controller) kill_controller; done_ctl=$((done_ctl + 1)) ;;
      agent) kill_agent; done_agent=$((done_agent + 1)) ;;
      disk-full) disk_full_episode ;;
    esac
  done
  while [ "$(now_us)" -lt $(( start + duration * 1000000 )) ]; do sleep 0.2; done

  log "load stops ($done_ctl controller kill episodes, $done_agent agent kills)"
  touch "$rec/stop" "$rec/calm"
  wait_loops
  revive final "${all_nodes[@]}" "${proxied_nodes[@]}"
  log "waiting (at most $drain_timeout s) for every job to end"
  wait_until "$drain_timeout" all_jobs_final || log "not every job ended within $drain_timeout s"
  ok_nodes > "$work/nodes-final.txt"
  hqc queue -t all --json > "$work/queue.json" || { log "FAIL: the controller does not answer at the end"; return 1; }
  check
}

# The load loops are the background processes started last: each finishes its current call
# (bounded by hqc's timeout) and exits; together within 15 s, or they are killed.
loops_gone() {
  local p
  for p in "${bg_pids[@]: -$((submitters + 1))}"; do pid_gone "$p" || return 1; done
}
wait_loops() {
  wait_until 15 loops_gone || kill "${bg_pids[@]: -$((submitters + 1))}" 2>/dev/null || true
}

all_jobs_final() {
  hqc queue -t all --json > "$work/queue.json" 2>/dev/null || return 1
  [ "$(python3 "$work/check.py" pending "$work" 2>/dev/null)" = 0 ]
}

check() {
  python3 "$work/check.py" report "$work" "$duration" "$seed"
}

# ---- the final check --------------------------------------------------------------------
write_check_py() {
  cat > "$work/check.py" <<'EOF'
# Reads what chaos.sh recorded and the final `hq queue -t all --json`; prints figures and
# every violation; exits 1 if an invariant fails.
import collections, glob, json, os, sys

mode, work = sys.argv[1], sys.argv[2]
rec = os.path.join(work, "records")
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}

def lines(path):
    try:
        with open(path) as f: return [l.split() for l in f if l.strip()]
    except FileNotFoundError: return []

with open(os.path.join(work, "queue.json")) as f:
    jobs = [j for j in json.load(f).get("jobs", []) if j["spec"]["name"].startswith("chaos-")]
by_id = {str(j["job_id"]): j for j in jobs}
if mode == "pending":
    print(sum(j["state"] not in FINAL for j in jobs)); sys.exit(0)

duration, seed = sys.argv[3], sys.argv[4]
acked, unacked = {}, {}  # name -> id / rc
for path in glob.glob(os.path.join(rec, "submit-*.log")):
    for f in lines(path):
        if f[0] == "ack": acked[f[1]] = f[2]
        else: unacked[f[1]] = f[2]
cancels = lines(os.path.join(rec, "cancels.log"))
cancel_touched = {f[1] for f in cancels}
runs = lines(os.path.join(rec, "runs.log"))
events = lines(os.path.join(rec, "events.log"))
proxy = collections.Counter(l[0] for l in lines(os.path.join(rec, "proxy.log")))
skipped = [" ".join(l) for l in lines(os.path.join(rec, "skipped.log")) if l[0] == "skipped:"]
violations = collections.defaultdict(list)

# No acknowledged job lost: each acknowledged id is in the queue under its name.
for name, jid in sorted(acked.items()):
    j = by_id.get(jid)
    if j is None: violations["no acknowledged job lost"].append(f"job {jid} ({name}) is missing")
    elif j["spec"]["name"] != name:
        violations["no acknowledged job lost"].append(f"job {jid} is {j['spec']['name']}, acknowledged as {name}")

# No duplicate job from a retried submission: one job per unique name.
ids_by_name = collections.defaultdict(list)
for j in jobs: ids_by_name[j["spec"]["name"]].append(j["job_id"])
for name, ids in sorted(ids_by_name.items()):
    if len(ids) > 1:
        violations["no duplicate job from a retried submission"].append(f"{name} on jobs {', '.join(map(str, ids))}")
created_unacked = [n for n in unacked if n in ids_by_name and n not in acked]

# No job ran twice at once.
starts = collections.Counter(f[1] for f in runs if f[0] == "start")
for f in runs:
    if f[0] == "double":
        violations["no job ran twice at once"].append(f"job {f[1]} (run {f[2]}) started while another run held its lock")

# Every node back in service within 2 s of its agent's or the controller's return.
returns = [(f[1], float(f[2]), f[3]) for f in events if f[0] == "back" and not f[3].endswith("-check")]
for node, secs, cause in returns:
    if secs > 2.0: violations["every node back in service within 2 s"].append(f"{node} took {secs:.2f} s after {cause}")
for f in events:
    if f[0] == "notback":
        violations["every node back in service within 2 s"].append(f"{f[1]} not back within {f[2]} s after {f[3]}")
final_nodes = {l[0] for l in lines(os.path.join(work, "nodes-final.txt"))}
expected_nodes = {f[1] for f in events if f[0] in ("back", "notback")}
for node in sorted(expected_nodes - final_nodes):
    violations["every node back in service within 2 s"].append(f"{node} not in service at the end")

# Every job in a final state with the right exit code; a job we tried to cancel may end
# CANCELLED or by itself (it ended before the cancel took effect).
states = collections.Counter()
for j in jobs:
    name, jid, st, code = j["spec"]["name"], str(j["job_id"]), j["state"], j.get("exit_code", 0)
    states[st] += 1
    want = int(name.rsplit("-", 1)[1]) % 5
    natural = ("COMPLETED" if want == 0 else "FAILED", want)
    if st not in FINAL:
        violations["every job in a final state with the right exit code"].append(f"job {jid} ({name}) is {st}")
    elif jid in cancel_touched and st == "CANCELLED":
        pass
    elif (st, code) != natural:
        how = "cancel attempted, " if jid in cancel_touched else ""
        violations["every job in a final state with the right exit code"].append(
            f"job {jid} ({name}) {st} exit {code}, expected {how}{natural[0]} exit {want}")

# A full disk: a submission acknowledged while the state disk was full (sent after the fill,
# answered before the free) must have been durable: it survives the kill -9 that follows.
# (SQLite can commit on a full disk by reusing the space of its write-ahead log.)
full = [(float(a[-1]), float(b[-1])) for a, b in zip([f for f in events if f[0] == "full-start"],
                                                     [f for f in events if f[0] == "full-end"])]
acked_while_full = [f for path in glob.glob(os.path.join(rec, "submit-*.log")) for f in lines(path)
                    if f[0] == "ack" and any(lo <= float(f[4]) and float(f[5]) <= hi for lo, hi in full)]
for f in acked_while_full:
    if f[2] not in by_id:
        violations["no submission acknowledged while the state disk was full is lost"].append(f"job {f[2]} ({f[1]})")

kills = collections.Counter(f[1] for f in events if f[0] == "kill")
times = [s for _, s, _ in returns]
print(f"\n== chaos summary: {duration} s, seed {seed} ==")
print(f"kills: controller {kills['controller']}, agent {kills['agent']}; "
      f"hq local start failures: {sum(f[0] == 'revive-failed' for f in events)}")
if full: print(f"disk full: {len(full)} episode(s), controller exited by itself: "
              f"{sum(f[0] == 'full-controller-exited' for f in events)}, submissions acknowledged while full: "
              f"{len(acked_while_full)}")
if proxy: print(f"proxy: {proxy['accept']} connections, {proxy['delay']} delayed, {proxy['cut']} cut "
               f"({proxy['stall']} of them after a stall)")
for s in skipped: print(s)
print(f"submissions: {len(acked)} acknowledged, {len(unacked)} unacknowledged "
      f"({len(created_unacked)} of them created anyway)")
print(f"cancels: {len(cancels)} attempted ({sum(f[2] == '0' for f in cancels)} acknowledged), "
      f"{states['CANCELLED']} jobs ended CANCELLED")
print(f"jobs: {len(jobs)} in the queue: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())) +
      f"; {sum(1 for j in jobs if j.get('restart_count', 0) > 0)} ran again after a requeue; "
      f"{sum(starts.values())} runs started")
print(f"node returns: {len(times)} measured, max {max(times, default=0):.2f} s, "
      f"mean {sum(times) / len(times) if times else 0:.2f} s; "
      f"{sum(f[0] == 'notback' for f in events)} not back within the bound")
print("invariants:")
names = ["no acknowledged job lost", "no duplicate job from a retried submission", "no job ran twice at once",
         "every node back in service within 2 s", "every job in a final state with the right exit code"]
if full: names.append("no submission acknowledged while the state disk was full is lost")
for n in names:
    v = violations.get(n, [])
    print(f"  {'PASS' if not v else 'FAIL'} {n}" + (f": {len(v)} violation(s)" if v else ""))
    for line in v[:50]: print(f"       {line}")
    if len(v) > 50: print(f"       ... and {len(v) - 50} more")
sys.exit(1 if any(violations.values()) else 0)
EOF
}

main; exit  # one line: bash reads a script as it runs, so an edit meanwhile cannot run more
