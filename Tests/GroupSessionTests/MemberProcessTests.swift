import Foundation
import TestSupport
import XCTest

/// Real member processes on loopback: the built `multiview` binary as host (two local views) and as member (one
/// view), headless, audio to the test environment's PulseAudio.
final class MemberProcessTests: XCTestCase {
    private let token = "0123456789abcdef0123456789abcdef"
    private static let angle1 = repoRoot.appendingPathComponent("Media/angle1-wide.mp4").path
    private static let angle2 = repoRoot.appendingPathComponent("Media/angle2-left.webm").path

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: SessionProcess.binary) else {
            XCTFail("\(SessionProcess.binary) not built: run `swift build` (Scripts/test does)")
            throw CancellationError()
        }
    }

    private func startHost(_ directory: TemporaryDirectory, renderLog: String? = nil, port wanted: Int = 0,
                           name: String = "host") async throws -> (SessionProcess, Int) {
        let host = try SessionProcess(name, ["host", "--listen", "127.0.0.1:\(wanted)", "--headless", "--token", token]
                                         + (renderLog.map { ["--render-log", $0] } ?? []) + [Self.angle1, Self.angle2],
                                      directory: directory)
        let port = try await host.waitForListeningPort(on: "127.0.0.1")
        try await host.waitForPlaying(2)
        return (host, port)
    }

    private func join(_ port: Int, _ directory: TemporaryDirectory, name: String = "member",
                      extra: [String] = []) throws -> SessionProcess {
        try SessionProcess(name, ["join", "127.0.0.1:\(port)", "--token", token, "--headless", "--name", name]
                                 + extra + [Self.angle1], directory: directory)
    }

    func testAMemberPlaysInTheHostsGroupAndMovesItWithItsOriginator() async throws {
        let directory = try TemporaryDirectory()
        let hostLog = directory.path("host-frames.json"), memberLog = directory.path("member-frames.json")
        let (host, port) = try await startHost(directory, renderLog: hostLog)
        let member = try join(port, directory, extra: ["--render-log", memberLog])
        try await host.waitForLine(containing: "group session: m1.view1 joined item multiview-event")
        try await member.waitForPlaying(1)
        try await host.waitForPlaying(2)
        // The member's view joined the group only once its net clock had settled (not at its first exchange).
        try await member.waitForLine(containing: "group: view1 joined the group's timeline")
        let joining = member.stderr
        let settled = try XCTUnwrap(joining.range(of: "group session: net clock settled after"), "no settled line: \(joining)")
        let joined = try XCTUnwrap(joining.range(of: "group: view1 joined the group's timeline"), joining)
        XCTAssertLessThan(settled.lowerBound, joined.lowerBound, "the view joined before the clock settled: \(joining)")

        // A pause and a seek from the member reach every view, with the member's view as originator.
        member.send("pause")
        for view in ["view1", "view2"] { try await host.waitForLine(containing: "group: \(view) rate 0.0 by m1.view1") }
        try await member.waitForLine(containing: "group: view1 rate 0.0 by m1.view1")
        member.send("seek 5")
        for view in ["view1", "view2"] { try await host.waitForLine(containing: "group: \(view) time jumped to 5.000 s by m1.view1") }
        try await member.waitForLine(containing: "group: view1 time jumped to 5.000 s by m1.view1")
        // And a play from the host reaches the member, with the host's view as originator.
        host.send("play")
        try await member.waitForLine(containing: "group: view1 rate 1.0 by view1")
        try await host.waitForPlaying(2)
        try await member.waitForPlaying(1)
        // Let both render about 3 s of the new timeline (no view still waiting to play), then leave and end. The
        // wait used to be "the last two status lines say PLAYING", which "PLAYING [waiting for coordinated
        // playback]" met at once: the member left before its first frame after the seek (0 frames in common,
        // test-repeat run 3 on a216687).
        try await member.waitForAlignedPlayback(after: "the host's play")
        member.send("q")
        let memberStatus = try await member.waitForExit()
        XCTAssertEqual(memberStatus, 0, member.stderr)
        try await host.waitForLine(containing: "member m1 (member) left")
        host.send("end")
        let hostStatus = try await host.waitForExit()
        XCTAssertEqual(hostStatus, 0, host.stderr)

        // Render times on the shared clock: the member's angle1 against the host's angle1 (view 1), same frames.
        let hostFrames = try Self.frames(hostLog).filter { $0.view == 1 }
        let memberFrames = try Self.frames(memberLog)
        let skews = Self.skews(member: memberFrames, host: hostFrames, after: 5_000_000_000)
        XCTAssertGreaterThanOrEqual(skews.count, 10, "frames rendered by both after the seek; after 5 s of media, " +
            "the host rendered \(hostFrames.filter { $0.mediaTimeNs >= 5_000_000_000 }.count) and the member " +
            "\(memberFrames.filter { $0.mediaTimeNs >= 5_000_000_000 }.count)\nmember stderr: \(member.stderr.suffix(1500))")
        guard !skews.isEmpty else { return }
        let sorted = skews.map(abs).sorted()
        let median = sorted[sorted.count / 2], worst = sorted.last ?? 0
        print(String(format: "member vs host render skew over %d frames: median %.3f ms, max %.3f ms", sorted.count,
                     Double(median) / 1e6, Double(worst) / 1e6))
        XCTAssertLessThan(worst, 20_000_000, "the member's frames are rendered within 20 ms of the host's")
    }

    func testAWrongOrMissingTokenIsRefusedWithAClearError() async throws {
        let directory = try TemporaryDirectory()
        let (host, port) = try await startHost(directory)
        let wrong = try runTool(SessionProcess.binary, ["join", "127.0.0.1:\(port)", "--token", "nope", "--headless", Self.angle1],
                                timeout: .seconds(20))
        XCTAssertEqual(wrong.status, 3, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("error: join 127.0.0.1:\(port): the host refused the session token"), wrong.stderr)
        let missing = try runTool(SessionProcess.binary, ["join", "127.0.0.1:\(port)", "--headless", Self.angle1])
        XCTAssertEqual(missing.status, 3, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("a session token is needed"), missing.stderr)
        try await host.waitForLine(containing: "wrong or missing session token")
        try await host.waitForPlaying(2)
        host.send("end")
        let hostStatus = try await host.waitForExit()
        XCTAssertEqual(hostStatus, 0, host.stderr)
    }

    /// A member's suspension leaves the others playing. A member that goes silent (stopped with SIGSTOP: no answer,
    /// no close, as when its link is cut) is dropped after the heartbeat timeout and the others play on; a killed
    /// host leaves its members playing, saying so, and they rejoin when a host returns at the same address.
    func testASuspendedMemberAloneWaitsASilentOneIsDroppedAndAKilledHostLeavesMembersPlaying() async throws {
        let directory = try TemporaryDirectory()
        let (host, port) = try await startHost(directory)
        // Members with audio: a member's "what happened?" (local seeks of a playing view on the net client clock)
        // once froze its video in about half the runs — a flushing seek's own restart of the pulsesink went unguarded
        // (see AudioClockGuard); the checks after the drop fail on that freeze (stallRecovery, a status not PLAYING).
        let first = try join(port, directory, name: "first")
        try await host.waitForLine(containing: "group session: m1.view1 joined item")
        let second = try join(port, directory, name: "second")
        try await host.waitForLine(containing: "group session: m2.view1 joined item")
        try await first.waitForPlaying(1)
        try await second.waitForPlaying(1)
        // A member's own suspension ("what happened?": 5 s back at 2×, then it rejoins) suspends only it.
        second.send("r 1")
        try await host.waitForLine(containing: "group session: m2.view1 suspensions: whatHappened")
        try await second.waitForLine(containing: "group: view1 suspended (whatHappened)")
        try await host.waitForLine(containing: "group session: m2.view1 suspensions: none")
        try await second.waitForLine(containing: "group: view1 suspension ended (whatHappened)")
        try await second.waitForLine(containing: "note: view 1 caught up and rejoined")
        try await second.waitForPlaying(1)
        XCTAssertFalse(host.stderr.contains("rate 0.0"), "the host's views never paused: \(host.stderr)")
        kill(first.process.processIdentifier, SIGSTOP)
        let stopped = ContinuousClock.now
        try await host.waitForLine(containing: "member m1 (first) dropped: nothing heard for")
        // Its last pong came up to one heartbeat (0.5 s) before the stop: 3 s of silence is ≥ 2.5 s after it.
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - stopped, .milliseconds(2500), "dropped after the 3 s heartbeat timeout")
        first.kill9()
        let before = host.stdout.count
        try await host.waitFor("a status line with both views playing after the drop") { out, _ in
            out.count > before && out.split(separator: "\n").last.map { $0.components(separatedBy: "PLAYING").count - 1 == 2 } == true
        }
        // Some 3 s after its rejoin the member that asked "what happened?" still plays (the freeze came within 1–3 s).
        XCTAssertFalse(second.stderr.contains("stallRecovery"), "the member's view froze after what happened: \(second.stderr)")
        XCTAssertTrue(second.stdout.split(separator: "\n").last?.contains("PLAYING") == true,
                      "the member's view plays on: \(second.stdout.suffix(600))")
        host.kill9()
        try await second.waitForLine(containing: "host lost")
        let after = second.stdout.count
        try await second.waitFor("a status line still playing without the host") { out, _ in
            out.count > after && out.split(separator: "\n").last?.contains("PLAYING") == true
        }
        // A host comes back at the same address with the same token: the member rejoins its group.
        let (returned, _) = try await startHost(directory, port: port, name: "returned-host")
        // Two steps, each with its own deadline: the host answering (within a second of listening), then the views'
        // move (the new clock's settling, up to 5 s, and each view's catch-up). One 15 s wait for both ran out once
        // on a loaded machine (repeat run on f1334c9) with the member already in the host's participants.
        try await second.waitForLine(containing: "group session: a host answers at 127.0.0.1:\(port) again",
                                     timeout: .seconds(20))
        try await second.waitForLine(containing: "group session: rejoined 127.0.0.1:\(port) as m1", timeout: .seconds(30))
        try await returned.waitForLine(containing: "group session: m1.view1 joined item multiview-event")
        try await second.waitForLine(containing: "group: view1 joined the group's timeline")
        returned.send("end")
        try await second.waitForLine(containing: "group session: the host ended the session")
        let status = try await second.waitForExit()
        XCTAssertEqual(status, 0, second.stderr)
        _ = try await returned.waitForExit()
    }

    struct Frame: Decodable {
        var view: Int
        var mediaTimeNs: UInt64
        var renderClockNs: UInt64
    }

    static func frames(_ path: String) throws -> [Frame] {
        try JSONDecoder().decode([Frame].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Member render time − host render time for each media time both rendered (last rendering of each) at or after `after`.
    static func skews(member: [Frame], host: [Frame], after: UInt64) -> [Int64] {
        var hostTimes: [UInt64: UInt64] = [:]
        for frame in host where frame.mediaTimeNs >= after { hostTimes[frame.mediaTimeNs] = frame.renderClockNs }
        var memberTimes: [UInt64: UInt64] = [:]
        for frame in member where frame.mediaTimeNs >= after { memberTimes[frame.mediaTimeNs] = frame.renderClockNs }
        return memberTimes.compactMap { media, rendered in
            hostTimes[media].map { Int64(bitPattern: rendered &- $0) }
        }
    }
}
