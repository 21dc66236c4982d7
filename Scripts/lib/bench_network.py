"""The runs and figures of Scripts/bench-network (called by it once the namespaces, PulseAudio sinks and binaries are
ready; see that script's header for what each row is). Standard library + numpy (through clicks.py)."""
import argparse
import json
import os
import pathlib
import random
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clicks  # noqa: E402
from bench_network_clock import CLOCK_PROBE_S, CLOCK_SETTINGS, LOOPBACK_SETTINGS, probe_row  # noqa: E402
from bench_network_report import error_at, print_report, read_clock_log, summary  # noqa: E402

MEDIA = [os.path.abspath(p) for p in ("Media/angle1-wide.mp4", "Media/angle2-left.webm", "Media/angle3-right.mkv",
                                      "Media/angle4-overhead.mp4")]
LEAD_S = 5.0          # member start → base time: process start, clock sync over the relay, preroll
PLAY_S = 13.0         # played before the seek, and again after it
SEEK_TO_S = 2.0
START_MARGIN_S = 1.0  # raw members restart at seek instant + this
PAIR_WINDOW_S = 0.5
# The recorder (20 ms latency on the null sink's monitor) runs this long before any member's stream starts. An idle
# null sink renders 2 s blocks (its configured latency until a client asks for less), and a stream that starts while
# such a block drains is not consumed until it ends: measured on this machine, a new stream's writes blocked 2.2 s
# on a fresh null sink, and members started 0.5 s after the recorder joined ran 0.85-1.06 s late until their
# followers' first correction (with 2.5 s: 16 of 16 members' first corrections under 1 ms). A sound card has no
# such block; waiting for the recorder's request to take effect keeps that virtual-sink artefact out of every row.
SINK_SETTLE_S = 2.5
# The null sink's channels (Scripts/bench-network): member k plays into remap sink mvnet_mk, routed to channel k.
CHANNEL_MAP = ["front-left", "front-right", "rear-left", "rear-right", "front-center", "lfe", "side-left", "side-right"]
CHANNELS = len(CHANNEL_MAP)
# coord-stereo: one stereo null sink (mvnet_st), member 1 panned left and member 2 right by their sink inputs' volumes.
STEREO_CHANNELS = ["front-left", "front-right"]
STEREO_PAN = ["100% 0%", "0% 100%"]


class BenchError(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, socket.socket() as t:
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t.bind(("127.0.0.1", port))   # free for TCP too (the control channel may use the same number)
        return port


def media(k):
    """Member k's file: the four bundled angles in turn (members 5-8 play those of 1-4 again)."""
    return MEDIA[(k - 1) % len(MEDIA)]


# Scripts/lib/netns.sh's names and addresses (its MV_NETNS_PREFIX / MV_NETNS_OCTET: two benches at once stay apart).
NETNS_PREFIX = os.environ.get("MV_NETNS_PREFIX", "mvnet")
NETNS_OCTET = int(os.environ.get("MV_NETNS_OCTET", "77"))


def namespace(k):
    return f"{NETNS_PREFIX}-{k}"


def host_address(k):
    """This (the host's) side of member k's veth pair: what member k dials."""
    return f"10.{NETNS_OCTET}.{k}.1"


def load():
    """The machine's load averages (1, 5, 15 min): the machine is shared, every row says how busy it was."""
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Bench:
    def __init__(self, args):
        self.binary_dir = args.binary_dir
        self.delay_ms, self.jitter_ms = args.delay_ms, args.jitter_ms
        self.out = pathlib.Path(args.out) / "network"
        self.log = open(self.out / "bench-network.log", "w")
        self.clock_parts = {}

    def relay(self, k, udp=(), tcp=()):
        """A delay relay on 10.77.k.1 (host namespace) forwarding to the host's 127.0.0.1 ports."""
        command = ["python3", "Scripts/lib/delay-relay.py", "--listen", f"{host_address(k)}", "--delay-ms",
                   str(self.delay_ms), "--jitter-ms", str(self.jitter_ms), "--seed", str(k)]
        command += [a for p in udp for a in ("--udp", str(p))] + [a for p in tcp for a in ("--tcp", str(p))]
        if subprocess.run(["chrt", "-f", "20", "true"], capture_output=True).returncode == 0:
            command = ["chrt", "-f", "20"] + command   # keep the relay's own timer error small on busy cores
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        if proc.stdout.readline().strip() != "ready":
            raise BenchError(f"delay relay for member {k} did not start")
        return proc

    def trip_ms(self, draw):
        return self.delay_ms + draw.uniform(-self.jitter_ms, self.jitter_ms)

    def member(self, k, tag, args):
        """One netclock-baseline member in namespace mvnet-k, its audio on channel k."""
        env = dict(os.environ, PULSE_SINK=f"mvnet_m{k}")
        command = ["ip", "netns", "exec", namespace(k), f"{self.binary_dir}/netclock-baseline", "play",
                   "--media", media(k), "--record", str(self.out / f"render-{tag}-{k}.csv"), *args]
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def record(self, seconds, path, stereo=False):
        channels, device = (STEREO_CHANNELS, "mvnet_st") if stereo else (CHANNEL_MAP, "mvnet")
        return subprocess.Popen(["parecord", "--raw", "--latency-msec=20", "--format=s16le", "--rate=48000",
                                 f"--channels={len(channels)}", "--channel-map=" + ",".join(channels),
                                 f"--device={device}.monitor", str(path)], stderr=self.log)

    def run_baseline(self, side, n):
        """raw-netclock or uncoordinated: n netclock-baseline members."""
        helpers, procs = [], []
        try:
            clock_args = []
            if side == "raw-netclock":
                provider = subprocess.Popen([f"{self.binary_dir}/netclock-baseline", "provide", "--address",
                                             "127.0.0.1", "--port", str(free_port())],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
                helpers.append(provider)
                line = provider.stdout.readline().split()
                if len(line) != 2 or line[0] != "port":
                    raise BenchError("netclock-baseline provide did not report its port")
                port = int(line[1])
                helpers += [self.relay(k, udp=[port]) for k in range(1, n + 1)]
            path = self.out / f"{side}-{n}.raw"
            recorder, recorded_from = self.record(None, path), time.monotonic_ns()
            helpers.append(recorder)   # stopped on the way out if a member fails
            time.sleep(SINK_SETTLE_S)
            base = time.monotonic_ns() + int(LEAD_S * 1e9)
            seek_at = base + int(PLAY_S * 1e9)
            end = seek_at + int((START_MARGIN_S + PLAY_S) * 1e9)
            draw = random.Random(n)
            for k in range(1, n + 1):
                if side == "raw-netclock":
                    clock, start, seek = f"{host_address(k)}:{port}", base, seek_at
                else:
                    # Uncoordinated members act when a "play" / "seek" command sent to all at one instant reaches
                    # them: after one relayed trip each (DELAY ± JITTER), on one kernel clock.
                    clock = "local"
                    start = base + int(self.trip_ms(draw) * 1e6)
                    seek = seek_at + int(self.trip_ms(draw) * 1e6)
                procs.append(self.member(k, f"{side}-{n}", ["--clock", clock, "--base-time", str(start), "--duration",
                                             str(2 * PLAY_S), "--seek-at", str(seek), "--seek-to", str(SEEK_TO_S),
                                             "--start-margin", str(START_MARGIN_S)]))
            time.sleep(max(0.0, (end - time.monotonic_ns()) / 1e9 + 0.5))
            recorder.terminate(); recorder.wait()
            outputs = []
            for k, p in enumerate(procs, 1):
                out, _ = p.communicate(timeout=30)
                self.log.write(f"--- {side} {n} member {k}\n{out}")
                if p.returncode != 0:
                    raise BenchError(f"{side} ({n}): member {k} exited with status {p.returncode} (log: {self.log.name})")
                outputs.append(out)
        finally:
            for p in procs + helpers:
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill(); p.wait()
        row = {"side": side, "members": n}
        row["audible_ms"], row["audible_after_seek_ms"], row["click_offsets_ms"] = \
            self.audible(path, n, side, recorded_from, seek_at)
        row["video_ms"], row["video_after_seek_ms"], row["seek_to_aligned_ms"] = self.video(f"{side}-{n}", n, seek_at)
        syncs = [float(l.split()[1]) for o in outputs for l in o.splitlines() if l.startswith("synced")]
        rtts = [float(l.split()[4]) for o in outputs for l in o.splitlines() if l.startswith("synced")]
        row["clock_sync_ms"] = summary(syncs) if syncs else None
        row["rtt_average_ms"] = summary(rtts) if rtts else None
        return row

    def audible(self, path, n, side, recorded_from, seek_at, channels=CHANNELS, clock_errors=None):
        """Click spread (ms) over every click heard on all n channels, and over those heard after the seek.
        With `clock_errors` (per member: sorted (monotonic_ns, netclock − monotonic ns) samples) also the spread the
        members' clock errors alone would put between each click's onsets ("clock": a member whose clock reads e
        ahead renders e early), and each member's error at each click."""
        data = clicks.read_s16le(path)
        found = [clicks.clicks(data[c::channels]) for c in range(n)]
        for c, f in enumerate(found):
            if len(f) < 5:
                raise BenchError(f"{side} ({n}): member {c + 1} heard {len(f)} clicks on its channel")
        spreads, after, offsets, clock_spreads, errors_at = [], [], [], [], []
        for click in found[0]:
            onsets = [click["time"]]
            for other in found[1:]:
                near = [o["time"] for o in other if abs(o["time"] - click["time"]) < PAIR_WINDOW_S]
                if not near:
                    break
                onsets.append(min(near, key=lambda t: abs(t - click["time"])))
            if len(onsets) == n:
                spreads.append((max(onsets) - min(onsets)) * 1000)
                offsets.append([round((t - onsets[0]) * 1000, 3) for t in onsets])
                if clock_errors:
                    at = recorded_from + int(click["time"] * 1e9)
                    raw = [error_at(samples, at) for samples in clock_errors]
                    errors = [e / 1e6 for e in raw if e is not None]
                    if len(errors) == len(raw):   # a click outside a member's clock log (its start, its end): none
                        early = [-e for e in errors]
                        clock_spreads.append(max(early) - min(early))
                        errors_at.append([round(e, 3) for e in errors])
                # The recording started (within a few ms) at recorded_from; the first click after the seek follows
                # it by at least the restart, so "after" is unambiguous at a 0.5 s guard.
                if recorded_from + click["time"] * 1e9 > seek_at + 0.5e9:
                    after.append(spreads[-1])
        if clock_errors:
            self.clock_parts = {"clock_ms": summary(clock_spreads), "clock_errors_at_clicks_ms": errors_at}
        return summary(spreads), summary(after), offsets

    def video(self, tag, n, seek_at):
        """Per-frame render spread (ms) over frames every member rendered; seek → aligned (ms)."""
        renders, first_after_seek = {}, []
        for k in range(1, n + 1):
            segment, last_pts, first = 0, -1, None
            for line in open(self.out / f"render-{tag}-{k}.csv"):
                parts = line.strip().split(",")
                if len(parts) != 3:
                    continue
                pts, mono = int(parts[0]), int(parts[1])
                if pts < last_pts:
                    segment += 1
                last_pts = pts
                if segment == 1 and first is None:
                    first = mono
                renders.setdefault((segment, pts), []).append(mono)
            if first is not None:
                first_after_seek.append(first)
        spreads = [(max(v) - min(v)) / 1e6 for v in renders.values() if len(v) == n]
        after = [(max(v) - min(v)) / 1e6 for key, v in renders.items() if len(v) == n and key[0] >= 1]
        seek = (max(first_after_seek) - seek_at) / 1e6 if len(first_after_seek) == n else None
        return summary(spreads), summary(after), seek

    def clock_probe(self, settings, seconds, relayed=True):
        """One probe per setting, simultaneously, each in its own namespace behind its own relay (or, not relayed,
        all on 127.0.0.1 in this namespace): the client clock's true error (its reading − CLOCK_MONOTONIC) after it
        synchronised, and each exchange's own offset error by its round trip."""
        provider = subprocess.Popen([f"{self.binary_dir}/netclock-baseline", "provide", "--address", "127.0.0.1",
                                     "--port", str(free_port())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=self.log, text=True)
        port = int(provider.stdout.readline().split()[1])
        helpers, probes = [provider], []
        try:
            for k, (name, flags) in enumerate(settings, 1):
                if relayed:
                    helpers.append(self.relay(k, udp=[port]))
                    where = ["ip", "netns", "exec", namespace(k)]
                probe = [f"{self.binary_dir}/netclock-baseline", "probe", "--clock",
                         f"{host_address(k) if relayed else '127.0.0.1'}:{port}", "--seconds", str(seconds), *flags]
                probes.append(subprocess.Popen((where if relayed else []) + probe, stdout=subprocess.PIPE,
                                               stderr=self.log, text=True))
            rows = []
            for (name, flags), p in zip(settings, probes):
                out, _ = p.communicate(timeout=seconds + 30)
                if p.returncode != 0:
                    raise BenchError(f"clock probe {name} exited with status {p.returncode}")
                rows.append(probe_row(name, flags, relayed, out, seconds))
            return rows
        finally:
            for p in probes + helpers:
                if p.poll() is None:
                    p.terminate(); p.wait(timeout=10)

    def pan(self, members, stop):
        """coord-stereo: pans each member's sink inputs (found by process id) hard left / right, again for any new
        one, until `stop` is set."""
        done = set()
        while not stop.is_set():
            listing = subprocess.run(["pactl", "list", "sink-inputs"], capture_output=True, text=True).stdout
            index = None
            for line in listing.splitlines():
                line = line.strip()
                if line.startswith("Sink Input #"):
                    index = line.split("#", 1)[1]
                elif line.startswith("application.process.id") and index is not None:
                    pid = int(line.split("=", 1)[1].strip().strip('"'))
                    for k, m in enumerate(members):
                        if m.pid == pid and index not in done:
                            subprocess.run(["pactl", "set-sink-input-volume", index, *STEREO_PAN[k].split()],
                                           stderr=self.log)
                            self.log.write(f"panned sink input {index} of member {k + 1}: {STEREO_PAN[k]}\n")
                            done.add(index)
            stop.wait(0.05)

    def coordinated(self, n, side="coordinated", member_flags=()):
        """multiview host (root namespace, 0.0.0.0, one headless muted view) + n `multiview join` members, each in
        its namespace dialling 127.0.0.1 where a relay inside that namespace forwards (delayed) to 10.77.k.1: the
        control channel (TCP) and the net clock (UDP). Run only when this build has the net CLI."""
        binary = f"{self.binary_dir}/multiview"
        stereo = side in ("coord-stereo", "coord-st-prev")
        if stereo and n != 2:
            return {"side": side, "members": n, "not_run": "one stereo sink: 2 members only"}
        probe = subprocess.run([binary, "host", "--help"], capture_output=True, text=True)
        if probe.returncode != 0:
            return {"side": side, "members": n, "not_run": "this build has no `multiview host` (net branch)"}
        tag, token, port = f"{side}-{n}", "bench-network-token", free_port()
        total_s = 2 * PLAY_S + 10
        host = subprocess.Popen([binary, "host", "--listen", f"0.0.0.0:{port}", "--headless", "--no-audio",
                                 "--token", token, "--duration", str(total_s), MEDIA[0]],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        helpers, members = [host], []
        try:
            clock_port = None
            deadline = time.monotonic() + 30
            while clock_port is None and time.monotonic() < deadline:
                line = host.stdout.readline()
                if not line:
                    break
                self.log.write(f"[host] {line}")
                if "net clock on UDP port" in line:
                    clock_port = int(line.rsplit(" ", 1)[1])
            if clock_port is None:
                raise BenchError(f"{side} ({n}): multiview host did not report its session and clock ports")
            threading.Thread(target=lambda: [self.log.write(f"[host] {l}") for l in host.stdout], daemon=True).start()
            for k in range(1, n + 1):
                relay = subprocess.Popen(["ip", "netns", "exec", namespace(k), "python3", "Scripts/lib/delay-relay.py",
                                          "--listen", "127.0.0.1", "--target", f"{host_address(k)}", "--udp", str(clock_port),
                                          "--tcp", str(port), "--delay-ms", str(self.delay_ms), "--jitter-ms",
                                          str(self.jitter_ms), "--seed", str(k)],
                                         stdout=subprocess.PIPE, stderr=self.log, text=True)
                helpers.append(relay)
                if relay.stdout.readline().strip() != "ready":
                    raise BenchError(f"{side} ({n}): relay in {namespace(k)} did not start")
            path = self.out / f"{tag}.raw"
            recorder, recorded_from = self.record(None, path, stereo), time.monotonic_ns()
            time.sleep(SINK_SETTLE_S)
            joined = time.monotonic_ns()
            clock_logs = [self.out / f"clock-{tag}-{k}.csv" for k in range(1, n + 1)]
            for k in range(1, n + 1):
                env = dict(os.environ, PULSE_SINK="mvnet_st" if stereo else f"mvnet_m{k}")
                members.append(subprocess.Popen(
                    ["ip", "netns", "exec", namespace(k), binary, "join", f"127.0.0.1:{port}", "--token", token,
                     "--headless", "--name", f"m{k}", "--duration", str(total_s),
                     "--render-log", str(self.out / f"render-{tag}-{k}.json"),
                     "--clock-log", str(clock_logs[k - 1]), *member_flags, media(k)],
                    env=env, stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT, text=True))
            stop_panning = threading.Event()
            if stereo:
                threading.Thread(target=self.pan, args=(members, stop_panning), daemon=True).start()
            time.sleep(PLAY_S)
            seek_at = time.monotonic_ns()
            host.stdin.write(f"seek {SEEK_TO_S}\n"); host.stdin.flush()
            time.sleep(PLAY_S)
            recorder.terminate(); recorder.wait()
            stop_panning.set()
            for m in members:
                m.stdin.write("q\n"); m.stdin.flush()
            for k, m in enumerate(members, 1):
                if m.wait(timeout=30) != 0:
                    raise BenchError(f"{side} ({n}): member {k} exited with status {m.returncode} (log: {self.log.name})")
            host.stdin.write("end\n"); host.stdin.flush()
        finally:
            for p in members + helpers:
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill(); p.wait()
        row = {"side": side, "members": n}
        errors = [read_clock_log(p) if p.exists() else [] for p in clock_logs]
        self.clock_parts = {}
        row["audible_ms"], row["audible_after_seek_ms"], row["click_offsets_ms"] = \
            self.audible(path, n, side, recorded_from, seek_at, len(STEREO_CHANNELS) if stereo else CHANNELS,
                         errors if all(errors) else None)
        row.update(self.clock_parts)
        renders, firsts, joins, true_renders = {}, [], [], {}
        for k in range(1, n + 1):
            frames = json.load(open(self.out / f"render-{tag}-{k}.json"))
            frames.sort(key=lambda f: f["renderClockNs"])
            segment, last, first = 0, -1, None
            for f in frames:
                if f["mediaTimeNs"] < last:
                    segment += 1
                last = f["mediaTimeNs"]
                if f["renderClockNs"] > seek_at and segment >= 1 and first is None:
                    first = f["renderClockNs"]
                renders.setdefault((segment, f["mediaTimeNs"]), []).append(f["renderClockNs"])
                # The true instant: the member's clock reading less its error then (looked up at the reading: the
                # error moves by far less than a frame's worth in the few ms that differ).
                error = error_at(errors[k - 1], f["renderClockNs"]) if errors[k - 1] else None
                if error is not None:
                    true_renders.setdefault((segment, f["mediaTimeNs"]), []).append(f["renderClockNs"] - error)
            if frames:
                joins.append((frames[0]["renderClockNs"] - joined) / 1e6)
            if first is not None:
                firsts.append(first)
        row["video_ms"] = summary([(max(v) - min(v)) / 1e6 for v in renders.values() if len(v) == n])
        row["video_after_seek_ms"] = summary([(max(v) - min(v)) / 1e6 for key, v in renders.items()
                                              if len(v) == n and key[0] >= 1])
        if true_renders:
            row["video_true_ms"] = summary([(max(v) - min(v)) / 1e6 for v in true_renders.values() if len(v) == n])
        row["seek_to_aligned_ms"] = (max(firsts) - seek_at) / 1e6 if len(firsts) == n else None
        row["join_to_first_frame_ms"] = summary(joins) if joins else None
        row["clock_sync_ms"], row["rtt_average_ms"] = None, None
        return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary-dir", required=True)
    parser.add_argument("--members", default="2 4")
    parser.add_argument("--delay-ms", type=float, default=20)
    parser.add_argument("--jitter-ms", type=float, default=5)
    parser.add_argument("--out", default="out/bench")
    parser.add_argument("--sections", default="clock,rows")
    parser.add_argument("--sides", default="raw-netclock,uncoordinated,coord-1st-sync,coordinated,coord-stereo")
    args = parser.parse_args()
    bench = Bench(args)
    sections = args.sections.split(",")
    clock_rows = []
    if "clock" in sections:
        print("... clock tunings", file=sys.stderr, flush=True)
        for batch in CLOCK_SETTINGS:
            clock_rows += bench.clock_probe(batch, CLOCK_PROBE_S)
        for batch in LOOPBACK_SETTINGS:
            clock_rows += bench.clock_probe(batch, CLOCK_PROBE_S, relayed=False)
    rows = []
    for n in [int(x) for x in args.members.split()] if "rows" in sections else []:
        for side in args.sides.split(","):
            print(f"... {side}, {n} members", file=sys.stderr, flush=True)
            before = load()
            if side in ("coordinated", "coord-stereo"):
                row = bench.coordinated(n, side)
            elif side == "coord-1st-sync":
                row = bench.coordinated(n, "coord-1st-sync", ["--join-unsettled"])
            elif side == "coord-libpulse":
                # The same with the follower reading libpulse's smoothed stream time (AudioPlayoutTiming.libpulse):
                # before PulseTimingTap, in the same run.
                row = bench.coordinated(n, side, ["--audio-timing", "libpulse"])
            elif side in ("coord-prev", "coord-st-prev"):
                # The same with the previous net clock tuning (NetClockTuning.previous): before, in the same run.
                row = bench.coordinated(n, side, ["--net-clock-tuning", "previous"])
            elif side in ("raw-netclock", "uncoordinated"):
                row = bench.run_baseline(side, n)
            else:
                raise BenchError(f"unknown side {side}")
            row["load_before"], row["load_after"] = before, load()
            rows.append(row)
    result = {"delay_ms": args.delay_ms, "jitter_ms": args.jitter_ms, "clock": clock_rows, "rows": rows}
    (pathlib.Path(args.out) / "network.json").write_text(json.dumps(result, indent=1))
    print_report(args.delay_ms, args.jitter_ms, CLOCK_PROBE_S, clock_rows, rows)


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        print(f"error: bench-network: {error}", file=sys.stderr)
        sys.exit(1)
