import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import SyncAnalysis
import TestSupport
import XCTest

/// A real network stall: one view plays a bundled file from a local HTTP server that sends at a little more than
/// the media's bitrate; the server is frozen (SIGSTOP) so the view runs dry, then thawed (SIGCONT). The view must
/// suspend itself (`stallRecovery`) without holding up the others, and rejoin the group's time when its buffer
/// is full again.
///
/// Why not `python3 -m http.server`: it does not answer Range requests (playbin3 seeks with them, and every
/// coordinated start is a seek), and it sends the whole file at once, so a 440 KB file sits in the loopback
/// socket buffers and stopping the server starves nothing. The server below is as small as possible: ranges,
/// and a fixed send rate.
final class StallRecoveryTests: XCTestCase {
    static let serverScript = #"""
    import http.server, os, re, socketserver, sys, time
    path, rate, portfile = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    data = open(path, 'rb').read()
    name = '/' + os.path.basename(path)

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
            began, sent = time.monotonic(), 0
            try:
                while start + sent <= end:
                    n = min(2048, end + 1 - start - sent)
                    self.wfile.write(data[start + sent:start + sent + n])
                    sent += n
                    ahead = sent / rate - (time.monotonic() - began)
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

    /// Starts the server for `file` at `bytesPerSecond`; returns it and the file's URL.
    private func startServer(serving file: String, bytesPerSecond: Int, in dir: TemporaryDirectory) async throws -> (BackgroundTool, String) {
        let script = dir.path("serve.py"), portFile = dir.path("port")
        try Self.serverScript.write(toFile: script, atomically: true, encoding: .utf8)
        let server = try BackgroundTool(["python3", script, file, String(bytesPerSecond), portFile])
        addTeardownBlock { server.stop() }   // SIGKILL also ends a stopped process
        let up = await eventually(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: portFile) || !server.isRunning }
        guard up, let port = try? String(contentsOfFile: portFile, encoding: .utf8) else {
            throw UnexpectedNil(description: "the HTTP server did not start (\(server.exitDescription)): \(server.output())")
        }
        return (server, "http://127.0.0.1:\(port)/\((file as NSString).lastPathComponent)")
    }

    func testAStalledViewSuspendsItselfAndRejoinsAlignedWhenItsBufferRefills() async throws {
        let dir = try TemporaryDirectory()
        // angle1-wide.mp4 is 441760 bytes for 24 s (18.4 KB/s): 40 KB/s keeps a few seconds ahead, not the file.
        let (server, url) = try await startServer(serving: Media.angles[0], bytesPerSecond: 40_000, in: dir)
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[3], number: 1, item: "event")
        let remote = try await set.add(url, number: 2, item: "event")
        let events = await remote.coordinator.eventLog(clock: set.clock)
        let remoteLog = await remote.player.eventLog(clock: set.clock)
        let localLog = await set.players[0].eventLog(clock: set.clock)
        try await set.playAll()
        let rendering = await set.waitRendering(since: 0, count: 10)
        check(rendering, "\(await set.statuses())")

        // Before the stall: the remote view plays steadily with the group (no suspension for a second).
        let steady = await eventually(timeout: .seconds(6)) {
            let reasons = await remote.coordinator.suspensionReasons
            guard reasons.isEmpty, await set.allPlaying() else { return false }
            let since = set.nowNs - 1_000_000_000
            return set.frames(since: since, views: [2]).count >= 25
                && !events.since(since).contains { $0.value == .suspensionBegan(.stallRecovery) }
        }
        check(steady, "the remote view never played steadily before the stall: \(events.values.filter { if case .participantsChanged = $0 { false } else { true } })")

        // The network stops.
        let stallNs = set.nowNs
        kill(server.processIdentifier, SIGSTOP)
        let began = await eventually(timeout: .seconds(6)) {
            events.since(stallNs).contains { $0.value == .suspensionBegan(.stallRecovery) }
        }
        let remoteStatuses = remoteLog.statuses(since: stallNs)
        check(began, "no stallRecovery suspension after the server stopped; remote statuses \(remoteStatuses), " +
              "positions \(await set.settledPositions())")
        if began {
            let buffering = remoteStatuses.contains { $0.state == .buffering }
            XCTAssertTrue(buffering, "the stalled view never said BUFFERING: \(remoteStatuses)")
            // The others keep playing while it is stalled.
            try await Task.sleep(for: .milliseconds(500))
            let localPlaying = await set.allPlaying([0])
            XCTAssertTrue(localPlaying)
        }

        // The network comes back; the view refills, ends its suspension and jumps to the group's time.
        let resumeNs = set.nowNs
        kill(server.processIdentifier, SIGCONT)
        if began {
            let ended = await eventually(timeout: .seconds(8)) {
                events.since(resumeNs).contains { $0.value == .suspensionEnded(.stallRecovery) }
            }
            XCTAssertTrue(ended, "the stallRecovery suspension did not end: \(events.values)")
        }
        let endedNs = set.nowNs
        let back = await eventually(timeout: .seconds(5)) { await set.allPlaying() }
        let aims = await set.medium.catchUpAims.map(\.description)
        let preparations = await remote.player.coordinatedPreparations.map(\.description)
        print("catch-up after the stall (suspension ended at clock \(ClockTime(nanoseconds: endedNs))):\n  " +
              aims.joined(separator: "\n  ") + "\nthe remote view's preparations:\n  " + preparations.joined(separator: "\n  "))
        check(back, "not every view playing 5 s after the suspension ended: \(await set.statuses()); catch-up aims " +
              "(it ended at clock \(ClockTime(nanoseconds: endedNs))): \(aims); preparations \(preparations)")
        let renderingAgain = await set.waitRendering(since: endedNs, views: [2], count: 10)
        XCTAssertTrue(renderingAgain, "the remote view renders nothing after the stall")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after the stall")
        try await Task.sleep(for: .seconds(1.2))
        let reasons = await remote.coordinator.suspensionReasons
        XCTAssertEqual(reasons, [], "still (or again) suspended after the stall: \(events.since(endedNs).map(\.value))")
        assertAligned(set, since: endedNs + 300_000_000, minFrames: 20, "after the stall")

        // The local view never paused, waited or jumped.
        let localStatuses = localLog.statuses(since: stallNs)
        XCTAssertFalse(localStatuses.contains { $0.state != .playing || $0.waitingToPlay != nil }, "local view: \(localStatuses)")
        let renders = set.frames(since: stallNs, views: [1]).sorted { $0.renderClockNs < $1.renderClockNs }
        for (a, b) in zip(renders, renders.dropFirst()) where b.mediaTimeNs <= a.mediaTimeNs || b.mediaTimeNs - a.mediaTimeNs > 70_000_000 {
            XCTFail("the local view jumped from \(a.mediaTimeNs) to \(b.mediaTimeNs)")
        }
        await set.tearDown()
    }

    /// A stall without any buffering message: a local file whose source stops delivering (held at its source
    /// element's output, as a hung disk or pipe would). The player sees its video stop while playing, reports
    /// buffering, the coordinator suspends it (`stallRecovery`), and it rejoins aligned when data flows again.
    func testAViewWhoseLocalSourceStopsDeliveringSuspendsItselfAndRejoinsAligned() async throws {
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[0], number: 1, item: "event")
        let starved = try await set.add(Media.angles[3], number: 2, item: "event")
        let source = HeldSource()
        let setup = try starved.player.pipeline.connect("source-setup") { args in source.set(args.element(at: 1)) }
        // The source is made at load; reload so the handler sees it.
        try await starved.player.load(MediaSource(Media.angles[3]))
        let events = await starved.coordinator.eventLog(clock: set.clock)
        let othersLog = await set.players[0].eventLog(clock: set.clock)
        try await set.playAll()
        let rendering = await set.waitRendering(since: 0, count: 10)
        check(rendering, "\(await set.statuses())")
        try await Task.sleep(for: .milliseconds(500))

        let pad = try XCTUnwrap(source.element, "no source element was set up").staticPad("src")
        let holdNs = set.nowNs
        var hold: PadProbe? = pad.addProbe([.buffer, .blocking]) { _ in .ok }
        let began = await eventually(timeout: .seconds(4)) { events.values.contains(.suspensionBegan(.stallRecovery)) }
        XCTAssertTrue(began, "no automatic stallRecovery suspension: \(events.values)")
        let statusWhileStarved = await starved.player.currentStatus
        XCTAssertEqual(statusWhileStarved.state, .buffering)
        let othersPlaying = await set.allPlaying([0])
        XCTAssertTrue(othersPlaying, "the other view stopped with it")
        try await Task.sleep(for: .milliseconds(500))

        hold = nil
        withExtendedLifetime(hold) {}
        let releasedNs = set.nowNs
        let ended = await eventually(timeout: .seconds(10)) { events.values.contains(.suspensionEnded(.stallRecovery)) }
        XCTAssertTrue(ended, "the suspension did not end when data flowed again: \(events.values)")
        let back = await eventually { await set.allPlaying() }
        check(back, "\(await set.statuses())")
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: set.nowNs - 800_000_000, minFrames: 15, "after the starved view rejoined")
        // The other view never paused or waited.
        let statuses = othersLog.statuses(since: holdNs)
        XCTAssertFalse(statuses.contains { $0.state != .playing || $0.waitingToPlay != nil }, "view 1: \(statuses)")
        XCTAssertGreaterThan(set.frames(since: holdNs, views: [1], until: releasedNs).count, 30, "view 1 kept rendering")
        withExtendedLifetime(setup) {}
        await set.tearDown()
    }
}
