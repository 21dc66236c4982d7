import Clocks
import Coordination
import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest

// Fake participants for the medium's tests without pipelines: time is a `TestClock` the fakes and the tests
// advance, and the pipelines' clock reads the same time (from a base), so preparing "takes" exactly what a test
// says, in no real time.

/// A `Duration` as whole nanoseconds (the test clock's spans are exact; no detour through Double seconds).
func nanoseconds(_ d: Duration) -> UInt64 {
    UInt64(d.components.seconds) * 1_000_000_000 + UInt64(d.components.attoseconds / 1_000_000_000)
}

/// The pipelines' clock for fakes: `base` plus the time the test clock has advanced since it was made.
final class TestPipelineTime: PipelineTimeSource {
    let clock: TestClock<Duration>
    let origin: TestClock<Duration>.Instant
    let base = ClockTime.seconds(1000)

    init(_ clock: TestClock<Duration>) {
        self.clock = clock
        origin = clock.now
    }

    var time: ClockTime { base + ClockTime(nanoseconds: nanoseconds(origin.duration(to: clock.now))) }
}

/// A medium on a test clock, with participants that are fakes.
struct FakeGroup {
    let clock = TestClock<Duration>()
    let time: TestPipelineTime
    let medium: PlaybackCoordinationMedium
    var targets: [FakeTarget] = []
    var coordinators: [PlaybackCoordinator] = []

    init() {
        time = TestPipelineTime(clock)
        medium = PlaybackCoordinationMedium(name: "test", waitClock: clock, pipelineTime: time)
    }

    /// Connects a fake participant named `id` playing `item`.
    @discardableResult
    mutating func add(_ id: String, item: String = "event", preparedStart: Bool = true) async throws -> FakeTarget {
        let target = FakeTarget(clock: clock, time: time, preparedStart: preparedStart)
        let coordinator = PlaybackCoordinator(id: ParticipantID(id), defaultIdentifier: item, target: target)
        try await coordinator.coordinate(using: medium)
        targets.append(target)
        coordinators.append(coordinator)
        return target
    }
}

extension FakeGroup {
    /// a and b playing for 2 s; c joins late and its catch-up's preparation is held at its gate (open it to go on).
    static func withCCatchingUp() async throws -> (FakeGroup, a: FakeTarget, late: FakeTarget, join: Task<Void, Error>) {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        try await group.coordinators[0].coordinatePlay()
        await group.clock.advance(by: .seconds(2))
        let late = try await group.add("c")
        late.closeGate()
        let c = group.coordinators[2]
        let join = Task { try await c.join() }
        await until("c is asked to prepare") { late.waitingAtGate == 1 }
        return (group, group.targets[0], late, join)
    }
}

/// A playback object that answers at once (or when its gate opens), takes the test time it is told to prepare,
/// and, like the Player, refuses a "play at C" that arrives after C.
final class FakeTarget: CoordinatedPlaybackTarget {
    let clock: TestClock<Duration>
    let time: TestPipelineTime
    let hasPreparedStart: Bool
    /// Every command received, in order.
    private let received = Mutex<[DelegatedCommand]>([])
    /// How long each coming buffer command takes (test time), first first; then zero.
    private let prepareTimes = Mutex<[Duration]>([])
    /// Buffer commands wait for a gate while gated; opening lets the waiting ones (and later ones) through.
    private let gate = TestGate()
    /// While stalled, buffer commands hang (cancellation does not end them): a pipeline that never prerolls.
    private let stall = Mutex<(on: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    /// Instants the prepared start (or "play at") started it at.
    private let starts = Mutex<[ClockTime]>([])
    /// How many buffer commands it has finished (its prepared start handed over).
    private let readyCount = Mutex(0)

    init(clock: TestClock<Duration>, time: TestPipelineTime, preparedStart: Bool) {
        self.clock = clock
        self.time = time
        self.hasPreparedStart = preparedStart
    }

    var commands: [DelegatedCommand] { received.withLock { $0 } }
    var buffers: [ClockTime] { commands.compactMap { if case .buffer(let t, _) = $0.kind { t } else { nil } } }
    var plays: [(item: ClockTime, at: ClockTime)] {
        commands.compactMap { if case .play(let t, _, let at) = $0.kind { (t, at) } else { nil } }
    }
    var pauses: [ClockTime] { commands.compactMap { if case .pause(let t) = $0.kind { t } else { nil } } }
    var startedAt: [ClockTime] { starts.withLock { $0 } }
    var timesReady: Int { readyCount.withLock { $0 } }

    func takePreparing(_ spans: Duration...) { prepareTimes.withLock { $0 += spans } }
    func closeGate() { gate.close() }
    func openGate() { gate.open() }
    var waitingAtGate: Int { gate.waiting }

    func stallPreparing() { stall.withLock { $0.on = true } }
    /// Ends the stall: the hung buffer commands go on (and later ones pass).
    func endStall() {
        let waiting = stall.withLock { state in
            state.on = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
    var stalledPreparations: Int { stall.withLock { $0.waiting.count } }

    func adopt(clock: Clock) async throws {}
    func releaseClock() async {}
    func currentItemTime() async -> ClockTime? { .zero }
    func isPlaying() async -> Bool { false }
    func setWaiting(_ waiting: Bool) async {}
    func setDetached(_ detached: Bool) async {}

    func perform(_ command: DelegatedCommand) async throws {
        received.withLock { $0.append(command) }
        switch command.kind {
        case .buffer:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let pass = stall.withLock { state -> Bool in
                    guard state.on else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if pass { continuation.resume() }
            }
            await gate.pass()
            try Task.checkCancellation()
            let span = prepareTimes.withLock { $0.isEmpty ? Duration.zero : $0.removeFirst() }
            if span > .zero { await clock.advance(by: span) }
        case .play(_, _, let at):
            if startedAt.last == at { return }
            guard start(at: at) else { throw CoordinationError.missedStartInstant }
        case .pause:
            break
        }
    }

    func prepare(_ command: DelegatedCommand,
                 whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws {
        try await perform(command)
        whenReady(hasPreparedStart ? FakePreparedStart(target: self) : nil)
        readyCount.withLock { $0 += 1 }
    }

    /// Starts for `at` unless that instant has passed.
    fileprivate func start(at: ClockTime) -> Bool {
        guard time.time <= at else { return false }
        starts.withLock { $0.append(at) }
        return true
    }
}

final class FakePreparedStart: PreparedStart {
    let target: FakeTarget
    init(target: FakeTarget) { self.target = target }
    func start(at clockTime: ClockTime) -> Bool { target.start(at: clockTime) }
}

/// Waits (yielding, for at most 5 s of real time) until `condition` holds; fails the test if it never does.
func until(_ what: String, file: StaticString = #filePath, line: UInt = #line,
           _ condition: () async -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline {
        if await condition() { return }
        await Task.yield()
    }
    XCTFail("never happened: \(what)", file: file, line: line)
}

/// Collects a coordinator's events.
final class EventCollector: Sendable {
    private let events = Mutex<[CoordinatorEvent]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)
    init(_ coordinator: PlaybackCoordinator) async {
        let stream = await coordinator.events()
        let reader = Task { [weak self] in for await e in stream { self?.events.withLock { $0.append(e) } } }
        task.withLock { $0 = reader }
    }
    deinit { task.withLock { $0?.cancel() } }
    var all: [CoordinatorEvent] { events.withLock { $0 } }
    /// Everything but the participant lists.
    var transport: [CoordinatorEvent] {
        all.filter { if case .participantsChanged = $0 { false } else { true } }
    }
}
