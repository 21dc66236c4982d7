import Foundation
import TestSupport
import XCTest

/// Faults of the network itself, with real processes and a real network stack: a member in a network namespace of
/// its own (`NetworkNamespace`, a veth pair) whose link is cut with `ip link set … down` and restored. The host
/// (one view, audio to the test's PulseAudio) listens on every interface; a second member stays on loopback.
/// Members play without audio (`--no-audio`: fewer streams on two busy cores; what members hear is
/// MemberProcessTests' and Scripts/bench-network's concern, not these faults'). Every wait is on an output line, with deadlines generous for a cold, loaded machine.
final class LinkFaultTests: XCTestCase {
    private let token = "fa0175fa0175fa0175fa0175fa0175fa"
    private static let angle1 = repoRoot.appendingPathComponent("Media/angle1-wide.mp4").path

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: SessionProcess.binary) else {
            XCTFail("\(SessionProcess.binary) not built: run `swift build` (Scripts/test does)")
            throw CancellationError()
        }
    }

    private func startHost(_ directory: TemporaryDirectory, renderLog: String) async throws -> (SessionProcess, Int) {
        let host = try SessionProcess("host", ["host", "--listen", "0.0.0.0:0", "--headless", "--token", token,
                                               "--render-log", renderLog, Self.angle1], directory: directory)
        let port = try await host.waitForListeningPort(on: "0.0.0.0", timeout: .seconds(30))
        try await host.waitForPlaying(1, timeout: .seconds(30))
        return (host, port)
    }

    /// A member's link is cut: the host drops it after its 3 s heartbeat timeout while every other view plays on
    /// (no gap in anyone's rendering) and the group still answers commands; the cut-off member plays on, says it
    /// lost the host, and once the link is back it rejoins and renders the group's frames with the host's.
    func testACutLinkDropsTheMemberOthersPlayOnAndItRejoinsAlignedWhenTheLinkIsBack() async throws {
        let namespace = try NetworkNamespace()
        let directory = try TemporaryDirectory()
        let logs = (host: directory.path("host.json"), steady: directory.path("steady.json"), cut: directory.path("cut.json"))
        let (host, port) = try await startHost(directory, renderLog: logs.host)
        let cut = try SessionProcess("cut", ["join", "\(namespace.hostAddress):\(port)", "--token", token, "--headless",
                                             "--no-audio", "--name", "cut", "--render-log", logs.cut, Self.angle1],
                                     directory: directory, launcher: namespace.launcher)
        try await host.waitForLine(containing: "group session: m1.view1 joined item multiview-event", timeout: .seconds(30))
        let steady = try SessionProcess("steady", ["join", "127.0.0.1:\(port)", "--token", token, "--headless", "--no-audio",
                                                   "--name", "steady", "--render-log", logs.steady, Self.angle1],
                                        directory: directory)
        try await host.waitForLine(containing: "group session: m2.view1 joined item multiview-event", timeout: .seconds(30))
        try await cut.waitForPlaying(1, timeout: .seconds(30))
        try await steady.waitForPlaying(1, timeout: .seconds(30))

        try namespace.linkDown()
        let cutAt = monotonicNow()
        try await host.waitForLine(containing: "member m1 (cut) dropped: nothing heard for", timeout: .seconds(20))
        let droppedAt = monotonicNow()
        // Its last pong came up to one heartbeat (0.5 s) before the cut: 3 s of silence is ≥ 2.5 s after it.
        XCTAssertGreaterThanOrEqual(droppedAt - cutAt, 2_500_000_000, "dropped after the 3 s heartbeat timeout")
        try await cut.waitForLine(containing: "group session: host lost", timeout: .seconds(20))
        // The group goes on without it: a seek from the steady member reaches the host's view and its own.
        steady.send("seek 2")
        try await host.waitForLine(containing: "group: view1 time jumped to 2.000 s by m2.view1", timeout: .seconds(20))
        try await steady.waitForLine(containing: "group: view1 time jumped to 2.000 s by m2.view1", timeout: .seconds(20))

        let joinedLine = "group: view1 joined the group's timeline"
        let joinedBefore = (cut.stdout + cut.stderr).components(separatedBy: joinedLine).count
        try namespace.linkUp()
        try await cut.waitForLine(containing: "group session: rejoined \(namespace.hostAddress):\(port) as m3", timeout: .seconds(30))
        try await host.waitForLine(containing: "group session: m3.view1 joined item multiview-event", timeout: .seconds(20))
        try await cut.waitFor("\"\(joinedLine)\" after the rejoin", timeout: .seconds(20)) { out, err in
            (out + err).components(separatedBy: joinedLine).count > joinedBefore
        }
        let rejoinedAt = monotonicNow()
        try await cut.waitForAlignedPlayback(after: "the rejoin")

        for member in [cut, steady] {
            member.send("q")
            let status = try await member.waitForExit(timeout: .seconds(20))
            XCTAssertEqual(status, 0, "\(member.name): \(member.stderr.suffix(2000))")
        }
        host.send("end")
        let hostStatus = try await host.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(hostStatus, 0, String(host.stderr.suffix(2000)))

        // Nobody froze while the link was down: every view rendered on, no gap over 1 s, from the cut to the drop.
        let frames = (host: try MemberProcessTests.frames(logs.host), steady: try MemberProcessTests.frames(logs.steady),
                      cut: try MemberProcessTests.frames(logs.cut))
        for (name, list) in [("host view 1", frames.host), ("steady member", frames.steady), ("cut member", frames.cut)] {
            Self.assertRendered(list, name, from: cutAt, to: droppedAt, "between the cut and the drop")
        }
        // Back in the group: the cut member's frames against the host's, same media time, rendered after the rejoin.
        Self.assertAligned(frames.cut, with: frames.host, after: rejoinedAt, "the rejoin")
    }

    /// The net clock alone goes silent (its UDP relay killed; the control channel, relayed apart, lives on): that
    /// member is suspended (`coordinatedPlaybackNotPossible`) and plays on by itself, the host keeps it, the group
    /// moves without it; once the clock answers again its view rejoins and renders the group's frames with the host's.
    func testANetClockThatStopsAnsweringSuspendsOnlyThatMemberUntilItIsBack() async throws {
        let namespace = try NetworkNamespace()
        let directory = try TemporaryDirectory()
        let logs = (host: directory.path("host.json"), member: directory.path("member.json"))
        let (host, port) = try await startHost(directory, renderLog: logs.host)
        guard let range = host.stderr.range(of: #"net clock on UDP port (\d+)"#, options: .regularExpression),
              let clockPort = Int(host.stderr[range].split(separator: " ").last ?? "") else {
            throw TestFailure("host: no net clock port in \(host.stderr)")
        }
        // Inside the namespace, 127.0.0.1 → the host's side of the veth pair: TCP and UDP by separate relays (no delay).
        func relay(_ kind: String, _ port: Int, _ log: String) async throws -> Process {
            try await startReady(namespace.launcher + ["python3", Self.relay, "--listen", "127.0.0.1", "--target",
                                                       namespace.hostAddress, "--\(kind)", "\(port)", "--delay-ms", "0",
                                                       "--jitter-ms", "0"], log: directory.path(log))
        }
        _ = try await relay("tcp", port, "relay-tcp.log")
        let clockRelay = try await relay("udp", clockPort, "relay-udp.log")
        let member = try SessionProcess("member", ["join", "127.0.0.1:\(port)", "--token", token, "--headless", "--no-audio",
                                                   "--name", "member", "--render-log", logs.member, Self.angle1],
                                        directory: directory, launcher: namespace.launcher)
        try await host.waitForLine(containing: "group session: m1.view1 joined item multiview-event", timeout: .seconds(30))
        try await member.waitForPlaying(1, timeout: .seconds(30))

        stopTool(clockRelay)
        let silentAt = monotonicNow()
        try await member.waitForLine(containing: "no answer from the host's net clock for", timeout: .seconds(20))
        try await member.waitForLine(containing: "group: view1 suspended (coordinatedPlaybackNotPossible)", timeout: .seconds(10))
        let suspendedAt = monotonicNow()
        XCTAssertGreaterThanOrEqual(suspendedAt - silentAt, 2_000_000_000, "suspended after the clock's silence limit, not at once")
        try await host.waitForLine(containing: "group session: m1.view1 suspensions: coordinatedPlaybackNotPossible",
                                   timeout: .seconds(10))
        // The group moves on without the suspended view, and the host keeps the member (its control channel lives).
        let before = Self.positions(host.stdout).last ?? 0
        host.send("seek 2")
        try await host.waitForLine(containing: "group: view1 time jumped to 2.000 s by view1", timeout: .seconds(20))
        let movedAt = monotonicNow()
        try await host.waitFor("a status line showing the seek back", timeout: .seconds(20)) { out, _ in
            (Self.positions(out).last ?? before) < before
        }
        // The fault lasts 1 s more (a duration chosen, not an event awaited): the member's own timeline meanwhile.
        try await Task.sleep(for: .seconds(1))
        let clockBackAt = monotonicNow()
        let joinedLine = "group: view1 joined the group's timeline"
        let joinedBefore = member.stderr.components(separatedBy: joinedLine).count
        _ = try await relay("udp", clockPort, "relay-udp-again.log")
        try await member.waitForLine(containing: "the views rejoin the group", timeout: .seconds(20))
        try await member.waitForLine(containing: "group: view1 suspension ended (coordinatedPlaybackNotPossible)", timeout: .seconds(10))
        try await host.waitForLine(containing: "group session: m1.view1 suspensions: none", timeout: .seconds(10))
        try await member.waitFor("\"\(joinedLine)\" after the clock came back", timeout: .seconds(20)) { _, err in
            err.components(separatedBy: joinedLine).count > joinedBefore
        }
        let rejoinedAt = monotonicNow()
        try await member.waitForAlignedPlayback(after: "the rejoin")
        XCTAssertFalse(host.stderr.contains("dropped"), "the host kept the member: \(host.stderr.suffix(2000))")

        member.send("q")
        let status = try await member.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0, String(member.stderr.suffix(2000)))
        host.send("end")
        let hostStatus = try await host.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(hostStatus, 0, String(host.stderr.suffix(2000)))

        let frames = (host: try MemberProcessTests.frames(logs.host), member: try MemberProcessTests.frames(logs.member))
        Self.assertRendered(frames.host, "host view 1", from: silentAt, to: movedAt, "while the member's clock was silent")
        Self.assertRendered(frames.member, "suspended member", from: silentAt, to: movedAt, "while its clock was silent")
        // Meanwhile it kept its own timeline: after the group's seek to 2 s it still showed later media times.
        let jump = Self.firstJumpBack(frames.host, after: silentAt) ?? clockBackAt
        let apart = Self.mediaOffsets(frames.member, against: frames.host, from: jump, to: clockBackAt)
        XCTAssertFalse(apart.isEmpty, "member frames rendered between the group's seek and the clock's return")
        XCTAssertGreaterThan(apart.map(abs).min() ?? 0, 1_000_000_000,
                             "the group's seek skipped the suspended member (media offsets \(apart.prefix(5)) ns)")
        // Once it joined again it renders the group's new timeline with the host.
        Self.assertAligned(frames.member, with: frames.host, after: rejoinedAt, "the clock came back")
    }

    // MARK: Helpers

    private static let relay = repoRoot.appendingPathComponent("Scripts/lib/delay-relay.py").path
    private var background: [Process] = []

    override func tearDown() {
        for process in background { stopTool(process) }
        background = []
    }

    /// Starts a helper in the background (killed in tearDown) and waits for "ready" in its output file.
    private func startReady(_ arguments: [String], log: String) async throws -> Process {
        let process = try startTool(arguments, output: log)
        background.append(process)
        guard await eventually(timeout: .seconds(20), {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ready")
        }) else {
            throw TestFailure("\(arguments.joined(separator: " ")) not ready within 20 s: "
                              + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
        }
        return process
    }

    /// `frames` were rendered all through `from…to`: no stretch without a frame over 1 s (a frozen view has seconds).
    private static func assertRendered(_ frames: [MemberProcessTests.Frame], _ name: String, from: UInt64, to: UInt64,
                                       _ when: String, file: StaticString = #filePath, line: UInt = #line) {
        let during = frames.map(\.renderClockNs).filter { $0 >= from && $0 <= to }.sorted()
        // Each stretch as (start, length): between frames, and from `from` to the first and from the last to `to`.
        let stretches = [(from, (during.first ?? to) - from)] + zip(during.dropFirst(), during).map { ($1, $0 - $1) }
            + [(during.last ?? from, to - (during.last ?? from))]
        let (worstAt, worst) = stretches.max { $0.1 < $1.1 } ?? (from, 0)
        print(String(format: "%@: %d frames %@ (%.1f ms), longest gap %.1f ms from %.1f ms in", name, during.count, when,
                     Double(to - from) / 1e6, Double(worst) / 1e6, Double(worstAt - from) / 1e6))
        XCTAssertLessThan(worst, 1_000_000_000, "\(name): longest stretch without a frame \(when): \(Double(worst) / 1e6) ms"
                          + " (\(during.count) frames in \(Double(to - from) / 1e6) ms)", file: file, line: line)
    }

    /// Each status line's position in whole seconds ("PLAYING 0:05/0:24" → 5).
    private static func positions(_ stdout: String) -> [Int] {
        stdout.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: #"PLAYING (\d+):(\d\d)/"#, options: .regularExpression) else { return nil }
            let parts = line[range].dropFirst("PLAYING ".count).dropLast().split(separator: ":")
            guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]) else { return nil }
            return minutes * 60 + seconds
        }
    }

    /// The render instant of the first frame after `after` whose media time is before its predecessor's (a seek back).
    private static func firstJumpBack(_ frames: [MemberProcessTests.Frame], after: UInt64) -> UInt64? {
        let ordered = frames.filter { $0.renderClockNs >= after }.sorted { $0.renderClockNs < $1.renderClockNs }
        return zip(ordered.dropFirst(), ordered).first { $0.mediaTimeNs < $1.mediaTimeNs }?.0.renderClockNs
    }

    /// For each member frame rendered in `from…to`: its media time − the media time of the host frame rendered
    /// nearest to it (ns).
    private static func mediaOffsets(_ member: [MemberProcessTests.Frame], against host: [MemberProcessTests.Frame],
                                     from: UInt64, to: UInt64) -> [Int64] {
        let hostFrames = host.sorted { $0.renderClockNs < $1.renderClockNs }
        guard !hostFrames.isEmpty else { return [] }
        return member.filter { $0.renderClockNs >= from && $0.renderClockNs <= to }.map { frame in
            let nearest = hostFrames.min { a, b in
                a.renderClockNs.distance(to: frame.renderClockNs).magnitude < b.renderClockNs.distance(to: frame.renderClockNs).magnitude
            }!
            return Int64(frame.mediaTimeNs) - Int64(nearest.mediaTimeNs)
        }
    }

    /// The member's frames against the host's, same media time, both rendered after `after`: within 20 ms.
    /// `detail` (the member's last output, with its clock's status) goes into a failure's message.
    static func assertAligned(_ member: [MemberProcessTests.Frame], with host: [MemberProcessTests.Frame],
                              after: UInt64, _ event: String, medianUnderNs: Int64? = nil,
                              detail: @autoclosure () -> String = "",
                              file: StaticString = #filePath, line: UInt = #line) {
        let skews = MemberProcessTests.skews(member: member.filter { $0.renderClockNs > after },
                                             host: host.filter { $0.renderClockNs > after }, after: 0)
        XCTAssertGreaterThanOrEqual(skews.count, 10, "frames both rendered after \(event)", file: file, line: line)
        let sorted = skews.map(abs).sorted()
        let worst = sorted.last ?? 0
        print(String(format: "member vs host render skew after %@ over %d frames: median %.3f ms, max %.3f ms", event,
                     sorted.count, Double(sorted.isEmpty ? 0 : sorted[sorted.count / 2]) / 1e6, Double(worst) / 1e6))
        XCTAssertLessThan(worst, 20_000_000, "after \(event) the member renders within 20 ms of the host\n\(detail())",
                          file: file, line: line)
        if let medianUnderNs, !sorted.isEmpty {
            XCTAssertLessThan(sorted[sorted.count / 2], medianUnderNs,
                              "after \(event) the member's median render skew\n\(detail())", file: file, line: line)
        }
    }
}
