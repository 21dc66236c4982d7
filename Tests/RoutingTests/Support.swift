import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// The bundled media, located from this file (Tests/RoutingTests/Support.swift → repo root).
enum RoutingMedia {
    static let root = repoRoot
    static func path(_ file: String) -> String { root.appendingPathComponent("Media").appendingPathComponent(file).path }
    /// angle1 440 Hz, angle2 660 Hz, angle3 880 Hz, angle4 1100 Hz (Media/.manifest.json).
    static let angles: [(file: String, tone: Double)] = [
        ("angle1-wide.mp4", 440), ("angle2-left.webm", 660), ("angle3-right.mkv", 880), ("angle4-overhead.mp4", 1100),
    ]
}


/// The setup of the tests that talk to the test daemon: a `PulseFixture` per test, and at the end the views the test
/// started (`views`) stopped and the fixture's modules unloaded. A base class without tests of its own.
class PulseTestCase: XCTestCase {
    var pulse: PulseFixture!
    var views: RoutedViews?

    override func setUp() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        pulse = try await PulseFixture.connect()
    }

    override func tearDown() async throws {
        await views?.stop()
        views = nil
        await pulse?.tearDown()
    }
}

/// A connection to the test daemon plus the null sinks a test loaded (unloaded at the end, so tests sharing the
/// daemon never see each other's sinks). Fails the test loudly when PulseAudio is not reachable.
final class PulseFixture: @unchecked Sendable {
    // Sendable: `modules` is touched only from the test's own (serial) flow.
    let client: PulseAudioClient
    private var modules: [UInt32] = []
    let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    private init(client: PulseAudioClient) { self.client = client }

    static func connect() async throws -> PulseFixture {
        do {
            return PulseFixture(client: try await PulseAudioClient.connect(applicationName: "multiview-tests"))
        } catch {
            XCTFail("PulseAudio is not reachable (\(error)). Run the tests through Scripts/test.")
            throw error
        }
    }

    /// Loads a null sink named `base_<tag>` and returns its name.
    @discardableResult
    func nullSink(_ base: String, properties: String = "") async throws -> String {
        let name = "\(base)_\(tag)"
        let props = "device.description=\(base)" + (properties.isEmpty ? "" : " " + properties)
        let module = try await client.loadModule("module-null-sink", arguments: "sink_name=\(name) sink_properties='\(props)'")
        modules.append(module)
        return name
    }

    /// Loads any module (unloaded at teardown).
    func loadModule(_ name: String, arguments: String) async throws {
        modules.append(try await client.loadModule(name, arguments: arguments))
    }

    func moduleIndex(ofSink name: String) async throws -> UInt32? { try await client.sinks().first { $0.name == name }?.ownerModule }

    func unload(sink name: String) async throws {
        guard let module = try await moduleIndex(ofSink: name) else { return }
        try await client.unloadModule(module)
        modules.removeAll { $0 == module }
    }

    /// Makes sure module-role-cork is loaded (unloaded at teardown if we loaded it).
    func ensureRoleCork() async throws {
        let listed = try runTool(["pactl", "list", "short", "modules"])
        if !listed.output.contains("module-role-cork") {
            modules.append(try await client.loadModule("module-role-cork", arguments: ""))
        }
    }

    func tearDown() async {
        for module in modules.reversed() { try? await client.unloadModule(module) }
        modules = []
    }

    /// Our arbiter's streams (by instance), with their view numbers.
    func streams(of instance: String) async throws -> [(view: Int, input: PulseSinkInput)] {
        try await client.sinkInputs().compactMap { input in
            guard input.properties["multiview.instance"] == instance,
                  let view = input.properties["multiview.view"].flatMap({ Int($0) }) else { return nil }
            return (view, input)
        }
    }

    /// Views of `arbiter` whose streams play on `sink`, per the server.
    func viewsOn(_ sink: String, _ arbiter: RoutingArbiter) async throws -> [Int] {
        let index = try await sinkIndex(sink)
        return try await streams(of: arbiter.instance).filter { $0.input.sink == index }.map(\.view).sorted()
    }

    func sinkIndex(_ name: String) async throws -> UInt32? { try await client.sinks().first { $0.name == name }?.index }
}

/// Records a sink's monitor (mono float32 at 48 kHz) into a file with an in-process GStreamer pipeline
/// (pulsesrc → filesink, unbuffered so the file can be read while it grows; going to NULL closes it).
///
/// Positions are sample indices, never wall time: on a cold machine PulseAudio may start the record stream (and the
/// streams it records) a second or more after PLAYING, so "1.5 s after the recording started" says nothing about
/// what was heard. Tests wait for the sound itself (`waitUntil`) and mark events by `sampleCount`.
final class MonitorRecording {
    static let rate = 48_000.0
    let path: String
    private let pipeline: Pipeline

    init(sink: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("routing-\(UUID().uuidString).f32").path
        pipeline = try Pipeline.parseLaunch("""
            pulsesrc device=\(sink).monitor buffer-time=20000 latency-time=10000 ! \
            audio/x-raw,format=F32LE,channels=1,rate=48000 ! filesink buffer-mode=unbuffered location=\(path)
            """)
        try pipeline.setState(.playing)
        // pulsesrc is live: PLAYING is reached without preroll, so this answers at once unless the source failed.
        let reached = try pipeline.waitForState(timeout: .seconds(5))
        guard reached == .playing else { throw TestFailure("recording \(sink).monitor: the pipeline is \(reached), not PLAYING") }
    }

    /// Everything recorded so far (a partial sample at the end of the file is left for the next read).
    var samplesSoFar: [Float] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let whole = data.prefix(data.count / 4 * 4)
        return whole.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// How many samples the file holds now: the position of "now" in the recording, give or take the source's
    /// 10–30 ms of latency.
    var sampleCount: Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return size / 4
    }

    /// Polls the recording every 50 ms until `condition` holds for what was recorded so far, or `timeout` passes;
    /// the samples of the last poll either way (for the test's assertions and messages).
    func waitUntil(timeout: Duration, _ condition: ([Float]) -> Bool) async -> (met: Bool, samples: [Float]) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let samples = samplesSoFar
            if condition(samples) { return (true, samples) }
            if ContinuousClock.now >= deadline { return (false, samples) }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() -> [Float] {
        do { try pipeline.setState(.null) } catch { XCTFail("recording \(path): \(error)") }
        defer { try? FileManager.default.removeItem(atPath: path) }
        return samplesSoFar
    }
}

/// Spectrum helpers: Goertzel magnitude at one frequency; the dominant frequency in a band (5 Hz steps).
enum Spectrum {
    static func level(_ x: ArraySlice<Float>, frequency: Double, rate: Double = MonitorRecording.rate) -> Double {
        goertzel(windowed(x), frequency: frequency, rate: rate)
    }

    static func dominant(_ x: ArraySlice<Float>, from low: Double = 200, to high: Double = 2000) -> (frequency: Double, level: Double) {
        // The window is applied once for the whole scan (361 frequencies over the same samples).
        let w = windowed(x)
        var best = (frequency: 0.0, level: 0.0)
        var f = low
        while f <= high {
            let l = goertzel(w, frequency: f, rate: MonitorRecording.rate)
            if l > best.level { best = (f, l) }
            f += 5
        }
        return best
    }

    /// Hann window: keeps the 1 s clicks and neighbouring tones from leaking into each other.
    private static func windowed(_ x: ArraySlice<Float>) -> [Double] {
        let n = Double(max(1, x.count - 1))
        return x.enumerated().map { i, sample in Double(sample) * (0.5 - 0.5 * cos(2 * Double.pi * Double(i) / n)) }
    }

    /// Goertzel magnitude of `x` at one frequency, per sample.
    private static func goertzel(_ x: [Double], frequency: Double, rate: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / rate)
        var s1 = 0.0, s2 = 0.0
        for sample in x {
            let s = sample + coefficient * s1 - s2
            s2 = s1; s1 = s
        }
        return sqrt(max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)) / Double(max(1, x.count))
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return 0 }
        return sqrt(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }
}

/// Players made the way the stage makes them with routing: configured by the arbiter, attached, loaded, playing.
struct RoutedViews {
    let arbiter: RoutingArbiter
    let players: [Player]

    static func start(_ arbiter: RoutingArbiter, files: [String], audio: AudioOutput = .pulse(device: nil)) async throws -> RoutedViews {
        var players: [Player] = []
        for (i, file) in files.enumerated() {
            let base = PlayerConfiguration(view: ViewIdentity(number: i + 1, name: (file as NSString).lastPathComponent),
                                           video: .fakeSink, audio: audio)
            let player = try Player(configuration: await arbiter.configure(base))
            await arbiter.attach(player)
            try await player.load(MediaSource(RoutingMedia.path(file)))
            players.append(player)
        }
        for player in players { try await player.play() }
        return RoutedViews(arbiter: arbiter, players: players)
    }

    func stop() async {
        for player in players { await player.stop() }
        await arbiter.shutdown()
    }
}

/// A second X server of the test's own standing for the TV. Xvfb picks a free display number itself (`-displayfd`:
/// it holds the socket and lock before it tells the number), so it can never take the display of a shard or of
/// another test starting at the same moment; `stop` then removes a lock and socket that are certainly its own.
final class XvfbDisplay {
    let name: String
    private let number: Int
    private let process: Process
    private let numberFile: String

    init(width: Int = 1280, height: Int = 720) throws {
        numberFile = FileManager.default.temporaryDirectory.appendingPathComponent("tv-display-\(UUID().uuidString)").path
        // `exec`: the started process is Xvfb itself, so stopTool's SIGKILL reaches the server.
        let p = try startTool(["sh", "-c", "exec Xvfb -displayfd 3 -screen 0 \(width)x\(height)x24 -nolisten tcp -noreset 3>\"$0\"",
                               numberFile])
        let deadline = ContinuousClock.now + .seconds(10)
        var found: Int?
        while p.isRunning && ContinuousClock.now < deadline {
            // One line, "N\n", written once the server listens.
            if found == nil, let text = try? String(contentsOfFile: numberFile, encoding: .utf8), text.hasSuffix("\n") {
                found = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if let n = found, ExternalDisplayWindow.probe(display: ":\(n)") != nil {
                number = n; name = ":\(n)"; process = p
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        stopTool(p)
        try? FileManager.default.removeItem(atPath: numberFile)
        throw TestFailure("Xvfb for the TV did not answer within 10 s (display \(found.map { ":\($0)" } ?? "not told");"
                          + " is xvfb installed? Scripts/setup)")
    }

    /// SIGTERM, so the server removes its own lock and socket; only a server that does not end within 2 s is
    /// killed (`stopTool`) and its files removed by us (the number is free only once it is gone, so no other server
    /// can hold it yet).
    func stop() {
        defer { try? FileManager.default.removeItem(atPath: numberFile) }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(2)
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard process.isRunning else { process.waitUntilExit(); return }
        stopTool(process)
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
    }

    /// The whole screen as RGB bytes (ximagesrc, one frame).
    func screenshot() throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("routing-shot-\(UUID().uuidString).rgb").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runTool(["gst-launch-1.0", "-q", "ximagesrc", "display-name=\(name)", "num-buffers=1", "use-damage=false",
                                  "!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "filesink", "location=\(path)"])
        guard result.status == 0, let data = FileManager.default.contents(atPath: path),
              let size = ExternalDisplayWindow.probe(display: name), data.count >= size.width * size.height * 3 else {
            throw TestFailure("screenshot of \(name) failed: \(result.output)")
        }
        // ximagesrc rows may be padded to 4 bytes; 1280 * 3 is a multiple of 4, so none here.
        return (size.width, size.height, Array(data.prefix(size.width * size.height * 3)))
    }

    /// The most common colour on the screen (quantised to 8 levels per step): the clip's background colour.
    func dominantColour() throws -> (r: Int, g: Int, b: Int) {
        let shot = try screenshot()
        var counts: [Int: Int] = [:]
        var i = 0
        while i + 2 < shot.rgb.count {
            let key = (Int(shot.rgb[i]) >> 3) << 10 | (Int(shot.rgb[i + 1]) >> 3) << 5 | (Int(shot.rgb[i + 2]) >> 3)
            counts[key, default: 0] += 1
            i += 3 * 7  // every 7th pixel is plenty
        }
        let key = counts.max { $0.value < $1.value }!.key
        return (((key >> 10) & 31) << 3 + 4, ((key >> 5) & 31) << 3 + 4, (key & 31) << 3 + 4)
    }
}

/// Which bundled angle a colour is the background of (Scripts/make-media: angle1 0x1e5028, angle2 0x1e4650,
/// angle3 0x142850, angle4 0x502a1e); nil when none is within reach (black screen, anything else).
func angle(ofBackground c: (r: Int, g: Int, b: Int)) -> Int? {
    let backgrounds = [(30, 80, 40), (30, 70, 80), (20, 40, 80), (80, 42, 30)]
    let distances = backgrounds.map { abs($0.0 - c.r) + abs($0.1 - c.g) + abs($0.2 - c.b) }
    let best = distances.enumerated().min { $0.element < $1.element }!
    return best.element <= 36 ? best.offset + 1 : nil
}

/// A PulseAudio daemon of the test's own (not the shared test daemon), which the test may stop and start again on
/// the same socket: a null sink as its default sink, anonymous auth. Its log (notice level and up, so an assertion
/// that aborts it is there) goes to `logPath`, started afresh by each `start()`; when the daemon ended by itself,
/// `death` says how.
final class PrivatePulseDaemon {
    let directory: URL
    var socket: String { directory.appendingPathComponent("native").path }
    var server: String { "unix:\(socket)" }
    var logPath: String { directory.appendingPathComponent("pulseaudio.log").path }
    private var process: Process?

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/mv-pa-\(getpid())-\(UInt16.random(in: 0...UInt16.max))")
        for sub in ["home", "run/pulse"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.appendingPathComponent("run").path)
    }

    /// The daemon's process id while it runs.
    var pid: pid_t? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    func start() async throws {
        let home = directory.appendingPathComponent("home").path, run = directory.appendingPathComponent("run").path
        let started = try startTool(["HOME=\(home)", "XDG_RUNTIME_DIR=\(run)", "PULSE_RUNTIME_PATH=\(run)/pulse",
                                     "XDG_CONFIG_HOME=\(home)",
                                     "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                                     "--log-target=stderr", "--log-time=yes",
                                     "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1",
                                     "-L", "module-null-sink sink_name=private_sink"], output: logPath)
        process = started
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline && started.isRunning {
            if (try? await PulseAudioClient.connect(server: server)) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("the private PulseAudio daemon did not answer on \(socket)\(death.map { ": \($0)" } ?? "")")
    }

    /// How the daemon ended when it ended by itself (nil while it runs, and after `stop()`): its exit status or the
    /// signal that ended it (SIGABRT: a failed pa_assert), and the last lines of its log.
    var death: String? {
        guard let process, !process.isRunning else { return nil }
        let status = process.terminationStatus
        let how = process.terminationReason == .uncaughtSignal
            ? "was killed by signal \(status) (\(String(cString: strsignal(status))))" : "exited with status \(status)"
        return "the test's PulseAudio daemon (pid \(process.processIdentifier)) \(how); the end of its log (\(logPath)):\n"
            + logTail(lines: 12)
    }

    /// The last `lines` lines of the daemon's log.
    func logTail(lines: Int) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "(no log at \(logPath))" }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    func stop() {
        if let process { stopTool(process) }
        process = nil
        try? FileManager.default.removeItem(atPath: socket)
    }

    /// SIGSTOP: the daemon keeps its socket but answers nothing until stopped for good.
    func freeze() {
        if let process, process.isRunning { kill(process.processIdentifier, SIGSTOP) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
