/// An audio route: one PulseAudio sink, mixable (any number of streams) or non-mixable (exactly one stream).
public struct AudioRoute: Sendable, Equatable, CustomStringConvertible {
    public enum Mixing: String, Sendable, Equatable {
        case mixable
        case nonMixable = "non-mixable"
    }

    /// Why a route is non-mixable (shown by `multiview routes`).
    public enum NonMixableReason: String, Sendable, Equatable {
        /// `--non-mixable SINK` on the command line.
        case markedByUser = "marked with --non-mixable"
        /// The sink carries `multiview.non-mixable=1` (e.g. `module-null-sink sink_properties=multiview.non-mixable=1`).
        case sinkProperty = "sink property multiview.non-mixable=1"
        /// An AirPlay speaker (module-raop-sink): it plays one stream.
        case airPlay = "AirPlay (RAOP) sink"
    }

    public var sinkName: String
    /// The sink's own description (`device.description`).
    public var sinkDescription: String
    public var sinkIndex: UInt32
    public var mixing: Mixing
    public var nonMixableReason: NonMixableReason?
    public var isDefault: Bool

    public var isNonMixable: Bool { mixing == .nonMixable }

    /// The sink property that marks a sink non-mixable.
    public static let nonMixableProperty = "multiview.non-mixable"

    /// The route model of one sink: `markedNonMixable` are the sink names given with `--non-mixable`.
    public init(sink: PulseSink, defaultSinkName: String, markedNonMixable: Set<String> = []) {
        sinkName = sink.name
        sinkDescription = sink.description
        sinkIndex = sink.index
        isDefault = sink.name == defaultSinkName
        if markedNonMixable.contains(sink.name) {
            nonMixableReason = .markedByUser
        } else if let flag = sink.properties[AudioRoute.nonMixableProperty], ["1", "true", "yes"].contains(flag.lowercased()) {
            nonMixableReason = .sinkProperty
        } else if AudioRoute.isAirPlay(sink) {
            nonMixableReason = .airPlay
        } else {
            nonMixableReason = nil
        }
        mixing = nonMixableReason == nil ? .mixable : .nonMixable
    }

    /// module-raop-sink's sinks: its driver file, or its `raop.*` properties.
    static func isAirPlay(_ sink: PulseSink) -> Bool {
        sink.driver.contains("raop") || sink.properties.keys.contains { $0.hasPrefix("raop.") }
    }

    /// "living-room (Living room)  non-mixable: marked with --non-mixable  [default]"
    public var description: String {
        var line = sinkName
        if !sinkDescription.isEmpty && sinkDescription != sinkName { line += " (\(sinkDescription))" }
        line += "  \(mixing.rawValue)"
        if let nonMixableReason { line += ": \(nonMixableReason.rawValue)" }
        if isDefault { line += "  [default]" }
        return line
    }
}

/// All audio routes of a server, the default one first.
public enum AudioRoutes {
    public static func list(client: any PulseAudioServer, markedNonMixable: Set<String> = []) async throws(PulseAudioError)
        -> [AudioRoute] {
        let defaultSink = try await client.serverDefaultSinkName()
        return try await client.sinks()
            .map { AudioRoute(sink: $0, defaultSinkName: defaultSink, markedNonMixable: markedNonMixable) }
            .sorted { ($0.isDefault ? 0 : 1, $0.sinkIndex) < ($1.isDefault ? 0 : 1, $1.sinkIndex) }
    }
}
