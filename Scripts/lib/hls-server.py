#!/usr/bin/env python3
"""A real HTTP server for the HLS views, with an optional shaped link.

    python3 Scripts/lib/hls-server.py --root out/hls [--port 8080] [--bind ADDR] [--rate 9M | --rate 7M@0,3.5M@20,9M@40]
                                      [--repeat N] [--port-file F] [--pid-file F] [--stats F] [--log F]

Serves the files under --root on 127.0.0.1 (HTTP/1.1, keep-alive, Range requests — hlsdemux2 uses byte ranges
for I-frame playlists and playbin3 seeks with them). With --rate every response body goes through one shared
token bucket: all connections together get at most RATE bits per second, interleaved in 8 KB chunks in arrival
order, like one bottleneck link. A schedule `RATE@SECONDS,...` changes the rate at those times, counted from
the first request the server answers (so "3.5M@20" means 20 s into playback, however long the test took to
start); a plain RATE is `RATE@0`. Why not tc in a network namespace (it does work as root here): the tests run
the players inside the XCTest process, which cannot move into a namespace without taking the other tests with
it; a pacing server shapes exactly the same bytes and needs no privileges in CI. What it does not model is
latency and TCP queueing on the link. For that, the tests and the bench also run this server inside a network
namespace behind a veth whose other end is shaped with `tc ... tbf` (--bind gives the veth address; default
127.0.0.1).

SIGUSR1: the schedule's next step starts now (the later ones move with it), so a test can change the link at the
moment its players are where it wants them (an event) rather than at a time guessed to come after it; e.g.
`--rate 7M@0,3.5M@600` and a SIGUSR1 once every view has settled.

--repeat N: media playlists (VOD, with #EXT-X-ENDLIST) are served N times over, the copies joined by
#EXT-X-DISCONTINUITY: the 24 s test clips play for N x 24 s, long enough for a link that changes mid-run.

--stats F: every second, F gets a JSON line {"t": seconds, "bytes": {"angle1": n, ...}, "rate": bits/s} with the
cumulative bytes sent per top-level folder and the scheduled rate then (0 before the first request or when
unlimited; the bench derives the total bitrate and utilisation from it). --log F: one JSON line per media
segment request {"t": seconds, "path": "angle1/v1080/seg00003.ts"} (which rung each view fetched, when).
--port 0 picks a free port;
--port-file F receives the port once listening; --pid-file F this server's process id (the one to send SIGUSR1:
`python3` may be a launcher that runs the interpreter as its child).
"""
import argparse, http.server, io, json, os, re, signal, socketserver, sys, threading, time

CHUNK = 8192
TYPES = {".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t", ".json": "application/json",
         ".mp4": "video/mp4", ".webm": "video/webm", ".mkv": "video/x-matroska"}


def parse_one_rate(text):
    m = re.fullmatch(r"([0-9.]+)([kKmMgG]?)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"bad rate {text!r} (e.g. 9M, 500k, 0 = unlimited, 7M@0,3.5M@20)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    return float(m.group(1)) * scale


def parse_rate(text):
    """'9M' -> [(0, 9e6)]; '7M@0,3.5M@20' -> [(0, 7e6), (20, 3.5e6)] (sorted by time, must start at 0)."""
    steps = []
    for part in text.split(","):
        rate, _, at = part.strip().partition("@")
        try:
            when = float(at) if at else 0.0
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad time in {part!r} (RATE@SECONDS)")
        steps.append((when, parse_one_rate(rate)))
    steps.sort()
    if steps[0][0] != 0:
        raise argparse.ArgumentTypeError(f"the rate schedule {text!r} must start at 0 (e.g. 7M@0,3.5M@20)")
    return steps


def repeated_playlist(path, times):
    """The media playlist at `path` with its segments listed `times` times, or None when it is not a finished
    media playlist (a master playlist, a live one) or times < 2."""
    if times < 2 or not path.endswith(".m3u8"):
        return None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if "#EXT-X-ENDLIST" not in lines or not any(l.startswith("#EXTINF") for l in lines):
        return None
    first = next(i for i, l in enumerate(lines) if l.startswith("#EXTINF") or l.startswith("#EXT-X-BYTERANGE"))
    header = lines[:first]
    segments = [l for l in lines[first:] if l and l != "#EXT-X-ENDLIST"]
    out = header + segments
    for _ in range(times - 1):
        out += ["#EXT-X-DISCONTINUITY"] + segments
    return ("\n".join(out + ["#EXT-X-ENDLIST"]) + "\n").encode()


class Link:
    """A virtual link following a schedule of (seconds, bits/s): each chunk reserves the next free slot on it at
    the rate scheduled when the slot starts. The schedule's clock starts with the first chunk sent. A slot may
    start up to SLACK seconds in the past (a token bucket of SLACK x rate, like tbf's burst): without it every
    sleep's overshoot is lost and one connection gets only ~85 % of the rate (measured at 9 Mbit/s)."""
    SLACK = 0.03

    def __init__(self, schedule):
        self.schedule = schedule
        self.lock = threading.Lock()
        self.free_at = time.monotonic()
        self.began = None

    def rate_at(self, now):
        if self.began is None:
            return 0.0
        rate = self.schedule[0][1]
        for when, bps in self.schedule:
            if now - self.began >= when:
                rate = bps
        return rate

    def step_now(self):
        """The next step of the schedule starts now; the steps after it keep their distance from it. Before the
        first request (the schedule's clock has not started) or after the last step: nothing changes."""
        with self.lock:
            if self.began is None:
                return
            elapsed = time.monotonic() - self.began
            later = [i for i, (when, _) in enumerate(self.schedule) if when > elapsed]
            if not later:
                return
            first = later[0]
            shift = self.schedule[first][0] - elapsed
            self.schedule = self.schedule[:first] + [(when - shift, bps) for when, bps in self.schedule[first:]]

    def start(self):
        with self.lock:
            if self.began is None:
                self.began = time.monotonic()

    def send(self, n):
        self.start()
        with self.lock:
            start = max(time.monotonic() - self.SLACK, self.free_at)
            bytes_per_s = self.rate_at(start) / 8.0
            if bytes_per_s <= 0:
                return
            self.free_at = start + n / bytes_per_s
            done = self.free_at
        delay = done - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--rate", type=parse_rate, default=[(0.0, 0.0)])
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--port-file")
    ap.add_argument("--pid-file")
    ap.add_argument("--stats")
    ap.add_argument("--log")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    link = Link(args.rate)
    counters, counters_lock = {}, threading.Lock()
    began = time.monotonic()
    request_log = open(args.log, "a") if args.log else None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def resolve(self):
            rel = self.path.split("?", 1)[0].lstrip("/")
            # normpath, not realpath: the tests' web roots link the generated angles in with symlinks.
            path = os.path.normpath(os.path.join(root, rel))
            if not (path == root or path.startswith(root + os.sep)) or not os.path.isfile(path):
                return None, rel
            return path, rel

        def head(self):
            path, rel = self.resolve()
            if path is None:
                body = b"not found\n"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return None, body, rel
            override = repeated_playlist(path, args.repeat)
            size = len(override) if override is not None else os.path.getsize(path)
            start, end = 0, size - 1
            m = re.match(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
            if m and (m.group(1) or m.group(2)):
                if m.group(1):
                    start = int(m.group(1))
                    if m.group(2):
                        end = min(end, int(m.group(2)))
                else:
                    start = max(0, size - int(m.group(2)))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            else:
                self.send_response(200)
            self.send_header("Content-Type", TYPES.get(os.path.splitext(path)[1], "application/octet-stream"))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(max(0, end - start + 1)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            return (path, start, end, override), None, rel

        def do_HEAD(self):
            self.head()

        def do_GET(self):
            link.start()
            span, body, rel = self.head()
            try:
                if span is None:
                    self.wfile.write(body)
                    return
                path, start, end, override = span
                folder = rel.split("/", 1)[0]
                if request_log and rel.endswith(".ts"):
                    with counters_lock:
                        request_log.write(json.dumps({"t": round(time.monotonic() - began, 3), "path": rel}) + "\n")
                        request_log.flush()
                with (io.BytesIO(override) if override is not None else open(path, "rb")) as f:
                    f.seek(start)
                    left = end - start + 1
                    while left > 0:
                        data = f.read(min(CHUNK, left))
                        if not data:
                            break
                        link.send(len(data))
                        self.wfile.write(data)
                        left -= len(data)
                        with counters_lock:
                            counters[folder] = counters.get(folder, 0) + len(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((args.bind, args.port), Handler)
    # The handler runs on the main thread (inside serve_forever); the step takes the link's lock, so it runs on a
    # thread of its own rather than wait for that lock inside a signal handler.
    # A signal mask is inherited: a parent that blocks SIGUSR1 in its threads (a test process may) would leave the
    # signal pending here for ever.
    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=link.step_now, daemon=True).start())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    if args.pid_file:
        with open(args.pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(args.pid_file + ".tmp", args.pid_file)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(args.port_file + ".tmp", args.port_file)
    if args.stats:

        def write_stats():
            with open(args.stats, "a") as out:
                while True:
                    time.sleep(1.0)
                    with counters_lock:
                        snapshot = dict(counters)
                    now = time.monotonic()
                    out.write(json.dumps({"t": round(now - began, 3), "bytes": snapshot,
                                          "rate": link.rate_at(now)}) + "\n")
                    out.flush()
        threading.Thread(target=write_stats, daemon=True).start()
    schedule = ", ".join(f"{bps / 1e6:.2f} Mbit/s from {when:g} s" for when, bps in args.rate if bps > 0)
    print(f"hls-server: http://{args.bind}:{server.server_address[1]}/ from {root}"
          + (f", link {schedule}" if schedule else ""), file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
