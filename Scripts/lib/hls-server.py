#!/usr/bin/env python3
"""A real HTTP server for the HLS views, with an optional shaped link.

    python3 Scripts/lib/hls-server.py --root out/hls [--port 8080] [--rate 9M] [--port-file F] [--stats F]

Serves the files under --root on 127.0.0.1 (HTTP/1.1, keep-alive, Range requests — hlsdemux2 uses byte ranges
for I-frame playlists and playbin3 seeks with them). With --rate every response body goes through one shared
token bucket: all connections together get at most RATE bits per second, interleaved in 8 KB chunks in arrival
order, like one bottleneck link. Why not tc in a network namespace (it does work as root here): the tests run
the players inside the XCTest process, which cannot move into a namespace without taking the other tests with
it; a pacing server shapes exactly the same bytes and needs no privileges in CI. What it does not model is
latency and TCP queueing on the link.

--stats F: every second, F gets a JSON line {"t": seconds, "bytes": {"angle1": n, ...}} with the cumulative
bytes sent per top-level folder (the bench derives the total bitrate from it). --port 0 picks a free port;
--port-file F receives the port once listening.
"""
import argparse, http.server, json, os, re, socketserver, sys, threading, time

CHUNK = 8192
TYPES = {".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t", ".json": "application/json",
         ".mp4": "video/mp4", ".webm": "video/webm", ".mkv": "video/x-matroska"}


def parse_rate(text):
    m = re.fullmatch(r"([0-9.]+)([kKmMgG]?)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"bad rate {text!r} (e.g. 9M, 500k, 0 = unlimited)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    return float(m.group(1)) * scale


class Link:
    """A virtual link of `bps` bits/s: each chunk reserves the next free slot on it."""
    def __init__(self, bps):
        self.bytes_per_s = bps / 8.0
        self.lock = threading.Lock()
        self.free_at = time.monotonic()

    def send(self, n):
        if self.bytes_per_s <= 0:
            return
        with self.lock:
            start = max(time.monotonic(), self.free_at)
            self.free_at = start + n / self.bytes_per_s
            done = self.free_at
        delay = done - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--rate", type=parse_rate, default=0.0)
    ap.add_argument("--port-file")
    ap.add_argument("--stats")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    link = Link(args.rate)
    counters, counters_lock = {}, threading.Lock()

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
            size = os.path.getsize(path)
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
            return (path, start, end), None, rel

        def do_HEAD(self):
            self.head()

        def do_GET(self):
            span, body, rel = self.head()
            try:
                if span is None:
                    self.wfile.write(body)
                    return
                path, start, end = span
                folder = rel.split("/", 1)[0]
                with open(path, "rb") as f:
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

    server = Server(("127.0.0.1", args.port), Handler)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(args.port_file + ".tmp", args.port_file)
    if args.stats:
        began = time.monotonic()

        def write_stats():
            with open(args.stats, "a") as out:
                while True:
                    time.sleep(1.0)
                    with counters_lock:
                        snapshot = dict(counters)
                    out.write(json.dumps({"t": round(time.monotonic() - began, 3), "bytes": snapshot}) + "\n")
                    out.flush()
        threading.Thread(target=write_stats, daemon=True).start()
    print(f"hls-server: http://127.0.0.1:{server.server_address[1]}/ from {root}"
          + (f", link {args.rate / 1e6:.2f} Mbit/s" if args.rate > 0 else ""), file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
