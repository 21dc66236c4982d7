// netclock-baseline: raw GStreamer over the network clock, no coordination layer — the baseline row of
// Scripts/bench-network (issue 17). Uses only the GStreamer module.
//
//   netclock-baseline provide [--address 127.0.0.1] [--port 0]
//       serves the system clock (GstNetTimeProvider); prints "port P", runs until stdin closes or SIGTERM.
//   netclock-baseline play --clock ADDR:PORT|local --base-time NS --media FILE --record FILE.csv --duration S
//                          [--seek-at NS --seek-to S] [--start-margin S] [--pulsesink-properties "k=v …"]
//       slaves a pipeline to a GstNetClientClock of ADDR:PORT, starts it at the given base time (an instant on the
//       provider's clock, chosen by the caller for every member), optionally seeks at SEEK-AT (pause, flushing
//       accurate seek, new base time SEEK-AT + START-MARGIN: what a raw multi-host player does), and records each
//       video frame's render instant (CLOCK_MONOTONIC, shared by every namespace of this machine, and the net
//       clock's reading) as "pts_ns,monotonic_ns,netclock_ns" lines. Audio goes to the default PulseAudio sink
//       (PULSE_SINK) with pulsesink's defaults unless properties are given.
//   netclock-baseline probe --clock ADDR:PORT --seconds S [--tuning standard|previous|gstreamer]
//                           [--minimum-update-interval MS] [--poll-interval MS] [--window N] [--round-trip-limit MS]
//                           [--adapt-limit yes|no] [--limit-after N --limit-margin MS] [--settle-window N]
//                           [--settle-spread MS]
//       the client clock's true error over time with those tunables (Scripts/bench-network's clock section), every
//       exchange's RTT and own offset error, when it settled (NetClockSettling with that window and spread), and
//       the process's CPU time.
import Foundation
import GStreamer
import Synchronization

struct Failure: Error, CustomStringConvertible { var description: String }

/// Render records, appended on the video sink's streaming thread and read once at the end (Mutex-owned).
final class RenderLog: Sendable {
    let lines = Mutex<[String]>([])
}

/// Parsed `--name value` options.
struct Options {
    var values: [String: String] = [:]
    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), let value = rest.popFirst() else { throw Failure(description: "bad argument \(name)") }
            values[String(name.dropFirst(2))] = value
        }
    }
    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw Failure(description: "missing --\(name)") }
        return value
    }
    func number(_ name: String) throws -> Double {
        guard let value = Double(try string(name)) else { throw Failure(description: "--\(name) is not a number") }
        return value
    }
    func nanoseconds(_ name: String) throws -> UInt64 {
        guard let value = UInt64(try string(name)) else { throw Failure(description: "--\(name) is not nanoseconds") }
        return value
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func provide(_ options: Options) async throws {
    let address = options.values["address"] ?? "127.0.0.1"
    let port = UInt16(options.values["port"] ?? "0") ?? 0
    let provider = try NetTimeProvider(clock: .systemClock(), address: address, port: port)
    say("port \(provider.port)")
    // Runs until stdin closes (the bench holds it open) — read on a plain thread, not the cooperative pool.
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            while let _ = readLine() {}
            done.resume()
        }
    }
    withExtendedLifetime(provider) {}
}

/// Waits on the cooperative pool (by sleeping, not blocking) until `clock` reads at least `instant`.
func sleep(until instant: UInt64, on clock: Clock) async throws {
    let now = clock.time.nanoseconds
    if instant > now { try await Task.sleep(for: .nanoseconds(Int64(instant - now))) }
}

/// Waits for the pipeline's ASYNC_DONE (preroll after a state change or a flushing seek) or an error.
func waitForPreroll(_ messages: inout AsyncStream<BusMessage>.Iterator) async throws {
    while let message = await messages.next() {
        switch message {
        case .asyncDone: return
        case .error(let info): throw Failure(description: "pipeline error: \(info)")
        default: continue
        }
    }
    throw Failure(description: "bus closed")
}

/// Measures a NetClientClock's true error: its reading minus the system clock's (CLOCK_MONOTONIC, the provider's
/// clock, shared by every namespace of this machine), every 25 ms for `--seconds` after it synchronised, with the
/// tunables given (`--tuning NAME` as the base: standard, previous, gstreamer; each option overrides one value).
/// `--adapt-limit yes|no` turns `RoundTripLimitPolicy` on or off; `--limit-after N --limit-margin MS` (an
/// experiment, without the policy): after N exchanges, round-trip-limit = the shortest round trip seen + MS. Prints "synced MS", "error T_MS ERROR_US" lines, "exchange T_MS RTT_US OFFSET_ERROR_US SYNCED"
/// for every exchange GStreamer reported (its own offset estimate − the truth, 0: one kernel clock), "settled …",
/// and "cpu MS" (this process's CPU time over the probe: the clock's polling thread and the sampling).
func probe(_ options: Options) async throws {
    let endpoint = try options.string("clock").split(separator: ":")
    guard endpoint.count == 2, let port = UInt16(endpoint[1]) else { throw Failure(description: "--clock ADDR:PORT") }
    let seconds = try options.number("seconds")
    let system = Clock.systemClock()
    let started = system.time
    let cpuAtStart = processCPUTime()
    func ms(_ name: String) -> Duration? { options.values[name].flatMap(Double.init).map { .microseconds(Int64($0 * 1000)) } }
    var tuning = NetClockTuning.standard
    if let name = options.values["tuning"] {
        guard let named = NetClockTuning.named[name] else { throw Failure(description: "--tuning \(name): not one of \(NetClockTuning.named.keys.sorted())") }
        tuning = named
    }
    if let limit = ms("round-trip-limit") { tuning.roundTripLimit = limit }
    if let interval = ms("minimum-update-interval") { tuning.minimumUpdateInterval = interval }
    if let poll = ms("poll-interval") { tuning.pollInterval = poll }
    if let window = options.values["window"].flatMap(Int.init) { tuning.calibrationWindow = window }
    if let adapt = options.values["adapt-limit"] { tuning.adaptsRoundTripLimit = adapt == "yes" }
    if options.values["limit-after"] != nil { tuning.adaptsRoundTripLimit = false }   // the experiment sets it alone
    let clock = try NetClientClock(address: String(endpoint[0]), port: port, baseTime: started, tuning: tuning)
    let exchanges = RenderLog()
    let limitAfter = options.values["limit-after"].flatMap(Int.init)
    let limitMargin = ms("limit-margin") ?? .milliseconds(10)
    let exchangeWatch = Task {
        var seen = 0
        var shortest = Duration.seconds(3600)
        for await statistics in clock.statistics() {
            let at = system.time.nanoseconds
            seen += 1
            shortest = min(shortest, statistics.roundTrip)
            if let limitAfter, seen == limitAfter { clock.roundTripLimit = shortest + limitMargin }
            let offset = statistics.exchangeOffset.map { String(Double(nanoseconds($0)) / 1e3) } ?? "nan"
            let line = "\(at) \(Double(nanoseconds(statistics.roundTrip)) / 1e3) \(offset) \(statistics.synchronised ? 1 : 0)"
            exchanges.lines.withLock { $0.append(line) }
        }
    }
    defer { exchangeWatch.cancel() }
    let members = NetClockSettling.Criteria()   // what a group member waits for
    let criteria = NetClockSettling.Criteria(window: options.values["settle-window"].flatMap(Int.init) ?? members.window,
                                             spread: ms("settle-spread") ?? members.spread)
    let settlement = NetClockSettlement(clock: clock, criteria: criteria)
    let settledAt = Mutex<UInt64?>(nil)
    let settleWatch = Task {
        if await settlement.waitUntilSettled() != nil { settledAt.withLock { $0 = system.time.nanoseconds } }
    }
    defer { settleWatch.cancel() }
    try await clock.waitForSync(timeout: .seconds(10))
    let synced = system.time
    say("synced \(Double((synced - started).nanoseconds) / 1e6) poll \(milliseconds(clock.pollInterval)) window \(clock.calibrationWindow)")
    var lines: [String] = []
    while system.time.nanoseconds < synced.nanoseconds + UInt64(seconds * 1e9) {
        let before = system.time.nanoseconds
        let reading = clock.time.nanoseconds
        let after = system.time.nanoseconds
        let midpoint = before / 2 + after / 2
        let error = Double(Int64(bitPattern: reading &- midpoint)) / 1e3
        lines.append("error \(Double(before - synced.nanoseconds) / 1e6) \(error)")
        try await Task.sleep(for: .milliseconds(25))
    }
    if let at = settledAt.withLock({ $0 }), let outcome = settlement.outcome {
        // ms after sync (negative: settled before the first "synced" signal was seen), accepted observations.
        lines.append("settled \(Double(Int64(at) - Int64(synced.nanoseconds)) / 1e6) \(outcome.accepted) \(milliseconds(outcome.spread))")
    }
    for line in exchanges.lines.withLock({ $0 }) {
        let parts = line.split(separator: " ", maxSplits: 1)
        guard let at = Int64(parts[0]) else { continue }
        lines.append("exchange \(Double(at - Int64(synced.nanoseconds)) / 1e6) \(parts[1])")
    }
    if let limit = clock.adaptiveRoundTripLimit { lines.append("limit \(milliseconds(limit))") }
    lines.append("cpu \(Double(nanoseconds(processCPUTime() - cpuAtStart)) / 1e6)")
    say(lines.joined(separator: "\n"))
    withExtendedLifetime(clock) {}
}

/// This process's CPU time so far (CLOCK_PROCESS_CPUTIME_ID: every thread, GStreamer's included).
func processCPUTime() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}

/// The clock a member plays on: the provider's time over the network (one base time for all), or its own
/// (`--clock local`: the pipeline picks its clock and base time when it starts, as an uncoordinated player does).
enum MemberClock {
    case network(NetClientClock)
    case local

    var clock: Clock? {
        if case .network(let clock) = self { return clock }
        return nil
    }
}

func play(_ options: Options) async throws {
    let baseTime = try options.nanoseconds("base-time")
    let media = URL(fileURLWithPath: try options.string("media")).absoluteString
    let record = try options.string("record")
    let duration = try options.number("duration")
    let margin = (try? options.number("start-margin")) ?? 1.0
    let system = Clock.systemClock()

    let member: MemberClock
    if try options.string("clock") == "local" {
        member = .local
    } else {
        let endpoint = try options.string("clock").split(separator: ":")
        guard endpoint.count == 2, let port = UInt16(endpoint[1]) else { throw Failure(description: "--clock ADDR:PORT or local") }
        let started = system.time
        let clock = try NetClientClock(address: String(endpoint[0]), port: port, baseTime: started, tuning: .standard)
        try await clock.waitForSync(timeout: .seconds(10))
        let rtt = clock.latestStatistics.map { String(format: "%.1f", milliseconds($0.roundTripAverage)) } ?? "?"
        say("synced \(Double((system.time - started).nanoseconds) / 1e6) ms rtt-average \(rtt) ms")
        member = .network(clock)
    }
    // Waits use the member's clock: the network one, or the system clock (one kernel clock for every namespace).
    let waitClock = member.clock ?? system

    let audioProperties = options.values["pulsesink-properties"] ?? ""
    let pipeline = try Pipeline.parseLaunch("""
        uridecodebin uri=\(media) name=d \
        d. ! videoconvert ! queue ! fakesink name=vsink sync=true signal-handoffs=true \
        d. ! audioconvert ! audioresample ! queue ! pulsesink name=asink \(audioProperties)
        """)
    guard let videoSink = pipeline.child(named: "vsink") else { throw Failure(description: "no video sink") }
    let renders = RenderLog()
    let connection = try videoSink.connect("handoff") { arguments in
        guard let pts = arguments.bufferTimestamp(at: 1) else { return }
        let line = "\(pts.nanoseconds),\(system.time.nanoseconds),\(waitClock.time.nanoseconds)"
        renders.lines.withLock { $0.append(line) }
    }
    let bus = pipeline.bus()
    var messages = bus.messages().makeAsyncIterator()
    if let clock = member.clock {
        pipeline.useClock(clock)
        pipeline.startTime = nil
    }
    _ = try pipeline.setState(.paused)
    try await waitForPreroll(&messages)
    if member.clock != nil {
        pipeline.baseTime = ClockTime(nanoseconds: baseTime)
    } else {
        // Uncoordinated: start when the caller said, the pipeline choosing its own base time.
        try await sleep(until: baseTime, on: system)
    }
    _ = try pipeline.setState(.playing)
    say("playing")

    var end = baseTime + UInt64(duration * 1e9)
    if let seekAt = options.values["seek-at"].flatMap(UInt64.init) {
        let seekTo = try options.number("seek-to")
        try await sleep(until: seekAt, on: waitClock)
        _ = try pipeline.setState(.paused)
        try pipeline.seek(flags: [.flush, .accurate], position: .seconds(seekTo))
        try await waitForPreroll(&messages)
        let newBase = seekAt + UInt64(margin * 1e9)
        if member.clock != nil { pipeline.baseTime = ClockTime(nanoseconds: newBase) }
        _ = try pipeline.setState(.playing)
        say("seeked")
        end = max(end, newBase + UInt64(duration * 1e9) / 2)
    }
    try await sleep(until: end, on: waitClock)
    _ = try pipeline.setState(.null)
    withExtendedLifetime(connection) {}
    let lines = renders.lines.withLock { $0 }
    try (lines.joined(separator: "\n") + "\n").write(toFile: record, atomically: true, encoding: .utf8)
    say("recorded \(lines.count) frames")
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "provide": try await provide(try Options(arguments.dropFirst()))
    case "play": try await play(try Options(arguments.dropFirst()))
    case "probe": try await probe(try Options(arguments.dropFirst()))
    default: throw Failure(description: "usage: netclock-baseline provide|play [options] (see the source header)")
    }
} catch {
    FileHandle.standardError.write(Data("error: netclock-baseline: \(error)\n".utf8))
    exit(1)
}
