import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import TestSupport
import XCTest

/// Custom suspensions (scrubbing, "what happened?", interstitials), the reasons others wait for,
/// `otherParticipants` and `playImmediately(atRate:)`.
final class SuspensionTests: XCTestCase {
    private let frame = 1.0 / 30

    /// Every view plays again (waiting for nothing) and the listed views (all when nil) render from `clockNs` on.
    private func assertResumed(_ set: CoordinatedViews, since clockNs: UInt64, views: Set<Int>? = nil,
                               file: StaticString = #filePath, line: UInt = #line) async {
        let playing = await eventually { await set.allPlaying() }
        check(playing, "\(await set.statuses())", file: file, line: line)
        let rendering = await set.waitRendering(since: clockNs, views: views)
        XCTAssertTrue(rendering, "not rendering since \(clockNs)", file: file, line: line)
    }

    /// Just after the first frame `view` rendered on the group's item since `clockNs`: where a view that rejoined
    /// by catching up is compared from. Its first frame is shown from the instant the group reaches the media time
    /// it prepared at, the clipped start of a frame the others began showing at its own time, up to a frame
    /// earlier: the same picture at every instant, but not a skew sample. (A fixed 100 ms after `end` stood for
    /// this and let that frame in whenever rejoining took longer.)
    private func rejoined(_ set: CoordinatedViews, view: Int, since clockNs: UInt64,
                          file: StaticString = #filePath, line: UInt = #line) throws -> UInt64 {
        try XCTUnwrap(set.firstFrames(since: clockNs)[view], "view \(view) rendered nothing on the group's item",
                      file: file, line: line).renderClockNs + 1
    }

    /// The first `count` angles as a coordinated group, all playing, then `settle` to let them run.
    private func playingGroup(of count: Int, settle: Duration = .zero,
                              file: StaticString = #filePath, line: UInt = #line) async throws -> CoordinatedViews {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(count)))
        try await set.playAll(file: file, line: line)
        if settle > .zero { try await Task.sleep(for: settle) }
        return set
    }

    func testASuspendedViewSeeksAloneIgnoresGroupCommandsAndRejoinsTheGroupOnEnd() async throws {
        let set = try await playingGroup(of: 3, settle: .seconds(1))
        let scrubber = set.views[2]
        let scrubberEvents = await scrubber.coordinator.eventLog(clock: set.clock)
        var othersLogs: [EventLog<PlayerEvent>] = []
        for p in set.players.prefix(2) { othersLogs.append(await p.eventLog(clock: set.clock)) }
        let suspendedNs = set.nowNs

        // Its frames are its own while it is suspended, the group's again from its rejoining seek on.
        set.recorder.setItem("scrub", view: 3)
        let suspension = await scrubber.coordinator.beginSuspension(for: .userIsChangingCurrentTime)
        let reasons = await scrubber.coordinator.suspensionReasons
        XCTAssertEqual(reasons, [.userIsChangingCurrentTime])
        let began = await eventually(timeout: .seconds(2)) { scrubberEvents.values.contains(.suspensionBegan(.userIsChangingCurrentTime)) }
        XCTAssertTrue(began, "\(scrubberEvents.values)")

        // Its own seek is not intercepted (the interceptor says "do it yourself"), and moves only this view.
        let groupBefore = try unwrap(await set.medium.groupState(for: "event"))
        let intercepted = try await scrubber.intercept(.seek(.seconds(9)), player: scrubber.player)
        XCTAssertFalse(intercepted, "a suspended view's seek went to the group")
        let scrubTarget = ClockTime.seconds(9)
        try await scrubber.player.seek(to: scrubTarget)
        let seekDone = set.clock.time
        try await Task.sleep(for: .milliseconds(500))
        let scrubbedAt = try unwrap(await scrubber.player.position)
        let sinceSeek = set.clock.time.seconds - seekDone.seconds
        let groupAfter = try unwrap(await set.medium.groupState(for: "event"))
        XCTAssertEqual(groupAfter, groupBefore, "the suspended view's seek changed the group state")
        let groupNow = try unwrap(await set.groupTime())
        let positions = await set.settledPositions()
        assertPositions(Array(positions.prefix(2)), near: groupNow, "the others after the local seek")
        XCTAssertEqual(scrubbedAt.seconds, scrubTarget.seconds + sinceSeek, accuracy: 0.15,
                       "the suspended view's local seek to \(scrubTarget) shows \(scrubbedAt) \(sinceSeek) s later")

        // The group pauses and plays again; the suspended view is not touched.
        let commandsBefore = await scrubber.coordinator.commandLog.count
        try await set.players[0].pause()
        let pausedOthers = await eventually { await set.allPaused([0, 1]) }
        check(pausedOthers, "\(await set.statuses())")
        let scrubberStatus = await scrubber.player.currentStatus
        XCTAssertEqual(scrubberStatus.state, .playing, "the suspended view followed the group's pause")
        try await set.players[1].play()
        let playingOthers = await eventually { await set.allPlaying([0, 1]) }
        XCTAssertTrue(playingOthers)
        let commandsAfter = await scrubber.coordinator.commandLog.count
        XCTAssertEqual(commandsAfter, commandsBefore, "group commands reached the suspended view")
        // Still suspended: nothing aligned it (its time is its own).
        let apart = await set.settledPositions()
        XCTAssertGreaterThan(abs(try XCTUnwrap(apart[2]).seconds - XCTUnwrap(apart[0]).seconds), 1,
                             "the suspended view was moved to the group's time: \(apart)")

        // end(): back at the group's time and rate, aligned, without disturbing the others.
        let endNs = set.nowNs
        set.recorder.setItem("event", view: 3, fromNextSegment: true)
        try await suspension.end()
        await assertResumed(set, since: endNs, views: [3])
        let ended = await eventually(timeout: .seconds(2)) { scrubberEvents.values.contains(.suspensionEnded(.userIsChangingCurrentTime)) }
        XCTAssertTrue(ended)
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after end()")
        let scrubberRate = await scrubber.player.rate
        XCTAssertEqual(scrubberRate, 1)
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: try rejoined(set, view: 3, since: endNs), minFrames: 25, "after end()")
        // The only pause the others saw is the group's own pause (one PAUSED stretch each).
        for (i, log) in othersLogs.enumerated() {
            let statuses = log.statuses(since: endNs)
            XCTAssertFalse(statuses.contains { $0.state != .playing }, "view index \(i) after end(): \(statuses)")
        }
        _ = suspendedNs
        await set.tearDown()
    }

    func testEndProposingNewTimeMovesTheWholeGroup() async throws {
        let set = try await playingGroup(of: 3, settle: .milliseconds(600))
        let scrubber = set.views[0]
        var events: [EventLog<CoordinatorEvent>] = []
        for v in set.views { events.append(await v.coordinator.eventLog(clock: set.clock)) }

        // Scrubbing: only this view shows the frames while dragging.
        let suspension = await scrubber.coordinator.beginSuspension(for: .userIsChangingCurrentTime)
        for t in [4.0, 8.0, 12.0] {
            try await scrubber.player.seek(to: .seconds(t))
            let others = await set.settledPositions()
            XCTAssertLessThan(try XCTUnwrap(others[1]).seconds, 4, "the others followed the scrub: \(others)")
        }
        // Release: the new time is shared.
        let releaseNs = set.nowNs
        try await suspension.end(proposingNewTime: .seconds(15))
        let group = try unwrap(await set.medium.groupState(for: "event"))
        XCTAssertTrue(group.isPlaying)
        XCTAssertEqual(group.anchorMedia.seconds, 15, accuracy: 0.001)
        await assertResumed(set, since: releaseNs)
        let now = try unwrap(await set.groupTime())
        XCTAssertEqual(now.seconds, 15, accuracy: 0.6)
        assertPositions(await set.settledPositions(), near: now, "after end(proposingNewTime: 15 s)")
        for (i, log) in events.enumerated() {
            let expected = CoordinatorEvent.timeJumped(to: .seconds(15), originator: scrubber.coordinator.id,
                                                       byOtherParticipant: i != 0)
            let told = await eventually(timeout: .seconds(2)) { log.values.contains(expected) }
            XCTAssertTrue(told, "view index \(i) events \(log.values)")
        }
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: releaseNs + 200_000_000, minFrames: 25, "after end(proposingNewTime:)")
        await set.tearDown()
    }

    func testWhatHappenedReplaysAndCatchesUpWithoutDisturbingTheOthers() async throws {
        let set = try await playingGroup(of: 3)
        try await set.players[0].seek(to: .seconds(8))
        let playing = await eventually { await set.allPlaying() }
        XCTAssertTrue(playing)
        try await Task.sleep(for: .milliseconds(500))
        var othersLogs: [EventLog<PlayerEvent>] = []
        for p in set.players.prefix(2) { othersLogs.append(await p.eventLog(clock: set.clock)) }
        let startNs = set.nowNs
        let viewer = set.views[2]

        // "What happened?": suspend, go back 5 s, play at 2× until caught up. The replay's frames are its own, not
        // the group's: recorded apart until its rejoining seek.
        set.recorder.setItem("replay", view: 3)
        let suspension = await viewer.coordinator.beginSuspension(for: .whatHappened)
        let groupAtPress = try unwrap(await set.groupTime())
        let replayFrom = ClockTime.seconds(groupAtPress.seconds - 5)
        try await viewer.player.seekLocally(to: replayFrom)
        let replaying = try unwrap(await viewer.player.position)
        XCTAssertEqual(replaying.seconds, replayFrom.seconds, accuracy: 0.15, "seekLocally(to: \(replayFrom)) shows \(replaying)")
        try await viewer.player.setRateLocally(2)
        let playedAt = set.clock.time
        do {
            try await viewer.player.playLocally(timeout: .seconds(3))
        } catch {
            // Seen: the pipeline does reach PLAYING, but playLocally waits for an ASYNC_DONE that never comes.
            let status = await viewer.player.currentStatus
            XCTFail("playLocally failed: \(error); status now \(status)")
        }
        try await Task.sleep(for: .milliseconds(300))
        let r0 = try unwrap(await viewer.player.position), c0 = set.clock.time
        try await Task.sleep(for: .seconds(1))
        let r1 = try unwrap(await viewer.player.position), c1 = set.clock.time
        let speed = (r1.seconds - r0.seconds) / (c1.seconds - c0.seconds)
        XCTAssertEqual(speed, 2, accuracy: 0.2, "the replay runs at \(speed)× (from \(r0) to \(r1))")
        // It replays from where it went back to: replayFrom + 2 × time played.
        let expected = replayFrom.seconds + 2 * (c1.seconds - playedAt.seconds)
        XCTAssertEqual(r1.seconds, expected, accuracy: 0.2, "the replay is at \(r1), expected \(expected) s")
        let groupThen = try unwrap(await set.groupTime())
        XCTAssertLessThan(r1.seconds, groupThen.seconds, "caught up far too early")
        let caughtUp = await eventually(timeout: .seconds(9)) {
            guard let mine = await viewer.player.position, let group = await set.groupTime() else { return false }
            return mine >= group
        }
        XCTAssertTrue(caughtUp, "never caught up")

        let endNs = set.nowNs
        set.recorder.setItem("event", view: 3, fromNextSegment: true)
        set.recorder.setRateFromNextSegment(view: 3)
        try await suspension.end()
        await assertResumed(set, since: endNs, views: [3])
        let rate = await viewer.player.rate
        XCTAssertEqual(rate, 1, "rejoined at the group's rate")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after catching up")
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: try rejoined(set, view: 3, since: endNs), minFrames: 25, "after what-happened")

        // The others never paused, waited or skipped.
        for (i, log) in othersLogs.enumerated() {
            let statuses = log.statuses(since: startNs)
            XCTAssertFalse(statuses.contains { $0.state != .playing || $0.waitingToPlay != nil }, "view index \(i): \(statuses)")
            let renders = set.frames(since: startNs, views: [i + 1]).sorted { $0.renderClockNs < $1.renderClockNs }
            for (a, b) in zip(renders, renders.dropFirst()) {
                let step = (Double(b.mediaTimeNs) - Double(a.mediaTimeNs)) / 1e9
                XCTAssertTrue(step > 0 && step < 3 * frame, "view \(i + 1) jumped from \(a.mediaTimeNs) to \(b.mediaTimeNs)")
            }
        }
        await set.tearDown()
    }

    /// The "what happened?" steps, repeated: a suspended view's `playLocally()` after a local seek and rate
    /// change must return as soon as the view plays (seen: it sometimes waits for an ASYNC_DONE that never comes).
    func testLocalPlayAfterLocalSeekAndRateChangeReturnsPromptly() async throws {
        let set = try await playingGroup(of: 2, settle: .milliseconds(500))
        let viewer = set.views[1]
        let suspension = await viewer.coordinator.beginSuspension(for: .whatHappened)
        for round in 0..<4 {
            try await viewer.player.seekLocally(to: .zero)
            try await viewer.player.setRateLocally(round % 2 == 0 ? 2 : 1)
            let started = ContinuousClock.now
            do {
                try await viewer.player.playLocally(timeout: .seconds(2))
            } catch {
                let status = await viewer.player.currentStatus
                XCTFail("round \(round): playLocally threw \(error); the view is \(status)")
            }
            let took = ContinuousClock.now - started
            XCTAssertLessThan(took, .seconds(1), "round \(round): playLocally took \(took)")
            let playing = await eventually(timeout: .seconds(2)) { await viewer.player.currentStatus.state == .playing }
            XCTAssertTrue(playing, "round \(round)")
        }
        try await suspension.end()
        await set.tearDown()
    }

    func testOthersWaitWhileAParticipantIsSuspendedForAReasonTheyWaitFor() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(3)))
        for v in set.views.prefix(2) { await v.coordinator.setSuspensionReasonsThatTriggerWaiting([.playingInterstitial]) }
        try await set.playAll()
        try await Task.sleep(for: .milliseconds(800))
        let adViewer = set.views[2]

        // A reason nobody waits for: the others carry on.
        let aside = await adViewer.coordinator.beginSuspension(for: .whatHappened)
        try await Task.sleep(for: .milliseconds(500))
        let carryOn = await set.allPlaying([0, 1])
        check(carryOn, "the others stopped for a reason they do not wait for: \(await set.statuses())")
        try await aside.end()
        let back = await eventually { await set.allPlaying() }
        XCTAssertTrue(back)

        // An interstitial: the others wait (pause, together, on one frame). The ad viewer's frames are its own
        // content until it has rejoined, so they are recorded apart (as sync-report does for a suspended view).
        set.recorder.setItem("interstitial", view: 3)
        let interstitial = await adViewer.coordinator.beginSuspension(for: .playingInterstitial)
        let waiting = await eventually { await set.allPaused([0, 1]) }
        check(waiting, "the others did not wait: \(await set.statuses())")
        let held = await set.settledPositions()
        XCTAssertLessThanOrEqual(abs(try XCTUnwrap(held[0]).seconds - XCTUnwrap(held[1]).seconds), frame + 0.001, "\(held)")
        let group = try unwrap(await set.medium.groupState(for: "event"))
        XCTAssertFalse(group.isPlaying)
        let adStatus = await adViewer.player.currentStatus
        XCTAssertEqual(adStatus.state, .playing, "the suspended participant itself was paused")
        let heldNs = set.nowNs
        try await Task.sleep(for: .milliseconds(700))
        XCTAssertEqual(set.frames(since: heldNs, views: [1, 2]).count, 0, "the waiting views kept rendering")

        // The interstitial ends: everyone resumes together from where the others waited.
        let endNs = set.nowNs
        // Its frames are the group's again from its rejoining seek on (marked then, not when `end` returns: the
        // group may have started before that).
        set.recorder.setItem("event", view: 3, fromNextSegment: true)
        try await interstitial.end()
        let endReturnedNs = set.nowNs
        await assertResumed(set, since: endNs)
        let resumedGroup = try unwrap(await set.medium.groupState(for: "event"))
        XCTAssertTrue(resumedGroup.isPlaying)
        XCTAssertEqual(resumedGroup.anchorMedia.seconds, group.anchorMedia.seconds, accuracy: frame,
                       "the group resumed elsewhere than where it waited")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after the interstitial")
        try await Task.sleep(for: .seconds(1.2))
        let first = set.firstFrames(since: endNs)
        let starts = first.values.map { Double($0.renderClockNs) / 1e6 }
        XCTAssertEqual(first.count, 3)
        // How the old labelling (after `end` returned) went wrong: positive when the group rendered first.
        print("[interstitial] end() returned \((Double(endReturnedNs) - (starts.min() ?? 0) * 1e6) / 1e6) ms after the group's first frame")
        XCTAssertLessThan((starts.max() ?? 0) - (starts.min() ?? .infinity), 10,
                          "first renders after the interstitial (ms), per view: \(first.mapValues { (Double($0.renderClockNs) - Double(endNs)) / 1e6 })")
        assertAligned(set, since: endNs, minFrames: 25, "after the interstitial")
        await set.tearDown()
    }

    func testOtherParticipantsListsTheOthersWithTheirSuspensionsAndReadiness() async throws {
        let set = try await playingGroup(of: 3)
        let me = set.views[0].coordinator
        let ready = await eventually(timeout: .seconds(2)) {
            let others = await me.otherParticipants
            return others.map(\.id.rawValue) == ["view2", "view3"] && others.allSatisfy { $0.isReady && $0.suspensionReasons.isEmpty }
        }
        check(ready, "\(await me.otherParticipants)")
        let items = await me.otherParticipants.map(\.itemIdentifier)
        XCTAssertEqual(items, ["event", "event"])

        let suspension = await set.views[2].coordinator.beginSuspension(for: .playingInterstitial)
        let shown = await eventually(timeout: .seconds(2)) {
            let view3 = await me.otherParticipants.first { $0.id.rawValue == "view3" }
            return view3?.suspensionReasons == [.playingInterstitial] && view3?.isReady == false
        }
        check(shown, "\(await me.otherParticipants)")
        let fromView3 = await set.views[2].coordinator.otherParticipants.map(\.id.rawValue)
        XCTAssertEqual(fromView3, ["view1", "view2"])

        try await suspension.end()
        let cleared = await eventually(timeout: .seconds(3)) {
            let view3 = await me.otherParticipants.first { $0.id.rawValue == "view3" }
            return view3?.suspensionReasons.isEmpty == true && view3?.isReady == true
        }
        check(cleared, "\(await me.otherParticipants)")
        await set.tearDown()
    }

    func testPlayImmediatelyStartsTheCallerWithoutWaitingForTheOthers() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(2)))
        // A participant that takes 1.5 s to get ready (a slow network, say).
        let slow = SlowTarget(delay: .milliseconds(1500))
        let slowCoordinator = PlaybackCoordinator(id: ParticipantID("slow"), defaultIdentifier: "event", target: slow)
        try await slowCoordinator.coordinate(using: set.medium)

        // A normal play waits for everyone.
        let playNs = set.nowNs
        try await set.players[0].play()
        let waited = await eventually { await set.allPlaying() }
        XCTAssertTrue(waited)
        let rendering = await set.waitRendering(since: playNs)
        XCTAssertTrue(rendering)
        let firstNormal = try XCTUnwrap(set.firstFrames(since: playNs)[1])
        XCTAssertGreaterThan(Double(firstNormal.renderClockNs - playNs) / 1e9, 1.4, "the group started before the slow participant was ready")
        try await set.players[0].pause()
        let paused = await eventually { await set.allPaused() }
        XCTAssertTrue(paused)

        // playImmediately(atRate:) on view 1: it starts at once; the others follow when they can.
        let immediateNs = set.nowNs
        let slowBefore = slow.commands.count
        let call = Task { try await set.views[0].coordinator.playImmediately(atRate: 1) }
        let started = await eventually(timeout: .seconds(1)) {
            set.frames(since: immediateNs, views: [1]).count >= 3
        }
        XCTAssertTrue(started, "view 1 did not start at once")
        let first = try XCTUnwrap(set.firstFrames(since: immediateNs)[1])
        XCTAssertLessThan(Double(first.renderClockNs - immediateNs) / 1e9, 0.8, "view 1 waited before starting")
        let slowSince = slow.commands.dropFirst(slowBefore)
        XCTAssertFalse(slowSince.contains { if case .play = $0.kind { true } else { false } },
                       "view 1 started only once the slow participant was ready: \(slowSince)")
        try await call.value
        await assertResumed(set, since: immediateNs)
        let slowPlays = slow.commands.filter { if case .play = $0.kind { true } else { false } }
        XCTAssertGreaterThanOrEqual(slowPlays.count, 2, "the slow participant never caught up: \(slow.commands)")
        // View 2 caught up and is aligned with view 1.
        try await Task.sleep(for: .seconds(1))
        let view2Start = try XCTUnwrap(set.firstFrames(since: immediateNs)[2]).renderClockNs
        assertAligned(set, since: view2Start + 50_000_000, minFrames: 20, "after playImmediately")
        await slowCoordinator.disconnect()
        await set.tearDown()
    }
}

/// A playback object that takes `delay` to get ready for every buffer request, and otherwise does nothing.
final class SlowTarget: CoordinatedPlaybackTarget, @unchecked Sendable {
    // @unchecked: every stored var is guarded by `lock`.
    private let lock = NSLock()
    private var received: [DelegatedCommand] = []
    private var buffering = false
    private var playing = false
    let delay: Duration

    init(delay: Duration) { self.delay = delay }

    var commands: [DelegatedCommand] { lock.withLock { received } }
    var isBuffering: Bool { lock.withLock { buffering } }

    func adopt(clock: Clock) async throws {}
    func releaseClock() async {}
    func perform(_ command: DelegatedCommand) async throws {
        lock.withLock { received.append(command) }
        switch command.kind {
        case .buffer:
            lock.withLock { buffering = true; playing = false }
            try await Task.sleep(for: delay)
            lock.withLock { buffering = false }
        case .play:
            lock.withLock { playing = true }
        case .pause:
            lock.withLock { playing = false }
        }
    }
    func currentItemTime() async -> ClockTime? { nil }
    func isPlaying() async -> Bool { lock.withLock { playing } }
    func setWaiting(_ waiting: Bool) async {}
    func setDetached(_ detached: Bool) async {}
}
