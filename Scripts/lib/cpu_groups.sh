# CPU groups for Scripts/test's shards (sourced). The test classes that judge audio heard in real time
# (Tests/test-serial.txt) fail when the other shards take the CPU from them. Run alongside the others, they must get
# the CPU whenever they want it: their shard goes into a cgroup (v1 cpu controller) with the most CPU shares and the
# other shards into one with the fewest, so the others run only on what that shard leaves. Shares are weights
# between groups whatever the number of threads in each (niceness is per thread: the parallel shards' many
# streaming threads at nice 10 still outweighed it, 2 failures in a run, session 23).
# Where the cpu controller cannot be written (no v1 cpu hierarchy, not root), mv_cpu_groups_make fails and the
# caller runs that shard alone after the others instead.
# MV_TEST_CPU_SHARES=ALONE:SHARED sets the two groups' weights (default 262144:2: the others run only on what that
# shard leaves); a milder ratio such as 4096:1024 leaves the others a fifth of the CPU while that shard is busy.

MV_CPU_ROOT=/sys/fs/cgroup/cpu
MV_CPU_GROUP_ALONE=""
MV_CPU_GROUP_SHARED=""

# mv_cpu_groups_make: makes both groups (named after this process) or returns 1, leaving none behind.
mv_cpu_groups_make() {
  [ -w "$MV_CPU_ROOT" ] && [ -w "$MV_CPU_ROOT/cgroup.procs" ] && [ -f "$MV_CPU_ROOT/cpu.shares" ] || return 1
  local alone="$MV_CPU_ROOT/multiview-tests-$$-alone" shared="$MV_CPU_ROOT/multiview-tests-$$-shared"
  mkdir "$alone" "$shared" 2>/dev/null || { rmdir "$alone" "$shared" 2>/dev/null; return 1; }
  MV_CPU_GROUP_ALONE=$alone MV_CPU_GROUP_SHARED=$shared
  # Real-time budget: each shard's PulseAudio runs its sink thread SCHED_RR (as root), which a group with none
  # refuses; give each group part of the root's (950 ms per 1 s here) so PulseAudio runs as it does without groups.
  local weights=${MV_TEST_CPU_SHARES:-262144:2}
  [[ "$weights" =~ ^[0-9]+:[0-9]+$ ]] || { echo "MV_TEST_CPU_SHARES must be ALONE:SHARED (numbers), got '$weights'" >&2; mv_cpu_groups_remove; return 1; }
  if ! { echo "${weights%%:*}" >"$alone/cpu.shares" && echo "${weights##*:}" >"$shared/cpu.shares"; } 2>/dev/null ||
     ! { [ ! -f "$alone/cpu.rt_runtime_us" ] ||
         { echo 300000 >"$alone/cpu.rt_runtime_us" && echo 300000 >"$shared/cpu.rt_runtime_us"; }; } 2>/dev/null; then
    mv_cpu_groups_remove
    return 1
  fi
}

# mv_cpu_group_join GROUP: moves the calling (sub)shell into GROUP; what it starts afterwards is in it too.
mv_cpu_group_join() { [ -z "$1" ] || echo "$BASHPID" >"$1/cgroup.procs"; }

# mv_cpu_groups_remove: removes the groups (once their processes are gone: moves any left to the root first).
mv_cpu_groups_remove() {
  local group pid
  for group in "$MV_CPU_GROUP_ALONE" "$MV_CPU_GROUP_SHARED"; do
    [ -n "$group" ] && [ -d "$group" ] || continue
    while read -r pid; do echo "$pid" >"$MV_CPU_ROOT/cgroup.procs" 2>/dev/null || true; done <"$group/cgroup.procs"
    rmdir "$group" 2>/dev/null || true
  done
  MV_CPU_GROUP_ALONE="" MV_CPU_GROUP_SHARED=""
}
