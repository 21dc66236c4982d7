import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// Audio and subtitle language selection on angle3 (audio en = 880 Hz, fr = 1320 Hz; English subtitles),
/// heard for real: the CLI plays into a PulseAudio null sink of its own and the monitor is recorded and FFT'd.
final class LanguageTests: XCTestCase {
    func testInfoListsTheLanguageOptions() throws {
        let result = try runTool(TestMedia.multiview, ["info", TestMedia.angle3])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("audio languages: en (default), fr"), result.stdout)
        XCTAssertTrue(result.stdout.contains("subtitles: en, off"), result.stdout)
    }

    func testSwitchingTheAudioLanguageChangesTheToneHeard() async throws {
        let sink = try NullSink(name: "mv_lang_\(getpid())_\(UInt16.random(in: 0...9999))")
        defer { sink.unload() }
        var env = ProcessInfo.processInfo.environment
        env["PULSE_SINK"] = sink.name
        let app = try Child(TestMedia.multiview, ["play", "--headless", "--no-mpris", "--audio-lang", "fr", "--duration", "40",
                                                  TestMedia.angle3], environment: env)
        defer { _ = app.stop() }
        let playing = await eventually(timeout: .seconds(30)) { app.output.stdout.contains("PLAYING") }
        XCTAssertTrue(playing, app.output.stderr)
        // The wish is applied once the view has prerolled (on its default track): wait until the track is heard
        // (PulseAudio's buffer still holds the old one for a while, longer on a cold machine), then judge 2 s.
        try await waitUntilHearing(1320, on: sink, "with --audio-lang fr")
        try assertHearing(1320, not: 880, on: sink, "with --audio-lang fr")

        await send("lang 1 audio en", to: app, answered: "view 1: audio en")
        try await waitUntilHearing(880, on: sink, "after lang 1 audio en")
        try assertHearing(880, not: 1320, on: sink, "after lang 1 audio en")

        // Unknown language: one clear line naming the view; the view keeps playing its track.
        await send("lang 1 audio de", to: app,
                   answered: "view 1 (angle3-right.mkv): no audio track in language 'de' (available: en, fr)")
        await send("subs 1 off", to: app, answered: "view 1: subtitles off")
        let still = try sink.record(seconds: 1)
        XCTAssertEqual(still.dominant, 880, accuracy: 5, "\(still)")
    }

    /// Records half-second pieces of the sink's monitor until `tone` dominates one (20 s at most); fails with
    /// what was heard instead.
    private func waitUntilHearing(_ tone: Int, on sink: NullSink, _ label: String,
                                  file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var heard: [String] = []
        while ContinuousClock.now < deadline {
            let piece = try sink.record(seconds: 0.5)
            if abs(piece.dominant - Double(tone)) <= 5 { return }
            heard.append("\(piece.dominant)")
        }
        XCTFail("\(label): \(tone) Hz never dominated; heard (Hz) \(heard)", file: file, line: line)
    }

    /// Two seconds of the sink's monitor: `tone` dominates and is 5× louder than `other`.
    private func assertHearing(_ tone: Int, not other: Int, on sink: NullSink, _ label: String,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let heard = try sink.record(seconds: 2)
        XCTAssertEqual(heard.dominant, Double(tone), accuracy: 5, "\(label): \(heard)", file: file, line: line)
        XCTAssertGreaterThan(heard.level(tone), 5 * heard.level(other), "\(label): the \(other) Hz tone is audible: \(heard)",
                             file: file, line: line)
    }

    /// Sends a command line to the CLI and waits (10 s) until its stderr shows `answer`.
    private func send(_ command: String, to app: Child, answered answer: String,
                      file: StaticString = #filePath, line: UInt = #line) async {
        app.send(command)
        let answered = await eventually(timeout: .seconds(10)) { app.output.stderr.contains(answer) }
        XCTAssertTrue(answered, "no '\(answer)' after '\(command)': \(app.output.stderr)", file: file, line: line)
    }

    /// Subtitle selection as the pipeline sees it (STREAMS_SELECTED): on by language, off, on again.
    func testSubtitleSelectionReachesThePipeline() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: "angle3-right.mkv")))
        try await player.setLanguagePreferences(LanguagePreferences(audio: "fr", subtitles: .language("en")))
        try await player.load(MediaSource(TestMedia.angle3))
        try await player.play()
        func selected() async -> [String] {
            await player.selectedStreams.map { "\($0.kind.rawValue):\($0.language ?? "und")" }.sorted()
        }
        func expectSelected(_ wanted: [String], line: UInt = #line) async {
            let reached = await eventually { await selected() == wanted }
            let now = await selected()
            XCTAssertTrue(reached, "\(now)", line: line)
        }
        await expectSelected(["audio:fr", "text:en", "video:und"])
        // Off hides the subtitles and keeps their stream selected (deselecting it froze the view when it was
        // selected again: issue 15 row 4, SubtitleToggleTests).
        try await player.selectSubtitles(.off)
        let shown = await player.subtitlesShown
        XCTAssertFalse(shown, "subs off left the subtitles shown")
        await expectSelected(["audio:fr", "text:en", "video:und"])
        try await player.selectAudio(language: "eng")
        await expectSelected(["audio:en", "text:en", "video:und"])
        do {
            try await player.selectSubtitles(.language("fr"))
            XCTFail("French subtitles do not exist")
        } catch let error as LanguageSelectionError {
            XCTAssertEqual(error.description, "view 1 (angle3-right.mkv): no subtitle track in language 'fr' (available: en)")
        }
        // The view keeps playing after the switches.
        let before = await player.position?.seconds ?? 0
        let advanced = await eventually { (await player.position?.seconds ?? 0) > before + 0.5 }
        XCTAssertTrue(advanced, "the view stopped advancing after the stream switches")
        await player.stop()
    }
}

/// A uniquely named PulseAudio null sink for one test, and recordings of its monitor.
final class NullSink: Sendable {
    let name: String
    private let module: String

    init(name: String) throws {
        let info = try? runTool("/usr/bin/pactl", ["info"])
        guard let info, info.status == 0 else {
            throw TestFailure("PulseAudio is not reachable: run the tests through Scripts/test, which starts a daemon")
        }
        let loaded = try runTool("/usr/bin/pactl", ["load-module", "module-null-sink", "sink_name=\(name)",
                                                    "sink_properties=device.description=\(name)"])
        guard loaded.status == 0 else { throw TestFailure("cannot load a null sink: \(loaded.stderr)") }
        self.name = name
        module = loaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func unload() { _ = try? runTool("/usr/bin/pactl", ["unload-module", module]) }

    /// Records the monitor for `seconds` and returns its spectrum summary.
    func record(seconds: Double) throws -> Spectrum {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        // Raw samples: the recorder may have to be killed (SIGKILL leaves a WAV header unfinished).
        // A small latency: an idle null sink's monitor otherwise comes in 2 s blocks (platform notes).
        let recorder = try Child("/usr/bin/parecord", ["--device=\(name).monitor", "--raw", "--rate=48000",
                                                       "--channels=1", "--format=s16le", "--latency-msec=10", file],
                                 environment: ProcessInfo.processInfo.environment)
        // Recorded until the file holds `seconds` of audio past the skipped start (2 bytes a sample), not for
        // `seconds` of wall time: parecord connects late on a cold machine.
        let bytes = Int((seconds + 0.1) * 48000) * 2
        let deadline = ContinuousClock.now + .seconds(seconds + 15)
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? 0 }
        while size() < bytes && recorder.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        let recorded = size()
        let status = recorder.stop(timeout: 2)
        guard recorded >= bytes else {
            throw TestFailure("parecord recorded \(recorded) of \(bytes) bytes (exit \(status)): \(recorder.output.stderr)")
        }
        let analysis = try runTool("/usr/bin/python3", ["-c", Spectrum.script, file])
        guard analysis.status == 0 else { throw TestFailure("FFT failed: \(analysis.stderr)") }
        return try Spectrum(analysis.stdout)
    }
}

/// Dominant frequency and band levels of a recording (python3-numpy does the FFT).
struct Spectrum: CustomStringConvertible {
    var dominant: Double
    var levels: [Int: Double]
    func level(_ hz: Int) -> Double { levels[hz] ?? 0 }
    var description: String { "dominant \(dominant) Hz, levels \(levels.sorted { $0.key < $1.key })" }

    init(_ text: String) throws {
        let words = text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard words.count == 3 else { throw TestFailure("bad FFT output '\(text)'") }
        dominant = words[0]
        levels = [880: words[1], 1320: words[2]]
    }

    static let script = """
    import sys, numpy as np
    x = np.fromfile(sys.argv[1], dtype='<i2').astype(float)
    x = x[int(0.1 * 48000):]  # skip the recorder's start
    if len(x) < 4800 or np.max(np.abs(x)) == 0: print(0, 0, 0); sys.exit(0)
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    f = np.fft.rfftfreq(len(x), 1 / 48000)
    low = spec * (f < 3000)
    band = lambda hz: float(np.max(spec[(f > hz - 10) & (f < hz + 10)]))
    print(float(f[int(np.argmax(low))]), band(880), band(1320))
    """
}
