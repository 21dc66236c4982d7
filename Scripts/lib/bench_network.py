"""The runs and figures of Scripts/bench-network (called by it once the namespaces, PulseAudio sinks and binaries are
ready; see that script's header for what each row is). Standard library + numpy (through clicks.py)."""
import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clicks  # noqa: E402

MEDIA = [os.path.abspath(p) for p in ("Media/angle1-wide.mp4", "Media/angle2-left.webm", "Media/angle3-right.mkv",
                                      "Media/angle4-overhead.mp4")]
LEAD_S = 5.0          # member start → base time: process start, clock sync over the relay, preroll
PLAY_S = 12.0         # played before the seek, and again after it
SEEK_TO_S = 2.0
START_MARGIN_S = 1.0  # raw members restart at seek instant + this
PAIR_WINDOW_S = 0.5


class BenchError(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, socket.socket() as t:
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t.bind(("127.0.0.1", port))   # free for TCP too (the control channel may use the same number)
        return port


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * (len(ordered) - 1)))))
    return ordered[rank]


def summary(values):
    return {"n": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99),
            "max": max(values) if values else None}


class Bench:
    def __init__(self, args):
        self.binary_dir = args.binary_dir
        self.delay_ms, self.jitter_ms = args.delay_ms, args.jitter_ms
        self.out = pathlib.Path(args.out) / "network"
        self.log = open(self.out / "bench-network.log", "w")

    def relay(self, k, udp=(), tcp=()):
        """A delay relay on 10.77.k.1 (host namespace) forwarding to the host's 127.0.0.1 ports."""
        command = ["python3", "Scripts/lib/delay-relay.py", "--listen", f"10.77.{k}.1", "--delay-ms",
                   str(self.delay_ms), "--jitter-ms", str(self.jitter_ms), "--seed", str(k)]
        command += [a for p in udp for a in ("--udp", str(p))] + [a for p in tcp for a in ("--tcp", str(p))]
        if subprocess.run(["chrt", "-f", "20", "true"], capture_output=True).returncode == 0:
            command = ["chrt", "-f", "20"] + command   # keep the relay's own timer error small on busy cores
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        if proc.stdout.readline().strip() != "ready":
            raise BenchError(f"delay relay for member {k} did not start")
        return proc

    def member(self, k, tag, args):
        """One netclock-baseline member in namespace mvnet-k, its audio on channel k."""
        env = dict(os.environ, PULSE_SINK=f"mvnet_m{k}")
        command = ["ip", "netns", "exec", f"mvnet-{k}", f"{self.binary_dir}/netclock-baseline", "play",
                   "--media", MEDIA[k - 1], "--record", str(self.out / f"render-{tag}-{k}.csv"), *args]
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def record(self, seconds, path):
        return subprocess.Popen(["parecord", "--raw", "--latency-msec=20", "--format=s16le", "--rate=48000",
                                 "--channels=4", "--channel-map=front-left,front-right,rear-left,rear-right", "--device=mvnet.monitor", str(path)], stderr=self.log)

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
            base = time.monotonic_ns() + int(LEAD_S * 1e9)
            seek_at = base + int(PLAY_S * 1e9)
            end = seek_at + int((START_MARGIN_S + PLAY_S) * 1e9)
            for k in range(1, n + 1):
                clock = f"10.77.{k}.1:{port}" if side == "raw-netclock" else "local"
                procs.append(self.member(k, f"{side}-{n}", ["--clock", clock, "--base-time", str(base), "--duration",
                                             str(2 * PLAY_S), "--seek-at", str(seek_at), "--seek-to", str(SEEK_TO_S),
                                             "--start-margin", str(START_MARGIN_S)]))
            path = self.out / f"{side}-{n}.raw"
            time.sleep(max(0.0, (base - time.monotonic_ns()) / 1e9 - 1.0))
            recorder = self.record(None, path)
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
        row["audible_ms"], row["click_offsets_ms"] = self.audible(path, n, side)
        row["video_ms"], row["seek_to_aligned_ms"] = self.video(f"{side}-{n}", n, seek_at)
        syncs = [float(l.split()[1]) for o in outputs for l in o.splitlines() if l.startswith("synced")]
        rtts = [float(l.split()[4]) for o in outputs for l in o.splitlines() if l.startswith("synced")]
        row["clock_sync_ms"] = summary(syncs) if syncs else None
        row["rtt_average_ms"] = summary(rtts) if rtts else None
        return row

    def audible(self, path, n, side):
        data = clicks.read_s16le(path)
        found = [clicks.clicks(data[c::4]) for c in range(n)]
        for c, f in enumerate(found):
            if len(f) < 5:
                raise BenchError(f"{side} ({n}): member {c + 1} heard {len(f)} clicks on its channel")
        spreads, offsets = [], []
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
        return summary(spreads), offsets

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
        seek = (max(first_after_seek) - seek_at) / 1e6 if len(first_after_seek) == n else None
        return summary(spreads), seek

    def coordinated(self, n):
        """multiview host/join rows: run only when this build has the net CLI."""
        binary = f"{self.binary_dir}/multiview"
        probe = subprocess.run([binary, "host", "--help"], capture_output=True, text=True)
        if probe.returncode != 0:
            return {"side": "coordinated", "members": n, "not_run": "this build has no `multiview host` (net branch)"}
        return {"side": "coordinated", "members": n, "not_run": "the coordinated driver is not written yet"}


def fmt(s, key="p50"):
    return "-" if not s or s.get(key) is None else f"{s[key]:.3f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary-dir", required=True)
    parser.add_argument("--members", default="2 4")
    parser.add_argument("--delay-ms", type=float, default=20)
    parser.add_argument("--jitter-ms", type=float, default=5)
    parser.add_argument("--out", default="out/bench")
    args = parser.parse_args()
    bench = Bench(args)
    rows = []
    for n in [int(x) for x in args.members.split()]:
        for side in ("raw-netclock", "uncoordinated"):
            print(f"... {side}, {n} members", file=sys.stderr, flush=True)
            rows.append(bench.run_baseline(side, n))
        rows.append(bench.coordinated(n))
    result = {"delay_ms": args.delay_ms, "jitter_ms": args.jitter_ms, "rows": rows}
    (pathlib.Path(args.out) / "network.json").write_text(json.dumps(result, indent=1))
    print(f"\nNetwork sync, members in namespaces, {args.delay_ms:g} ± {args.jitter_ms:g} ms relayed each way "
          f"(ms; audible = click onsets on the members' channels, video = render instants on CLOCK_MONOTONIC)")
    print(f"{'row':<15}{'n':>3} {'audible p50':>11} {'p99':>7} {'max':>7} {'clicks':>6}  {'video p50':>9} {'p99':>7}"
          f" {'max':>7}  {'seek→al':>8} {'sync p50':>8} {'rtt':>6}")
    for r in rows:
        if "not_run" in r:
            print(f"{r['side']:<15}{r['members']:>3}  not run: {r['not_run']}")
            continue
        a, v = r["audible_ms"], r["video_ms"]
        seek = "-" if r["seek_to_aligned_ms"] is None else f"{r['seek_to_aligned_ms']:.0f}"
        print(f"{r['side']:<15}{r['members']:>3} {fmt(a):>11} {fmt(a, 'p99'):>7} {fmt(a, 'max'):>7} {a['n']:>6}  "
              f"{fmt(v):>9} {fmt(v, 'p99'):>7} {fmt(v, 'max'):>7}  {seek:>8} "
              f"{fmt(r['clock_sync_ms']) if r['clock_sync_ms'] else '-':>8} "
              f"{fmt(r['rtt_average_ms']) if r['rtt_average_ms'] else '-':>6}")
    print("goals: audible and video p99 < 1 ms across hosts; join → aligned < 1.5 s")


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        print(f"error: bench-network: {error}", file=sys.stderr)
        sys.exit(1)
