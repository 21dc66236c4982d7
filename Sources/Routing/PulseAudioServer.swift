/// What the routing arbiter needs from a PulseAudio server: `PulseAudioClient` over libpulse in production, a fake
/// server in the arbiter's pure tests. Every call is a round trip that suspends (never blocks) the caller.
public protocol PulseAudioServer: AnyObject, Sendable {
    /// The name of the server's default sink.
    func serverDefaultSinkName() async throws(PulseAudioError) -> String
    func sinks() async throws(PulseAudioError) -> [PulseSink]
    /// Every playback stream on the server (the arbiter keeps the ones tagged with its instance).
    func sinkInputs() async throws(PulseAudioError) -> [PulseSinkInput]
    /// Moves a stream to another sink (the server rewinds, so the move is heard at once).
    func move(sinkInput: UInt32, toSink sink: String) async throws(PulseAudioError)
    func setMute(sinkInput: UInt32, _ muted: Bool) async throws(PulseAudioError)
    /// Loads a module (the arbiter loads `module-null-sink` for its parking sink) and returns its index.
    func loadModule(_ name: String, arguments: String) async throws(PulseAudioError) -> UInt32
    func unloadModule(_ index: UInt32) async throws(PulseAudioError)
    /// Sink and sink-input additions, removals and changes, server changes, and loss of the connection.
    func events() -> AsyncStream<PulseEvent>
}

/// Makes a connection to the server (the arbiter connects in `start` and again after the server went away).
public typealias PulseAudioConnector = @Sendable () async throws(PulseAudioError) -> any PulseAudioServer
