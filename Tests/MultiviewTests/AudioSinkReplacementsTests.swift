import GStreamer
import XCTest
@testable import Multiview

/// The audio output supervisor's bookkeeping without a pipeline or a daemon (`AudioSinkReplacements`): which sink
/// replacement owns the pipeline, what a run of them restores, whether a refused state change is a lost stream's.
final class AudioSinkReplacementsTests: XCTestCase {
    func testAReplacementAloneOwnsThePipelineAndItsEndCounts() {
        var r = AudioSinkReplacements()
        let job = r.begin(position: .seconds(8), resume: true)
        XCTAssertTrue(r.owns(job))
        XCTAssertEqual(job.position, .seconds(8))
        XCTAssertTrue(job.resume)
        XCTAssertTrue(r.end(job), "the only replacement's outcome is the view's")
        XCTAssertNil(r.current)
    }

    /// The soak's fault: the stream brought back fails at once; the loss's replacement supersedes the one in flight,
    /// whose end (cancelled, or refused) then says nothing about the view.
    func testASupersededReplacementsEndIsNotTheViews() {
        var r = AudioSinkReplacements()
        let back = r.begin(position: .seconds(10), resume: true)
        let loss = r.begin(position: .zero, resume: false)
        XCTAssertFalse(r.owns(back))
        XCTAssertTrue(r.owns(loss))
        XCTAssertFalse(r.end(back), "a superseded replacement's failure must not fail the view")
        XCTAssertTrue(r.owns(loss), "the superseded one's end must not end the newer one")
        XCTAssertTrue(r.end(loss))
    }

    /// The newer replacement starts from where the view was when the run began, not from the half-built pipeline
    /// (its position reset by a flush, its target PAUSED).
    func testARunOfReplacementsKeepsTheFirstPositionAndIntent() {
        var r = AudioSinkReplacements()
        let first = r.begin(position: .seconds(12.5), resume: true)
        let second = r.begin(position: .zero, resume: false)
        let third = r.begin(position: .seconds(1), resume: false)
        XCTAssertEqual([first.position, second.position, third.position], [.seconds(12.5), .seconds(12.5), .seconds(12.5)])
        XCTAssertEqual([first.resume, second.resume, third.resume], [true, true, true])
        XCTAssertTrue(r.end(third))
        // A new run, once the last one ended, takes the view as it is then.
        let later = r.begin(position: .seconds(20), resume: false)
        XCTAssertEqual(later.position, .seconds(20))
        XCTAssertFalse(later.resume)
    }

    /// A paused view whose stream was lost is played by the user while its replacement runs: the replacement ends
    /// playing (it left the view PAUSED: PausedViewServerLossTests, 1 run of the session 14 repeat), and a run
    /// of replacements carries the user's latest wish on.
    func testTheUsersPlayOrPauseDuringAReplacementIsHowItEnds() {
        var r = AudioSinkReplacements()
        XCTAssertFalse(r.resumes(orElse: false), "none in flight: the fallback")
        _ = r.begin(position: .seconds(3), resume: false)
        r.userWants(playing: true)
        XCTAssertTrue(r.resumes(orElse: false))
        let next = r.begin(position: .seconds(5), resume: false)
        XCTAssertTrue(next.resume, "the next replacement of the run keeps the user's wish")
        r.userWants(playing: false)
        XCTAssertFalse(r.resumes(orElse: true))
        _ = r.end(next)
        r.userWants(playing: true)
        XCTAssertTrue(r.resumes(orElse: false) == false, "no replacement in flight: nothing to change")
    }

    func testARefusalIsTheLostStreamsWhileTheDeadSinkIsInThePipelineOrWhenALossFollows() {
        var r = AudioSinkReplacements()
        let before = r.losses
        XCTAssertFalse(r.explainsRefusal(since: before), "no loss: a refusal is the view's failure")
        r.noteLoss()
        XCTAssertTrue(r.explainsRefusal(since: before), "a loss noted after the refusal explains it")
        let afterLoss = r.losses
        XCTAssertTrue(r.explainsRefusal(since: afterLoss), "the dead sink is still in the pipeline")
        r.sinkReplaced()
        XCTAssertFalse(r.explainsRefusal(since: afterLoss), "the dead sink is gone: a later refusal is the view's")
        XCTAssertTrue(r.explainsRefusal(since: before))
    }

    private func error(from factory: String, name: String) -> BusMessage.ErrorInfo {
        BusMessage.ErrorInfo(domain: "gst-core-error-quark", code: 4, message: "Internal GStreamer error: pad problem.",
                             debug: "Failed to configure the audio sink.",
                             source: .init(name: name, path: "/GstPlayBin3:playbin/\(name)", isPipeline: false, factory: factory))
    }

    /// A pulsesink's error is the stream's loss; playsink's failure to configure a new audio sink is not (the
    /// pipeline rebuilt after it aborted in playbin3: the view fails instead, and the return probe avoids it).
    func testOnlyAPulsesinksErrorIsTheStreamsLoss() {
        XCTAssertTrue(AudioSinkReplacements.isStreamLoss(error(from: "pulsesink", name: "pulse")))
        XCTAssertFalse(AudioSinkReplacements.isStreamLoss(error(from: "playsink", name: "playsink")))
        XCTAssertFalse(AudioSinkReplacements.isStreamLoss(error(from: "qtdemux", name: "qtdemux0")),
                       "a demuxer's error is the view's, whatever the audio output does")
    }
}
