import Foundation
import TestSupport
import XCTest

/// Faults of the network itself, with real processes and a real network stack: a member in a network namespace of
/// its own (`NetworkNamespace`, a veth pair) whose link is cut with `ip link set … down` and restored. The host
/// (one view, audio to the test's PulseAudio) listens on every interface; a second member stays on loopback.
/// Members play without audio (`--no-audio`: a member's pulsesink on the net client clock is netsync's open issue,
/// not the faults tested here). Every wait is on an output line, with deadlines generous for a cold, loaded machine.
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
        var port = 0
        try await host.waitFor("listening line", timeout: .seconds(30)) { _, err in
            guard let range = err.range(of: #"listening on 0\.0\.0\.0:(\d+)"#, options: .regularExpression) else { return false }
            port = Int(err[range].split(separator: ":").last ?? "") ?? 0
            return port > 0
        }
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
        // Two more status lines of the cut member, both playing: frames of the group's timeline to compare.
        let lines = cut.stdout.split(separator: "\n").count
        try await cut.waitFor("two status lines playing after the rejoin", timeout: .seconds(20)) { out, _ in
            let all = out.split(separator: "\n")
            return all.count >= lines + 2 && all.suffix(2).allSatisfy { $0.contains("PLAYING") }
        }

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
            let during = list.map(\.renderClockNs).filter { $0 >= cutAt && $0 <= droppedAt }.sorted()
            let gaps = zip(during.dropFirst(), during).map { $0 - $1 }
            let edges = [(during.first ?? droppedAt) - cutAt, droppedAt - (during.last ?? cutAt)]
            let worst = (gaps + edges).max() ?? 0
            print(String(format: "%@: %d frames between the cut and the drop, longest gap %.1f ms", name, during.count,
                         Double(worst) / 1e6))
            XCTAssertLessThan(worst, 1_000_000_000, "\(name): longest stretch without a frame between the cut and the"
                              + " drop \(Double(worst) / 1e6) ms (\(during.count) frames in \(Double(droppedAt - cutAt) / 1e6) ms)")
        }
        // Back in the group: the cut member's frames against the host's, same media time, rendered after the rejoin.
        let skews = MemberProcessTests.skews(member: frames.cut.filter { $0.renderClockNs > rejoinedAt },
                                             host: frames.host.filter { $0.renderClockNs > rejoinedAt }, after: 0)
        XCTAssertGreaterThanOrEqual(skews.count, 10, "frames both rendered after the rejoin")
        let sorted = skews.map(abs).sorted()
        let worst = sorted.last ?? 0
        print(String(format: "rejoined member vs host render skew over %d frames: median %.3f ms, max %.3f ms",
                     sorted.count, Double(sorted.isEmpty ? 0 : sorted[sorted.count / 2]) / 1e6, Double(worst) / 1e6))
        XCTAssertLessThan(worst, 20_000_000, "after the rejoin the member renders within 20 ms of the host")
    }
}
