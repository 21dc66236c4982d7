import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// The bundled media, located from this file (Tests/MultiviewTests/Support.swift → repo root).
enum TestMedia {
    static let root = repoRoot
    static let mediaDirectory = root.appendingPathComponent("Media")

    struct Entry: Decodable {
        var file: String
        var name: String
        var width: Int?
        var height: Int?
        var fps: Double?
        var duration_s: Double
        var tone_hz: Double
    }
    struct Manifest: Decodable { var files: [Entry] }

    static func manifest() throws -> Manifest {
        let data = try Data(contentsOf: mediaDirectory.appendingPathComponent(".manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data)
    }

    static func path(_ file: String) -> String { mediaDirectory.appendingPathComponent(file).path }

    static var angle1: String { path("angle1-wide.mp4") }
    static var angles: [String] {
        ["angle1-wide.mp4", "angle2-left.webm", "angle3-right.mkv", "angle4-overhead.mp4"].map(path)
    }
    /// Every file `Media/*` expands to (the shell skips dot files).
    static func allVisible() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: mediaDirectory.path)
            .filter { !$0.hasPrefix(".") }.sorted().map(path)
    }

    /// A scratch directory for broken media made from the bundled files.
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("multiview-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The first third of a bundled file: headers intact, data cut short.
    static func truncatedCopy(of file: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(file)))
        let out = try scratch().appendingPathComponent("truncated-" + file)
        try data.prefix(data.count / 3).write(to: out)
        return out.path
    }

    /// Pseudo-random bytes with a media file's name. The bytes are fixed (seeded SplitMix64): truly random bytes
    /// now and then look like MPEG audio to typefind and play, which made the test flaky.
    static func garbageFile() throws -> String {
        var state: UInt64 = 0x4d56_4741_5242_4147   // fixed seed
        let bytes = (0..<20_000).map { _ -> UInt8 in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
        let out = try scratch().appendingPathComponent("garbage.mp4")
        try Data(bytes).write(to: out)
        return out.path
    }

    /// angle3 (Matroska) with its codec ids replaced by ids no decoder knows: a well-formed file whose
    /// streams cannot be decoded.
    static func undecodableCopy() throws -> String {
        var data = try Data(contentsOf: URL(fileURLWithPath: path("angle3-right.mkv")))
        // Every track: angle3 has two audio languages and a subtitle track.
        for (from, to) in [("V_MPEG4/ISO/AVC", "V_XXXXX/ISO/XYZ"), ("A_OPUS", "A_XYZW"), ("S_TEXT/UTF8", "S_XXXX/XYZW")] {
            let f = Data(from.utf8), t = Data(to.utf8)
            guard data.range(of: f) != nil else { throw TestFailure("codec id \(from) not found in angle3") }
            while let range = data.range(of: f) { data.replaceSubrange(range, with: t) }
        }
        let out = try scratch().appendingPathComponent("undecodable.mkv")
        try data.write(to: out)
        return out.path
    }
}

/// Collects a player's events and waits for conditions on them with a deadline.
actor EventLog {
    private(set) var events: [PlayerEvent] = []
    private var task: Task<Void, Never>?

    init(_ player: Player) async {
        let stream = await player.events()
        task = Task { [weak self] in
            for await event in stream { await self?.append(event) }
        }
    }
    private func append(_ e: PlayerEvent) { events.append(e) }

    var statuses: [PlayerStatus] { events.compactMap { if case .status(let s) = $0 { return s } else { return nil } } }
    var failure: PlayerError? { events.lazy.compactMap { if case .failed(let e) = $0 { return e } else { return nil } }.first }
    var sawEndOfStream: Bool { events.contains { if case .endOfStream = $0 { return true } else { return false } } }
    var mediaInfo: ViewMediaInfo? { events.lazy.compactMap { if case .mediaInfo(let i) = $0 { return i } else { return nil } }.last }
}


func makePlayer(_ number: Int = 1, name: String = "test", audio: AudioOutput = .fakeSink) throws -> Player {
    try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: number, name: name),
                                                  video: .fakeSink, audio: audio))
}

/// Records stage output for assertions.
final class RecordingReporter: StageReporter, @unchecked Sendable {
    // Sendable: all access to `lines` goes through `lock`.
    private let lock = NSLock()
    private var _statusLines: [String] = []
    private var _notes: [String] = []
    func status(_ line: String) { lock.withLock { _statusLines.append(line) } }
    func note(_ line: String) { lock.withLock { _notes.append(line) } }
    var statusLines: [String] { lock.withLock { _statusLines } }
    var notes: [String] { lock.withLock { _notes } }
}

/// A stage the test drives: `input` feeds its commands, `run` ends with its outcome.
struct RunningStage {
    let stage: Stage
    let input: AsyncStream<StageCommand>.Continuation
    let run: Task<StageOutcome, Never>
}

/// Starts `stage` on a command stream the test feeds and waits (up to `timeout`) until it has `views` players, all
/// PLAYING; fails the test (at the caller's line) when they do not come.
func startStage(_ stage: Stage, views: Int, timeout: Duration = .seconds(20),
                file: StaticString = #filePath, line: UInt = #line) async -> RunningStage {
    let (commands, input) = AsyncStream<StageCommand>.makeStream()
    let run = Task { await stage.run(commands: commands) }
    let playing = await eventually(timeout: timeout) { await stage.hasPlaying(views: views) }
    XCTAssertTrue(playing, "not all \(views) views PLAYING within \(timeout)", file: file, line: line)
    return RunningStage(stage: stage, input: input, run: run)
}

extension Stage {
    /// True when the stage has `views` players and every one is PLAYING (for `eventually`).
    func hasPlaying(views: Int) async -> Bool {
        let players = currentPlayers
        guard players.count == views else { return false }
        for player in players where await player.currentStatus.state != .playing { return false }
        return true
    }
}

/// Test services (PulseAudio, X display) are started by Scripts/test; a test that needs one fails loudly
/// when it is missing rather than skipping.
enum Services {
    static func requirePulseAudio(file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try? runTool("/usr/bin/pactl", ["info"])
        guard let result, result.status == 0 else {
            XCTFail("PulseAudio is not reachable: run the tests through Scripts/test, which starts a daemon",
                    file: file, line: line)
            throw CancellationError()
        }
    }
    static func requireDisplay(file: StaticString = #filePath, line: UInt = #line) throws {
        let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        // Why it failed goes into the message: a shard's running Xvfb was once refused within 13 ms (session 15).
        var why = "DISPLAY is empty"
        if !display.isEmpty {
            do {
                let result = try runTool("/usr/bin/xdpyinfo", ["-display", display])
                if result.status == 0 { return }
                why = "xdpyinfo exit \(result.status): \(result.stderr.prefix(300))"
            } catch {
                why = "xdpyinfo did not run: \(error)"
            }
        }
        XCTFail("no X display (DISPLAY='\(display)'; \(why)): run the tests through Scripts/test, which starts Xvfb",
                file: file, line: line)
        throw CancellationError()
    }
}

/// Asserts that each of `views` views plays at the end of a CLI run: PLAYING in one of the last three status lines
/// of `stdout` (a second apart). Not all in the very last one: under the shards' load (debug build, 2 other shards,
/// 2 cores) a view's decoder can fall 0.5 s behind for a moment; the starvation watch then rightly shows it
/// BUFFERING and, coordinated, the view is caught up ("waiting for coordinated playback") — repeat runs on
/// 2378105 and f1334c9 failed on exactly that in one line.
func assertEveryViewPlaysAtTheEnd(_ stdout: String, views: Int, _ context: @autoclosure () -> String,
                                  file: StaticString = #filePath, line: UInt = #line) {
    let tail = stdout.split(separator: "\n").suffix(3).map { $0.components(separatedBy: " | ") }
    XCTAssertFalse(tail.isEmpty, "no status line: \(context())", file: file, line: line)
    for view in 0..<views {
        let states = tail.map { $0.count == views ? $0[view] : "(line with \($0.count) entries)" }
        XCTAssertTrue(states.contains { $0.contains("PLAYING") }, "view \(view + 1) in the last lines: \(states)\n\(context())",
                      file: file, line: line)
    }
}

