import Foundation
import TestSupport
import XCTest

/// Issue 17's late-join bug with real processes: a member that joins while the host's group is starting (a barrier
/// preparing the group's start, the joiner not among those it asked to prepare) was told "prepare at T", "pause at
/// T" and stayed PAUSED for good while the group played. Headless, no audio (what is under test is the group's
/// state, not what members hear); every wait is on an output line, with deadlines generous for a cold machine.
final class MemberJoinDuringStartTests: XCTestCase {
    private let token = "1a7e1a7e1a7e1a7e1a7e1a7e1a7e1a7e"
    private static let angle1 = repoRoot.appendingPathComponent("Media/angle1-wide.mp4").path
    private static let angle2 = repoRoot.appendingPathComponent("Media/angle2-left.webm").path

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: SessionProcess.binary) else {
            XCTFail("\(SessionProcess.binary) not built: run `swift build` (Scripts/test does)")
            throw CancellationError()
        }
    }

    /// The start is held open deterministically: a first member ("holder") is stopped (SIGSTOP) before the host's
    /// seek, so the seek's barrier waits for its answer until the host drops it (8 s of silence: `--drop-after 8`;
    /// with the default 3 s, a joiner launched under the suite's load once asked to join only after the drop, 3.26 s
    /// after its launch, and the run checked an ordinary late join instead). The joiner is
    /// launched right after the seek: its view connects after the barrier took its participants and asks to join
    /// while the barrier still waits. It must end PLAYING on the group's timeline (its frames rendered with the
    /// host's on the shared clock), not paused at the seek's target.
    func testAMemberJoiningWhileTheGroupStartsEndsPlayingAlignedNotPaused() async throws {
        let directory = try TemporaryDirectory()
        let hostLog = directory.path("host-frames.json"), joinerLog = directory.path("joiner-frames.json")
        let host = try SessionProcess("host", ["host", "--listen", "127.0.0.1:0", "--headless", "--no-audio", "--token", token, "--drop-after", "8",
                                               "--render-log", hostLog, Self.angle1, Self.angle2], directory: directory)
        var port = 0
        try await host.waitFor("listening line", timeout: .seconds(30)) { _, err in
            guard let range = err.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) else { return false }
            port = Int(err[range].split(separator: ":").last ?? "") ?? 0
            return port > 0
        }
        try await host.waitForPlaying(2, timeout: .seconds(30))
        let holder = try member("holder", port: port, directory: directory)
        try await host.waitForLine(containing: "group session: m1.view1 joined item multiview-event", timeout: .seconds(30))
        try await holder.waitForPlaying(1, timeout: .seconds(30))

        kill(holder.process.processIdentifier, SIGSTOP)
        host.send("seek 5")
        let launched = ContinuousClock.now
        let joiner = try member("joiner", port: port, directory: directory, renderLog: joinerLog)
        try await host.waitForLine(containing: "group session: m2.view1 asks to join the group's timeline", timeout: .seconds(20))
        let askedAfter = ContinuousClock.now - launched
        print("the joiner asked to join \(askedAfter) after its launch")
        try await host.waitForLine(containing: "member m1 (holder) dropped: nothing heard for", timeout: .seconds(20))
        holder.kill9()
        // The case under test: the joiner asked to join before the start it waited for had its instant (the holder's
        // drop, about 8 s after its stop, ended the barrier). Otherwise this run checked an ordinary late join.
        let hostLines = host.stderr
        let asked = try XCTUnwrap(hostLines.range(of: "group session: m2.view1 asks to join the group's timeline"))
        let dropped = try XCTUnwrap(hostLines.range(of: "member m1 (holder) dropped"))
        XCTAssertLessThan(asked.lowerBound, dropped.lowerBound,
                          "the joiner asked to join \(askedAfter) after its launch, after the start (too slow a launch on this "
                              + "machine): not the case under test\nhost stderr: \(hostLines.suffix(2500))")

        try await joiner.waitForLine(containing: "group: view1 joined the group's timeline", timeout: .seconds(20))
        try await joiner.waitForPlaying(1, timeout: .seconds(20))
        try await host.waitForPlaying(2, timeout: .seconds(20))
        // Let it render a second or two of the group's timeline, then leave and end.
        let before = joiner.stdout.count
        try await joiner.waitFor("two more status lines, PLAYING", timeout: .seconds(10)) { out, _ in
            out.count > before && out.split(separator: "\n").suffix(2).allSatisfy(SessionProcess.playsWithNoViewWaiting)
                && out.dropFirst(before).split(separator: "\n").count >= 2
        }
        joiner.send("q")
        let joinerStatus = try await joiner.waitForExit()
        XCTAssertEqual(joinerStatus, 0, joiner.stderr)
        host.send("end")
        let hostStatus = try await host.waitForExit()
        XCTAssertEqual(hostStatus, 0, host.stderr)

        let hostFrames = try MemberProcessTests.frames(hostLog).filter { $0.view == 1 }
        let joinerFrames = try MemberProcessTests.frames(joinerLog)
        let skews = MemberProcessTests.skews(member: joinerFrames, host: hostFrames, after: 5_000_000_000)
        XCTAssertGreaterThanOrEqual(skews.count, 10, "frames of the group's timeline after the seek rendered by both "
                                        + "(joiner rendered \(joinerFrames.count) frames)\njoiner stderr: \(joiner.stderr.suffix(2000))")
        let worst = skews.map(abs).max() ?? 0
        print(String(format: "joiner vs host render skew over %d frames: max %.3f ms", skews.count, Double(worst) / 1e6))
        XCTAssertLessThan(worst, 20_000_000, "the joiner's frames are rendered within 20 ms of the host's")
    }

    private func member(_ name: String, port: Int, directory: TemporaryDirectory, renderLog: String? = nil) throws -> SessionProcess {
        try SessionProcess(name, ["join", "127.0.0.1:\(port)", "--token", token, "--headless", "--no-audio", "--name", name]
                               + (renderLog.map { ["--render-log", $0] } ?? []) + [Self.angle1], directory: directory)
    }
}
