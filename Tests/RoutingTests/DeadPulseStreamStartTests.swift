import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest

/// A pulsesink that follows the system clock (as in a coordinated view), paused, its PulseAudio daemon killed
/// (SIGKILL), then played again: GStreamer 1.22 deadlocked here, for good and for the whole process. audiobasesink
/// starts such a sink holding the sink's object lock; the sink's clock reading and its uncork find the stream dead
/// and post an error with PulseAudio's mainloop lock held, and the error's message takes the object lock again.
/// With `AudioClockGuard` armed before the play (as the player does), the dead stream is found on the arming
/// thread, and the start neither reads nor uncorks it. Real pipeline, the test's own daemon.
///
/// On dbe0625 (guard without the lost state) the play below never returned. A deadlocked sink keeps the
/// process's PulseAudio mainloop lock, so later PulseAudio tests of the same process would block too: the state
/// changes run on a thread of their own, and the failure says so.
final class DeadPulseStreamStartTests: XCTestCase {
    func testPlayingAClockFollowingSinkWhoseDaemonDiedReturnsAndTheSinkStops() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let daemon = try PrivatePulseDaemon()
        try await daemon.start()
        defer { daemon.stop() }
        let pipeline = try Pipeline.parseLaunch("""
            audiotestsrc samplesperbuffer=480 ! audio/x-raw,rate=48000,channels=1 \
            ! pulsesink name=sink provide-clock=false server=\(daemon.server)
            """)
        pipeline.useClock(.systemClock())
        guard let sink = pipeline.child(named: "sink") else { return XCTFail("no pulsesink") }
        let guardian = try sink.guardAudioClock()
        try sink.setCustomAudioSlaving { _ in 0 }
        let bus = pipeline.bus()   // kept: its sync handler is what tells the guard about the sink's errors
        let errors = Shared<[String]>([])
        let reader = Task {
            for await message in bus.messages() { if case .error(let info) = message { errors.withLock { $0.append(info.message) } } }
        }
        defer { reader.cancel() }

        // Play until the stream runs, then pause.
        guardian.arm()
        try pipeline.setState(.playing)
        let ran = await eventually(timeout: .seconds(10)) { (pipeline.queryPosition()?.seconds ?? 0) >= 0.5 }
        XCTAssertTrue(ran, "the tone did not play (errors: \(errors.withLock { $0 }))")
        try pipeline.setState(.paused)
        // A flushing seek, as every coordinated seek: the sink's next buffer then starts the stream afresh.
        try pipeline.seek(flags: [.flush, .accurate], position: .zero)
        let prerolled = await eventually(timeout: .seconds(10)) { pipeline.currentState == .paused }
        XCTAssertTrue(prerolled, "the sink did not preroll after the seek")
        XCTAssertTrue(errors.withLock { $0.isEmpty }, "errors before the kill: \(errors.withLock { $0 })")

        daemon.stop()   // SIGKILL
        // The fault's schedule: libpulse's own thread sees the closed socket and marks the stream dead.
        try await Task.sleep(for: .milliseconds(300))

        // Armed as before every start; then PLAYING and back to NULL, on a thread of their own with a deadline.
        guardian.arm()
        let done = Shared(false)
        let thread = Thread {
            _ = try? pipeline.setState(.playing)
            Thread.sleep(forTimeInterval: 0.5)   // past the start: audiobasesink reads the clock and starts then
            _ = try? pipeline.setState(.null)
            done.withLock { $0 = true }
        }
        thread.start()
        let finished = await eventually(timeout: .seconds(10)) { done.withLock { $0 } }
        XCTAssertTrue(finished, "playing the paused sink after its daemon died never returned (deadlocked in pulsesink; "
                      + "later PulseAudio tests of this process may block too); errors: \(errors.withLock { $0 })")
        XCTAssertTrue(guardian.isLost, "the guard did not learn that its stream died")
        let posted = await eventually(timeout: .seconds(5)) { !errors.withLock { $0.isEmpty } }
        XCTAssertTrue(posted, "the dead stream's error never reached the bus")
    }
}

/// A value shared between the test and the threads it starts. Owner: the `Mutex`.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}
