import Foundation
import GStreamer
import Synchronization
import XCTest

/// The package root: this file is Tests/GStreamerTests/Support.swift.
let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A bundled media file (Media/…).
func mediaURL(_ file: String) -> URL { repositoryRoot.appendingPathComponent("Media").appendingPathComponent(file) }

/// How long any single wait may take before the test fails (every test stays well under 5 s).
let defaultTimeout: TimeInterval = 4

/// A value updated from arbitrary threads (streaming threads, bus sync handler, tasks) that tests can wait on
/// without sleeping: `expectation(when:)` is fulfilled by the update that first makes the predicate true.
final class Observed<Value: Sendable>: Sendable {
    private struct Waiter: @unchecked Sendable {
        // @unchecked: XCTestExpectation is thread-safe (fulfill may be called from any thread).
        let predicate: @Sendable (Value) -> Bool
        let expectation: XCTestExpectation
    }
    private struct State {
        var value: Value
        var waiters: [Waiter]
    }
    private let state: Mutex<State>

    init(_ initial: Value) { state = Mutex(State(value: initial, waiters: [])) }

    var value: Value { state.withLock { $0.value } }

    func update(_ body: (inout Value) -> Void) {
        let fired: [Waiter] = state.withLock { state in
            body(&state.value)
            let value = state.value
            let ready = state.waiters.filter { $0.predicate(value) }
            state.waiters.removeAll { waiter in ready.contains { $0.expectation === waiter.expectation } }
            return ready
        }
        for waiter in fired { waiter.expectation.fulfill() }
    }

    /// An expectation fulfilled as soon as `predicate(value)` holds (at once if it already does).
    func expectation(_ description: String, when predicate: @escaping @Sendable (Value) -> Bool) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: description)
        let alreadyTrue: Bool = state.withLock { state in
            if predicate(state.value) { return true }
            state.waiters.append(Waiter(predicate: predicate, expectation: expectation))
            return false
        }
        if alreadyTrue { expectation.fulfill() }
        return expectation
    }
}

/// Consumes a bus message stream on its own task and records every message in order.
final class BusRecorder: Sendable {
    let messages = Observed<[BusMessage]>([])
    /// True once the stream has finished (the `Bus` wrapper was released).
    let finished = Observed(false)

    init(_ stream: AsyncStream<BusMessage>) {
        Task { [messages, finished] in
            for await message in stream { messages.update { $0.append(message) } }
            finished.update { $0 = true }
        }
    }

    /// Fulfilled when some recorded message satisfies `predicate`.
    func expectation(_ description: String, where predicate: @escaping @Sendable (BusMessage) -> Bool)
        -> XCTestExpectation {
        messages.expectation(description) { $0.contains(where: predicate) }
    }

    func first(where predicate: (BusMessage) -> Bool) -> BusMessage? { messages.value.first(where: predicate) }
}

/// A pipeline-level event, for order assertions.
enum PipelineEvent: Equatable, CustomStringConvertible {
    case state(ElementState, ElementState)
    case asyncDone
    case eos

    var description: String {
        switch self {
        case .state(let a, let b): return "\(a)→\(b)"
        case .asyncDone: return "async-done"
        case .eos: return "eos"
        }
    }
}

extension BusMessage {
    var isEOS: Bool { if case .eos = self { return true } else { return false } }
    var isError: Bool { if case .error = self { return true } else { return false } }
    var isAsyncDone: Bool { if case .asyncDone = self { return true } else { return false } }

    var errorInfo: ErrorInfo? { if case .error(let info) = self { return info } else { return nil } }

    /// The pipeline's own state changes, async-done and EOS (children's messages are ignored).
    var pipelineEvent: PipelineEvent? {
        guard source.isPipeline else { return nil }
        switch self {
        case .stateChanged(_, let old, let new, _): return .state(old, new)
        case .asyncDone: return .asyncDone
        case .eos: return .eos
        default: return nil
        }
    }

    /// True for the pipeline's own state change to `state`.
    func isPipelineState(_ state: ElementState) -> Bool {
        if case .stateChanged(let source, _, let new, _) = self, source.isPipeline, new == state { return true }
        return false
    }
}

/// A Sendable holder for a weak reference to a Swift object (to prove closures are released).
final class Sentinel: Sendable {}

struct WeakBox<T: AnyObject>: @unchecked Sendable {
    weak var object: T?
}

/// `buffers` × 10 ms of a 48 kHz test tone into a pulsesink named "sink" that does not provide the clock, on the
/// system clock (as in a coordinated view, whose sink follows a foreign clock). Needs a PulseAudio server to play.
func toneIntoPulseSink(buffers: Int) throws -> (pipeline: Pipeline, sink: Element) {
    let pipeline = try Pipeline.parseLaunch("""
        audiotestsrc num-buffers=\(buffers) samplesperbuffer=480 ! audio/x-raw,rate=48000,channels=1 \
        ! pulsesink name=sink provide-clock=false
        """)
    pipeline.useClock(.systemClock())
    guard let sink = pipeline.child(named: "sink") else { throw GStreamerError.missingElement(factory: "pulsesink") }
    return (pipeline, sink)
}
