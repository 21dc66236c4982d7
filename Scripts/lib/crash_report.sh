# Every thread's stack from the core of a test process that died of a signal (sourced by Scripts/test).
#
# Why not Swift's own crash backtrace: it unwinds by frame pointers, and Debian's libc has none, so a crash inside
# libc (an abort from malloc's "double free or corruption", a failed assertion) shows only
# `__pthread_kill_implementation` for the crashing thread and "..." after it: not the code that freed twice.
# gdb unwinds through libc with its unwind tables. So the shards run with core dumps on (`ulimit -c unlimited`
# in the shard), and a shard whose test process died gets `thread apply all bt` of its core, crashing thread
# first, in .build/test-shards/shard-N.crash.txt; the core itself (hundreds of MB) is deleted after.
#
# Where the kernel writes the core is `kernel.core_pattern`: a file pattern (Debian's default "core", relative to
# the process's working directory, which is the repository root here) is searched for; a pipe ("|systemd-coredump
# ...") keeps it out of reach, and that is said instead.

# mv_crash_report BUNDLE SINCE OUT: the newest core written since epoch second SINCE by BUNDLE (the shard's test
# process), examined with gdb into OUT. Prints one line saying what it did. Returns 0 when a backtrace was written.
mv_crash_report() {
  local bundle=$1 since=$2 out=$3 pattern dir glob core="" candidate
  pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)
  case "$pattern" in
    '|'*) printf 'crash report: the kernel hands cores to %s (kernel.core_pattern), not to a file: no backtrace\n' \
            "${pattern%% *}"; return 1 ;;
  esac
  # Any %-specifier may be anything: a glob. Relative patterns are relative to the crashed process's cwd (here).
  glob=$(printf '%s' "$pattern" | sed 's/%[a-zA-Z%]/*/g')
  [ "$(cat /proc/sys/kernel/core_uses_pid 2>/dev/null)" != 1 ] || case "$pattern" in *%p*) ;; *) glob="$glob*" ;; esac
  case "$glob" in /*) ;; *) glob="$PWD/$glob" ;; esac
  dir=$(dirname "$glob")
  for candidate in $glob; do
    [ -f "$candidate" ] || continue
    [ "$(stat -c %Y "$candidate")" -ge "$since" ] || continue
    [ -z "$core" ] || [ "$candidate" -nt "$core" ] && core=$candidate
  done
  if [ -z "$core" ]; then
    printf 'crash report: no core file matching %s since the shard started (ulimit -c, disk space, or a core_pattern of %s)\n' \
      "$glob" "$dir"
    return 1
  fi
  if ! command -v gdb >/dev/null; then
    printf 'crash report: gdb is not installed (Scripts/setup installs it); core left at %s\n' "$core"
    return 1
  fi
  {
    printf '# core %s of %s\n# the crashing thread:\n' "$core" "$bundle"
    # complaints off: the debug build's split DWARF makes gdb complain once per module ("During symbol reading:
    # Could not find DWO CU"), over a thousand lines that pushed the crashing thread out of the summary.
    gdb -batch -nx -ex 'set pagination off' -ex 'set complaints 0' -ex 'bt 60' -ex 'echo \n# every thread:\n' \
      -ex 'thread apply all bt 40' "$bundle" "$core" 2>&1 |
      grep -v '^\[New LWP\|^warning: \|^Downloading\|^During symbol reading\|^$'
  } >"$out"
  rm -f "$core"
  printf 'crash report: every thread'"'"'s stack from the core is in %s (core deleted)\n' "$out"
}
