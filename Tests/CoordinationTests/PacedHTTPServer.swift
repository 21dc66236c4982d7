import Foundation
import TestSupport
import XCTest

/// A local HTTP server for one file that answers Range requests and sends at a fixed rate, which a test can
/// change while it runs (`setRate`), and freeze (SIGSTOP) and thaw (SIGCONT) to stall the views reading from it.
///
/// Why not `python3 -m http.server`: it does not answer Range requests (playbin3 seeks with them, and every
/// coordinated start is a seek), and it sends the whole file at once, so a 440 KB file sits in the loopback
/// socket buffers and stopping the server starves nothing. The server below is as small as possible: ranges,
/// and a send rate, read from a file so that it can change between two 2 KB chunks. Like any paced sender it
/// owes what it did not send while frozen, and sends that at once when thawed.
struct PacedHTTPServer {
    static let script = #"""
    import http.server, os, re, socketserver, sys, time
    path, ratefile, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(path, 'rb').read()
    name = '/' + os.path.basename(path)
    current = {'mtime': None, 'rate': 1.0}

    def rate():
        try:
            mtime = os.stat(ratefile).st_mtime_ns
            if mtime != current['mtime']:
                current['rate'] = float(open(ratefile).read())
                current['mtime'] = mtime
        except (OSError, ValueError):
            pass
        return current['rate']

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        def log_message(self, *args): pass
        def headers_for_request(self):
            if self.path != name:
                self.send_error(404)
                return None
            start, end = 0, len(data) - 1
            match = re.match(r'bytes=(\d*)-(\d*)', self.headers.get('Range', ''))
            if match:
                if match.group(1): start = int(match.group(1))
                if match.group(2): end = min(end, int(match.group(2)))
                self.send_response(206)
                self.send_header('Content-Range', f'bytes {start}-{end}/{len(data)}')
            else:
                self.send_response(200)
            self.send_header('Content-Type', 'video/mp4')
            self.send_header('Accept-Ranges', 'bytes')
            self.send_header('Content-Length', str(end - start + 1))
            self.end_headers()
            return start, end
        def do_HEAD(self): self.headers_for_request()
        def do_GET(self):
            span = self.headers_for_request()
            if span is None: return
            start, end = span
            due, sent = time.monotonic(), 0
            try:
                while start + sent <= end:
                    n = min(2048, end + 1 - start - sent)
                    self.wfile.write(data[start + sent:start + sent + n])
                    sent += n
                    due += n / rate()
                    ahead = due - time.monotonic()
                    if ahead > 0: time.sleep(ahead)
            except (BrokenPipeError, ConnectionResetError):
                pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    server = Server(('127.0.0.1', 0), Handler)
    with open(portfile + '.tmp', 'w') as f: f.write(str(server.server_address[1]))
    os.rename(portfile + '.tmp', portfile)
    server.serve_forever()
    """#

    let process: BackgroundTool
    /// The file's URL on the server.
    let url: String
    private let rateFile: String

    /// Starts the server for `file` at `bytesPerSecond` in `dir`; `test` stops it (SIGKILL also ends a stopped
    /// process) when it ends.
    static func start(serving file: String, bytesPerSecond: Int, in dir: TemporaryDirectory,
                      for test: XCTestCase) async throws -> PacedHTTPServer {
        let script = dir.path("serve.py"), portFile = dir.path("port"), rateFile = dir.path("rate")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        try String(bytesPerSecond).write(toFile: rateFile, atomically: true, encoding: .utf8)
        let server = try BackgroundTool(["python3", script, file, rateFile, portFile])
        test.addTeardownBlock { server.stop() }
        let up = await eventually(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: portFile) || !server.isRunning }
        guard up, let port = try? String(contentsOfFile: portFile, encoding: .utf8) else {
            throw UnexpectedNil(description: "the HTTP server did not start (\(server.exitDescription)): \(server.output())")
        }
        return PacedHTTPServer(process: server, url: "http://127.0.0.1:\(port)/\((file as NSString).lastPathComponent)",
                               rateFile: rateFile)
    }

    /// Sends at `bytesPerSecond` from the next chunk on (every connection).
    func setRate(_ bytesPerSecond: Int) throws {
        try String(bytesPerSecond).write(toFile: rateFile, atomically: true, encoding: .utf8)
    }

    var processIdentifier: pid_t { process.processIdentifier }
}
