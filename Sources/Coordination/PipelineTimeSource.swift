import GStreamer

/// Reads the time of the clock every pipeline of a group runs on (start instants and group anchors are on it).
/// In production it is that GStreamer clock itself (the system clock in process; a net client clock for a network
/// medium); tests of the medium give it a time they advance by hand, together with the medium's `Clock`.
public protocol PipelineTimeSource: Sendable {
    /// Now, on the pipelines' clock.
    var time: ClockTime { get }
}

extension Clock: PipelineTimeSource {}
