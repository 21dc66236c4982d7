# shellcheck shell=bash
# Shared helpers for Scripts/test, Scripts/bench and Scripts/play-demo: make sure `swift` is on PATH, and bring up
# (then tear down) the services the player and its tests need on a machine without a sound card or a display:
#   - a PulseAudio daemon (user mode, private runtime dir, a null sink `multiview_test` as the default sink);
#   - an Xvfb X server.
# Each start function first checks whether the service is already reachable and, if so, uses it and leaves it alone.
# mv_services_stop stops exactly what these functions started (by PID), nothing else. Call it from an EXIT trap:
#
#   source Scripts/lib/services.sh
#   trap mv_services_stop EXIT
#   trap 'exit 130' INT; trap 'exit 143' TERM
#   mv_pulse_start; mv_xvfb_start
#
# Meant to be sourced by bash scripts running with `set -euo pipefail`.
#
# MV_PRIVATE_SERVICES=1 (or mv_services_private): never reuse a reachable server; always start our own daemon and
# display. Scripts/test's shards do this in subshells, one PulseAudio + Xvfb + runtime dir each, so parallel
# shards never share a sink, a display or a PulseAudio client limit.

MV_PULSE_SINK=${MV_PULSE_SINK:-multiview_test}
MV_SERVICE_TIMEOUT=${MV_SERVICE_TIMEOUT:-10}   # seconds to wait for a service to answer

MV_SERVICES_DIR=""        # temp dir holding the private PulseAudio home/runtime dir and logs (ours; removed on stop)
MV_PULSE_PID=""           # PulseAudio daemon we started
MV_PULSE_SINK_MODULE=""   # null-sink module we loaded into a pre-existing daemon
MV_XVFB_PID=""            # Xvfb we started
MV_XVFB_DISPLAY=""

MV_PRIVATE_SERVICES=${MV_PRIVATE_SERVICES:-0}

mv_log() { printf '%s\n' "$*" >&2; }
mv_die() { printf 'error: %s\n' "$*" >&2; exit 1; }
mv_header() { printf '\n==> %s\n' "$*"; }

# Puts Swift on PATH (the toolchain lives in /opt/swift on our machines and in CI).
mv_ensure_swift() {
  if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
  fi
  command -v swift >/dev/null 2>&1 || mv_die "swift not found on PATH (nor in /opt/swift/usr/bin)"
}

mv_services_dir() {
  if [ -z "$MV_SERVICES_DIR" ]; then
    # Short path: PulseAudio's socket lives below it (unix socket paths are limited to 108 bytes).
    MV_SERVICES_DIR=$(mktemp -d /tmp/multiview-services.XXXXXX)
  fi
}

# Forgets the services of the calling shell (a subshell inherits its variables) and makes the next starts private:
# for a subshell that brings up its own set. Its EXIT trap must call mv_services_stop.
mv_services_private() {
  MV_SERVICES_DIR="" MV_PULSE_PID="" MV_PULSE_SINK_MODULE="" MV_XVFB_PID="" MV_XVFB_DISPLAY=""
  MV_PRIVATE_SERVICES=1
  unset PULSE_SERVER PULSE_RUNTIME_PATH PULSE_COOKIE XDG_RUNTIME_DIR DISPLAY
}

# ---------------------------------------------------------------------------------------------------------------
# PulseAudio

mv_pulse_reachable() { timeout -k 2 5 pactl info >/dev/null 2>&1; }

mv_pid_is() {  # mv_pid_is PID COMM: PID is alive and is COMM (guards against PID reuse)
  [ -n "$1" ] && [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

mv_pulse_has_sink() {
  pactl list short sinks 2>/dev/null | awk '{print $2}' | grep -qx "$1"
}

mv_pulse_load_sink() {
  pactl load-module module-null-sink sink_name="$MV_PULSE_SINK" \
    sink_properties=device.description=Multiview-test-sink
}

# Uses a reachable PulseAudio server, or starts one for this run: root in user mode, private HOME/runtime dir,
# never exiting when idle, module-suspend-on-idle unloaded (monitor recordings must not stop), a null sink
# $MV_PULSE_SINK as the default sink. Exports XDG_RUNTIME_DIR, PULSE_RUNTIME_PATH, PULSE_SERVER and PULSE_COOKIE so
# every client (tests, gst pulsesink, pactl, parecord) finds and authenticates to it.
mv_pulse_start() {
  command -v pactl >/dev/null 2>&1 || mv_die "pactl not found (run Scripts/setup)"
  if [ "$MV_PRIVATE_SERVICES" != 1 ] && mv_pulse_reachable; then
    mv_log "PulseAudio: using the running server ($(pactl info 2>/dev/null | sed -n 's/^Server String: //p'))"
    if ! mv_pulse_has_sink "$MV_PULSE_SINK"; then
      MV_PULSE_SINK_MODULE=$(mv_pulse_load_sink) || mv_die "could not load a null sink into the running PulseAudio"
      mv_log "PulseAudio: loaded null sink $MV_PULSE_SINK (module $MV_PULSE_SINK_MODULE; unloaded on exit)"
    fi
    return 0
  fi
  command -v pulseaudio >/dev/null 2>&1 || mv_die "pulseaudio not found (run Scripts/setup)"

  mv_services_dir
  local home="$MV_SERVICES_DIR/pulse-home" runtime="$MV_SERVICES_DIR/run" log="$MV_SERVICES_DIR/pulseaudio.log"
  mkdir -p "$home/.config" "$runtime/pulse"
  chmod 700 "$home" "$runtime" "$runtime/pulse"
  export XDG_RUNTIME_DIR="$runtime"
  export PULSE_RUNTIME_PATH="$runtime/pulse"
  export PULSE_SERVER="unix:$PULSE_RUNTIME_PATH/native"
  export PULSE_COOKIE="$home/.config/pulse/cookie"

  # HOME/XDG_CONFIG_HOME are private to the daemon (its cookie and state go there); clients keep the real HOME
  # (SwiftPM and GStreamer caches live there) and get the cookie through PULSE_COOKIE.
  if ! env -u PULSE_SERVER HOME="$home" XDG_CONFIG_HOME="$home/.config" \
      pulseaudio --daemonize=yes --exit-idle-time=-1 --log-target="file:$log" </dev/null >>"$log" 2>&1; then
    tail -n 30 "$log" >&2 || true
    mv_die "pulseaudio failed to start (log above: $log)"
  fi
  local waited=0
  while [ -z "$MV_PULSE_PID" ] && [ "$waited" -lt $((MV_SERVICE_TIMEOUT * 10)) ]; do
    if [ -s "$PULSE_RUNTIME_PATH/pid" ]; then MV_PULSE_PID=$(tr -dc '0-9' <"$PULSE_RUNTIME_PATH/pid"); fi
    [ -n "$MV_PULSE_PID" ] || { sleep 0.1; waited=$((waited + 1)); }
  done
  until mv_pulse_reachable; do
    if [ "$waited" -ge $((MV_SERVICE_TIMEOUT * 10)) ]; then
      tail -n 30 "$log" >&2 || true
      mv_die "PulseAudio did not answer 'pactl info' within ${MV_SERVICE_TIMEOUT} s (log above: $log)"
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  [ -s "$PULSE_COOKIE" ] || mv_log "PulseAudio: warning: no cookie at $PULSE_COOKIE"

  if pactl list short modules | awk '{print $2}' | grep -qx module-suspend-on-idle; then
    pactl unload-module module-suspend-on-idle || mv_die "could not unload module-suspend-on-idle"
  fi
  mv_pulse_load_sink >/dev/null || mv_die "could not load module-null-sink"
  pactl set-default-sink "$MV_PULSE_SINK" || mv_die "could not make $MV_PULSE_SINK the default sink"
  mv_log "PulseAudio: started pid $MV_PULSE_PID ($PULSE_SERVER), default sink $MV_PULSE_SINK"
}

mv_pulse_stop() {
  if [ -n "$MV_PULSE_SINK_MODULE" ]; then
    pactl unload-module "$MV_PULSE_SINK_MODULE" >/dev/null 2>&1 || true
    MV_PULSE_SINK_MODULE=""
  fi
  if [ -n "$MV_PULSE_PID" ]; then
    # Daemonized, so not our child: signal it, then poll until it is gone.
    if mv_pid_is "$MV_PULSE_PID" pulseaudio; then
      kill -TERM "$MV_PULSE_PID" 2>/dev/null || true
      local i
      for i in $(seq 50); do mv_pid_is "$MV_PULSE_PID" pulseaudio || break; sleep 0.1; done
      if mv_pid_is "$MV_PULSE_PID" pulseaudio; then kill -KILL "$MV_PULSE_PID" 2>/dev/null || true; fi
    fi
    mv_log "PulseAudio: stopped pid $MV_PULSE_PID"
    MV_PULSE_PID=""
  fi
}

# ---------------------------------------------------------------------------------------------------------------
# X display

mv_x_reachable() {  # mv_x_reachable [DISPLAY]
  local d="${1:-${DISPLAY:-}}"
  [ -n "$d" ] && timeout -k 2 5 xdpyinfo -display "$d" >/dev/null 2>&1
}

# Uses the X display in $DISPLAY if it answers; otherwise starts Xvfb on a free display number and exports DISPLAY.
# Xvfb picks the number itself (-displayfd): it binds the display's socket and lock before it writes the number, so
# two shards starting together can never both take one display. (Picking a number here by looking for a free
# socket was racy: a second Xvfb on a taken number lived for a moment, the first one's answer to xdpyinfo made it
# look started, and that shard's display vanished when the other shard stopped its server.)
mv_xvfb_start() {
  command -v xdpyinfo >/dev/null 2>&1 || mv_die "xdpyinfo not found (run Scripts/setup)"
  if [ "$MV_PRIVATE_SERVICES" != 1 ] && mv_x_reachable; then
    mv_log "X: using the running display $DISPLAY"
    return 0
  fi
  [ -z "${DISPLAY:-}" ] || [ "$MV_PRIVATE_SERVICES" = 1 ] || mv_log "X: DISPLAY=$DISPLAY does not answer; starting Xvfb"
  command -v Xvfb >/dev/null 2>&1 || mv_die "Xvfb not found (run Scripts/setup)"
  mv_services_dir
  local log="$MV_SERVICES_DIR/xvfb.log" numfile="$MV_SERVICES_DIR/xvfb.display" pid waited=0 n=""
  : >"$numfile"
  Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp -noreset </dev/null >"$log" 2>&1 3>"$numfile" &
  pid=$!
  # The number arrives as one line once the server listens; a line without its newline is not complete yet.
  until [ -n "$n" ] && mv_x_reachable ":$n"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
      tail -n 20 "$log" >&2 || true
      mv_die "Xvfb exited before its display answered (log above: $log)"
    fi
    if [ "$waited" -ge $((MV_SERVICE_TIMEOUT * 10)) ]; then
      kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
      tail -n 20 "$log" >&2 || true
      mv_die "Xvfb${n:+ :$n} did not answer xdpyinfo within ${MV_SERVICE_TIMEOUT} s (log above: $log)"
    fi
    if [ -z "$n" ] && [ "$(wc -l <"$numfile")" -ge 1 ]; then n=$(head -n 1 "$numfile" | tr -dc '0-9'); fi
    sleep 0.1; waited=$((waited + 1))
  done
  MV_XVFB_PID=$pid MV_XVFB_DISPLAY=":$n"
  export DISPLAY=":$n"
  mv_log "X: started Xvfb $DISPLAY (pid $pid, 1920x1080x24)"
}

mv_xvfb_stop() {
  if [ -n "$MV_XVFB_PID" ]; then
    kill -TERM "$MV_XVFB_PID" 2>/dev/null || true
    local i
    for i in $(seq 50); do kill -0 "$MV_XVFB_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$MV_XVFB_PID" 2>/dev/null || true
    wait "$MV_XVFB_PID" 2>/dev/null || true
    mv_log "X: stopped Xvfb $MV_XVFB_DISPLAY (pid $MV_XVFB_PID)"
    MV_XVFB_PID="" MV_XVFB_DISPLAY=""
  fi
}

# ---------------------------------------------------------------------------------------------------------------

# Stops everything started above; safe to call more than once and when nothing was started. Keeps $? intact.
mv_services_stop() {
  local status=$?
  set +e
  mv_xvfb_stop
  mv_pulse_stop
  if [ -n "$MV_SERVICES_DIR" ] && [ -d "$MV_SERVICES_DIR" ]; then rm -rf "$MV_SERVICES_DIR"; fi
  MV_SERVICES_DIR=""
  return "$status"
}
