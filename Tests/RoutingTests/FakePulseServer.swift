import Foundation
@testable import Routing

/// A PulseAudio server in memory for the arbiter's pure tests: sinks, streams, modules and events behave like the
/// real daemon's (a move or mute reports the stream changed; unloading a sink moves its streams to the default
/// sink; a lost connection fails every later request). It records every request and, after each change, the most
/// tagged streams ever seen on a sink marked non-mixable, so a test can prove the route never carried two.
///
/// `@unchecked Sendable`: all mutable state is `current` and `hook`, touched only under `lock` (requests come from
/// the arbiter's actor, changes from the test).
final class FakePulseServer: PulseAudioServer, @unchecked Sendable {
    enum Call: Equatable {
        case serverInfo, listSinks, listSinkInputs
        case move(UInt32, String)
        case mute(UInt32, Bool)
        case load(String)
        case unload(UInt32)
    }

    fileprivate struct State {
        var sinks: [PulseSink] = []
        var inputs: [PulseSinkInput] = []
        var defaultSink = ""
        var nonMixable: Set<String> = []
        var modules: [UInt32: UInt32] = [:]     // module → sink index
        var nextIndex: UInt32 = 100
        var connected = true
        var calls: [Call] = []
        var failures: [(matches: (Call) -> Bool, error: PulseAudioError, times: Int)] = []
        var mostOnNonMixable = 0
        /// Events the request being answered caused (published after the state is released).
        var pending: [PulseEvent] = []
        var subscribers: [AsyncStream<PulseEvent>.Continuation] = []
    }
    private let lock = NSLock()
    private var current = State()
    /// Runs before each request is answered (a test may change the server there, or take its time).
    private var hook: (@Sendable (Call) async -> Void)?

    /// Runs `body` on the state under the lock.
    private func state<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&current)
    }

    /// A server with a default sink named `defaultSink`.
    init(defaultSink: String = "default_sink") {
        _ = addSink(defaultSink)
        state { $0.defaultSink = defaultSink }
    }

    // MARK: What the test does

    @discardableResult
    func addSink(_ name: String, nonMixable: Bool = false) -> UInt32 {
        change { s in
            let index = s.next()
            s.sinks.append(PulseSink(index: index, name: name, description: name,
                                     properties: nonMixable ? [AudioRoute.nonMixableProperty: "1"] : [:]))
            if nonMixable { s.nonMixable.insert(name) }
            return (index, [.sinkAdded(index)])
        }
    }

    /// A view's pulsesink opens its stream on `sink` (as the player does once its pipeline runs).
    @discardableResult
    func addStream(view: Int, instance: String, on sink: String, muted: Bool = false) -> UInt32 {
        change { s in
            let index = s.next()
            let sinkIndex = s.sinks.first { $0.name == sink }!.index
            s.inputs.append(PulseSinkInput(index: index, name: "view \(view)", sink: sinkIndex, properties: [
                RoutingArbiter.instanceProperty: instance, RoutingArbiter.viewProperty: "\(view)"], muted: muted))
            return (index, [.sinkInputAdded(index)])
        }
    }

    func removeStream(_ index: UInt32) {
        change { s in
            s.inputs.removeAll { $0.index == index }
            return ((), [.sinkInputRemoved(index)])
        }
    }

    /// The sink goes away (its module unloaded); its streams move to the default sink, as the daemon does.
    func removeSink(_ name: String) {
        change { s in s.remove(sink: name) }
    }

    /// The daemon stops: subscribers hear `.disconnected`, every later request fails.
    func disconnect() {
        let subscribers = state { s in s.connected = false; return s.subscribers }
        for c in subscribers { c.yield(.disconnected); c.finish() }
    }

    /// The next `times` requests matching `call` fail with `error`.
    func fail(_ matches: @escaping (Call) -> Bool, with error: PulseAudioError, times: Int = 1) {
        state { $0.failures.append((matches, error, times)) }
    }

    func clearFailures() { state { $0.failures = [] } }

    func onCall(_ hook: (@Sendable (Call) async -> Void)?) {
        lock.lock()
        defer { lock.unlock() }
        self.hook = hook
    }

    var calls: [Call] { state { $0.calls } }
    var mostOnNonMixable: Int { state { $0.mostOnNonMixable } }
    var sinkNames: [String] { state { $0.sinks.map(\.name) } }

    /// Views of `instance` whose streams play on `sink`.
    func views(on sink: String, instance: String) -> [Int] {
        state { s in
            guard let index = s.sinks.first(where: { $0.name == sink })?.index else { return [] }
            return s.inputs.filter { $0.sink == index && $0.properties[RoutingArbiter.instanceProperty] == instance }
                .compactMap { $0.properties[RoutingArbiter.viewProperty].flatMap { Int($0) } }.sorted()
        }
    }

    func isMuted(view: Int) -> Bool? {
        state { s in s.inputs.first { $0.properties[RoutingArbiter.viewProperty] == "\(view)" }?.muted }
    }

    // MARK: PulseAudioServer

    func serverDefaultSinkName() async throws(PulseAudioError) -> String {
        try await answer(.serverInfo) { s throws(PulseAudioError) in s.defaultSink }
    }

    func sinks() async throws(PulseAudioError) -> [PulseSink] {
        try await answer(.listSinks) { s throws(PulseAudioError) in s.sinks }
    }

    func sinkInputs() async throws(PulseAudioError) -> [PulseSinkInput] {
        try await answer(.listSinkInputs) { s throws(PulseAudioError) in s.inputs }
    }

    func move(sinkInput: UInt32, toSink sink: String) async throws(PulseAudioError) {
        let call = Call.move(sinkInput, sink)
        try await answer(call) { s throws(PulseAudioError) in
            guard let i = s.inputs.firstIndex(where: { $0.index == sinkInput }),
                  let target = s.sinks.first(where: { $0.name == sink }) else {
                throw .failed(.move(sinkInput: sinkInput, sink: sink), .noSuchEntity)
            }
            s.inputs[i].sink = target.index
            s.pending.append(.sinkInputChanged(sinkInput))
        }
    }

    func setMute(sinkInput: UInt32, _ muted: Bool) async throws(PulseAudioError) {
        try await answer(.mute(sinkInput, muted)) { s throws(PulseAudioError) in
            guard let i = s.inputs.firstIndex(where: { $0.index == sinkInput }) else {
                throw .failed(.mute(sinkInput: sinkInput, muted: muted), .noSuchEntity)
            }
            s.inputs[i].muted = muted
            s.pending.append(.sinkInputChanged(sinkInput))
        }
    }

    func loadModule(_ name: String, arguments: String) async throws(PulseAudioError) -> UInt32 {
        try await answer(.load(name)) { s throws(PulseAudioError) in
            let sinkName = arguments.split(separator: " ").first { $0.hasPrefix("sink_name=") }
                .map { String($0.dropFirst("sink_name=".count)) } ?? "null"
            let module = s.next(), index = s.next()
            s.sinks.append(PulseSink(index: index, name: sinkName, description: sinkName, ownerModule: module))
            s.modules[module] = index
            s.pending.append(.sinkAdded(index))
            return module
        }
    }

    func unloadModule(_ index: UInt32) async throws(PulseAudioError) {
        try await answer(.unload(index)) { s throws(PulseAudioError) in
            guard let sink = s.modules.removeValue(forKey: index),
                  let name = s.sinks.first(where: { $0.index == sink })?.name else {
                throw .failed(.unloadModule(index), .noSuchEntity)
            }
            s.pending.append(contentsOf: s.remove(sink: name).1)
        }
    }

    func events() -> AsyncStream<PulseEvent> {
        let (stream, continuation) = AsyncStream<PulseEvent>.makeStream(bufferingPolicy: .unbounded)
        state { $0.subscribers.append(continuation) }
        return stream
    }

    // MARK: Internals

    /// Records the call, runs the hook, then answers from the state (or fails as injected / disconnected) and
    /// publishes the events the change caused.
    private func answer<T>(_ call: Call, _ body: (inout State) throws(PulseAudioError) -> T) async throws(PulseAudioError) -> T {
        state { $0.calls.append(call) }
        if let hook = lock.withLock({ self.hook }) { await hook(call) }
        let outcome: Result<(T, [PulseEvent], [AsyncStream<PulseEvent>.Continuation]), PulseAudioError> = state { s in
            guard s.connected else { return .failure(.disconnected) }
            if let i = s.failures.firstIndex(where: { $0.matches(call) }) {
                s.failures[i].times -= 1
                let error = s.failures[i].error
                if s.failures[i].times <= 0 { s.failures.remove(at: i) }
                return .failure(error)
            }
            do throws(PulseAudioError) {
                s.pending = []
                let value = try body(&s)
                s.observe()
                return .success((value, s.pending, s.subscribers))
            } catch { return .failure(error) }
        }
        let (value, events, subscribers) = try outcome.get()
        for event in events { for c in subscribers { c.yield(event) } }
        return value
    }

    private func change<T>(_ body: (inout State) -> (T, [PulseEvent])) -> T {
        let (value, events, subscribers) = state { s in
            let (value, events) = body(&s)
            s.observe()
            return (value, events, s.subscribers)
        }
        for event in events { for c in subscribers { c.yield(event) } }
        return value
    }
}

private extension FakePulseServer.State {
    mutating func next() -> UInt32 { defer { nextIndex += 1 }; return nextIndex }

    mutating func remove(sink name: String) -> ((), [PulseEvent]) {
        guard let index = sinks.first(where: { $0.name == name })?.index,
              let fallback = sinks.first(where: { $0.name == defaultSink && $0.name != name })?.index else { return ((), []) }
        sinks.removeAll { $0.index == index }
        var events: [PulseEvent] = []
        for i in inputs.indices where inputs[i].sink == index {
            inputs[i].sink = fallback
            events.append(.sinkInputChanged(inputs[i].index))
        }
        return ((), events + [.sinkRemoved(index)])
    }

    /// Counts tagged streams on every non-mixable sink after a change.
    mutating func observe() {
        for sink in sinks where nonMixable.contains(sink.name) {
            let count = inputs.filter { $0.sink == sink.index && $0.properties[RoutingArbiter.instanceProperty] != nil }.count
            mostOnNonMixable = max(mostOnNonMixable, count)
        }
    }
}
