import Foundation
import GStreamer
import Multiview
import Priority
import TestSupport
import XCTest

/// What hlsdemux2's bitrate properties really do on this GStreamer (1.22), through playbin3 and a real HTTP
/// server. The properties are set from playbin3's "deep-element-added" (the only way to reach the demuxer
/// before it picks its first variant). The playlist used here lists the top rung FIRST, so "the first
/// fragment comes from the first-listed variant" is visible as a 1080p start.
final class DemuxerPropertyTests: XCTestCase {
    var scratch: TemporaryDirectory!
    var server: HTTPServerBox!

    final class HTTPServerBox: @unchecked Sendable { let server: HLSServer; init(_ s: HLSServer) { server = s } }

    override func setUp() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        scratch = try TemporaryDirectory.hlsWebRoot()
        // angle1's variants, top first, pointing into ../angle1.
        let master = try String(contentsOfFile: "\(HLSFixture.root)/angle1/master.m3u8", encoding: .utf8)
        var header: [String] = [], variants: [[String]] = []
        let lines = master.split(separator: "\n").map(String.init)
        var i = 0
        while i < lines.count {
            let line = lines[i].replacingOccurrences(of: "URI=\"", with: "URI=\"../angle1/")
            if line.hasPrefix("#EXT-X-STREAM-INF") {
                variants.append([line, "../angle1/" + lines[i + 1]])
                i += 2
                continue
            }
            if !line.hasPrefix("#EXT-X-I-FRAME") { header.append(line) }
            i += 1
        }
        try FileManager.default.createDirectory(atPath: scratch.path("topfirst"), withIntermediateDirectories: true)
        try (header + variants.reversed().flatMap { $0 }).joined(separator: "\n")
            .write(toFile: scratch.path("topfirst/master.m3u8"), atomically: true, encoding: .utf8)
        server = HTTPServerBox(try HLSServer(root: scratch.url.path))
    }

    override func tearDown() async throws {
        server?.server.stop()
        server = nil
        scratch = nil
    }

    /// Plays topfirst/master.m3u8 with `configure` applied to the demuxer when it is created; returns the player,
    /// its resolution log and the demuxer.
    /// Waits until 6 s of media have played (several fragments, so a switch would have shown), not 6 s of wall
    /// time: a loaded machine may show only the first frames in that time.
    private func playSixSecondsOfMedia(_ player: Player, file: StaticString = #filePath, line: UInt = #line) async throws {
        let played = await eventually(timeout: .seconds(40)) { (await player.position?.seconds ?? 0) >= 6 }
        let position = await player.position?.seconds
        let status = await player.currentStatus
        XCTAssertTrue(played, "6 s of media not played within 40 s: at \(String(describing: position)), \(status)", file: file, line: line)
    }

    private func play(_ configure: @escaping @Sendable (Element) -> Void) async throws -> (Player, ResolutionLog, DemuxerBox) {
        let player = try makePlayer(1)
        let box = DemuxerBox()
        box.connections = try player.watchElements(added: { element in
            if element.factoryName == "hlsdemux2" {
                configure(element)
                box.set(element)
            }
        }, removed: { _ in })
        let log = ResolutionLog(player)
        try await player.load(MediaSource(server.server.uri("topfirst/master.m3u8")))
        try await player.play(timeout: .seconds(40))
        return (player, log, box)
    }

    final class DemuxerBox: @unchecked Sendable {
        // Sendable: `element` under `lock`; `connections` set once before playing.
        private let lock = NSLock()
        private var element: Element?
        var connections: [SignalConnection] = []
        func set(_ e: Element) { lock.withLock { element = e } }
        var demuxer: Element? { lock.withLock { element } }
    }

    func testMaxBitrateAloneCapsLaterFragmentsButNotTheFirst() async throws {
        let (player, log, box) = try await play { try? $0.set("max-bitrate", 1_400_000) }
        let settled = await eventually(timeout: .seconds(15)) { log.values.last == "960x540" }
        await player.stop()
        XCTAssertTrue(settled, "never settled on 540p under max-bitrate 1.4M: \(log.values)")
        XCTAssertEqual(log.values.first, "1920x1080", "first fragment: \(log.values)")
        XCTAssertFalse(log.values.dropFirst().contains("1920x1080") || log.values.contains("1280x720"), "\(log.values)")
        XCTAssertNotNil(box.demuxer)
    }

    func testConnectionBitrateWithMaxBitrateCapsFromTheFirstFragment() async throws {
        let (player, log, _) = try await play {
            try? $0.set("max-bitrate", 1_400_000)
            try? $0.set("connection-bitrate", 1_400_000 * 5 / 4 + 1)
        }
        try await playSixSecondsOfMedia(player)
        await player.stop()
        XCTAssertEqual(log.values, ["960x540"], "with connection-bitrate the first fragment is already capped")
    }

    func testConnectionBitrateIsNotScaledByBandwidthTargetRatio() async throws {
        // 3.2 Mbit/s: with bandwidth-target-ratio 0.8 applied (2.56) the 720p rung (2.85 M peak, 2.80 M average)
        // would not fit; it is chosen, so a fixed connection-bitrate is compared with the variants as it is.
        let (player, log, _) = try await play { try? $0.set("connection-bitrate", 3_200_000) }
        try await playSixSecondsOfMedia(player)
        await player.stop()
        XCTAssertEqual(log.values, ["1280x720"], "\(log.values)")
    }

    func testStartBitrateAloneIsIgnored() async throws {
        let (player, log, _) = try await play { try? $0.set("start-bitrate", 800_000) }
        let first = await eventually(timeout: .seconds(10)) { !log.values.isEmpty }
        await player.stop()
        XCTAssertTrue(first)
        XCTAssertEqual(log.values.first, "1920x1080", "start-bitrate 800k without connection-bitrate: \(log.values)")
    }

    func testLoweringMaxBitrateWhilePlayingSwitchesDownAndCurrentBandwidthIsMeasured() async throws {
        // Without a small high watermark the demuxer fetches 30 s ahead: the whole 24 s clip at once, and a
        // later cap changes nothing that is shown.
        let (player, log, box) = try await play { try? $0.set("high-watermark-time", 4_000_000_000) }
        let demuxer = try XCTUnwrap(box.demuxer)
        let measured = await eventually(timeout: .seconds(10)) {
            ((try? demuxer.get("current-bandwidth", as: Int.self)) ?? 0) > 0
        }
        XCTAssertTrue(measured, "current-bandwidth stayed 0")
        try demuxer.set("max-bitrate", 800_000)
        let down = await eventually(timeout: .seconds(15)) { log.values.last == "640x360" }
        await player.stop()
        XCTAssertTrue(down, "lowering max-bitrate while playing did not switch down: \(log.values)")
    }
}
