import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import SyncAnalysis
import SyncBench
import Synchronization
import TestSupport
import XCTest

/// Pause, resume, seek, rate and late join through the coordinator, with real pipelines on the bundled angles:
/// any view issues the command, every view applies it, and all start again at one instant.
final class GroupTransportTests: XCTestCase {
    private let frame = 1.0 / 30

    func testPauseFromAnyViewPausesAllAtOnePositionAndPlayFromAnotherResumesAligned() async throws {
        let set = try await CoordinatedViews.make(Media.angles)
        try await set.playAll(from: 2)
        try await Task.sleep(for: .seconds(1.2))

        // View 2 presses pause.
        let before = try unwrap(await set.groupTime())
        try await set.players[1].pause()
        let paused = await eventually { await set.allPaused() }
        check(paused, "\(await set.statuses())")
        let pausedNs = set.nowNs
        let positions = await set.settledPositions()
        print("paused at", positions, "group was at", before)
        XCTAssertLessThanOrEqual(positionSpread(positions), frame + 0.001, "paused positions \(positions)")
        let group = try unwrap(await set.medium.groupState(for: "event"))
        XCTAssertFalse(group.isPlaying)
        // Paused where the group was when the button was pressed (no jump), every view on the group's frame.
        XCTAssertLessThan(abs(group.anchorMedia.seconds - before.seconds), 0.15, "pause anchor \(group.anchorMedia) vs \(before)")
        assertPositions(positions, near: group.anchorMedia, toleranceS: frame, "paused")

        // Nothing is rendered while paused.
        try await Task.sleep(for: .milliseconds(600))
        XCTAssertEqual(set.frames(since: pausedNs).count, 0, "frames rendered while paused: \(set.frameCounts(since: pausedNs))")
        let stillPaused = await set.allPaused()
        XCTAssertTrue(stillPaused)

        // View 1 presses play: everyone resumes from the paused frame, at one instant.
        let resumeNs = set.nowNs
        try await set.players[0].play()
        let playing = await eventually { await set.allPlaying() }
        check(playing, "\(await set.statuses())")
        await set.waitCompared(since: resumeNs, minFrames: 30)
        let first = set.firstFrames(since: resumeNs)
        XCTAssertEqual(first.count, 4, "views that rendered after the resume: \(first.keys.sorted())")
        for (view, record) in first {
            // Nobody skipped content: the first frame shown after the resume is the paused one (±1 frame).
            XCTAssertLessThanOrEqual(abs(Double(record.mediaTimeNs) / 1e9 - group.anchorMedia.seconds), frame + 0.002,
                                     "view \(view) resumed at \(Double(record.mediaTimeNs) / 1e9) s, paused at \(group.anchorMedia)")
        }
        let starts = first.values.map { Double($0.renderClockNs) / 1e6 }
        XCTAssertLessThan((starts.max() ?? 0) - (starts.min() ?? .infinity), 10, "first renders after resume (ms) \(starts)")
        assertAligned(set, since: resumeNs, minFrames: 30, "after resume")
        await set.tearDown()
    }

    func testSeekForwardAndBackFromAnyViewMovesEveryViewAndResumesAligned() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(3)))
        try await set.playAll()
        try await Task.sleep(for: .seconds(1))

        for (index, step) in [(1, 10.0), (0, -5.0)] {
            let logs = await withTaskGroup(of: (Int, EventLog<PlayerEvent>).self) { group in
                for (i, p) in set.players.enumerated() { group.addTask { (i, await p.eventLog(clock: set.clock)) } }
                var all: [Int: EventLog<PlayerEvent>] = [:]
                for await (i, log) in group { all[i] = log }
                return all
            }
            let before = try unwrap(await set.groupTime())
            let commandNs = set.nowNs
            try await set.players[index].seek(by: step)
            let doneNs = set.nowNs
            let group = try unwrap(await set.medium.groupState(for: "event"))
            XCTAssertTrue(group.isPlaying)
            XCTAssertLessThan(abs(group.anchorMedia.seconds - (before.seconds + step)), 0.15,
                              "seek \(step): group anchored at \(group.anchorMedia), was at \(before)")
            let playing = await eventually { await set.allPlaying() }
            check(playing, "seek \(step): \(await set.statuses())")
            let rendering = await set.waitRendering(since: doneNs)
            XCTAssertTrue(rendering, "seek \(step): not rendering")
            let now = try unwrap(await set.groupTime())
            assertPositions(await set.settledPositions(), near: now, "after seek \(step)")

            // While the barrier ran, every view said "waiting for coordinated playback", then played.
            for (i, log) in logs.sorted(by: { $0.key < $1.key }) {
                let statuses = log.statuses(since: commandNs)
                XCTAssertTrue(statuses.contains { $0.waitingToPlay == .waitingForCoordinatedPlayback },
                              "seek \(step): view index \(i) statuses \(statuses)")
                XCTAssertTrue(statuses.last?.state == .playing && statuses.last?.waitingToPlay == nil,
                               "seek \(step): view index \(i) statuses \(statuses)")
                log.stop()
            }
            await set.waitCompared(since: doneNs, minFrames: 25)
            // Every view's first frame at the new position is the target frame: its position jumped there, without
            // a run of frames shown on the way. Looked for from the command on, not from `seek`'s return: under the
            // suite's load the group can start before the test's task is resumed, and its first frames then came
            // before `doneNs` (a later frame, 2.09 frames from the anchor, was taken for the first: repeat run on
            // 200d1c5). The frames of before the seek are 5 or 10 s away from the anchor.
            var first: [Int: FrameRecord] = [:]
            for f in set.frames(since: commandNs) where abs(Double(f.mediaTimeNs) / 1e9 - group.anchorMedia.seconds) < 1
                && (first[f.view].map { f.renderClockNs < $0.renderClockNs } ?? true) {
                first[f.view] = f
            }
            XCTAssertEqual(first.count, 3, "views with a frame near the anchor: \(first.keys.sorted())")
            for (view, record) in first {
                // Nothing from before the target (a frame on the way there), within two frames. After it, a view
                // starved of CPU as the group starts skips the frames it can no longer show on time (LateFrameTests):
                // its first frame was 0.14-0.26 s past the target in a suite run with a shard given the CPU first
                // (its views then aligned), so up to 0.5 s is allowed there; a first frame that far off still fails.
                let offset = Double(record.mediaTimeNs) / 1e9 - group.anchorMedia.seconds
                XCTAssertGreaterThanOrEqual(offset, -(2 * frame + 0.002),
                                            "seek \(step): view \(view) first frame \(Double(record.mediaTimeNs) / 1e9) s")
                XCTAssertLessThanOrEqual(offset, 0.5,
                                         "seek \(step): view \(view) first frame \(Double(record.mediaTimeNs) / 1e9) s")
            }
            XCTAssertLessThan(Double(doneNs - commandNs) / 1e9, 3, "the seek barrier took too long")
            assertAligned(set, since: doneNs, minFrames: 25, "after seek \(step)")
        }
        await set.tearDown()
    }

    func testRateChangeFromAViewAppliesToAllAndIsAnnouncedToEveryCoordinator() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(3)))
        try await set.playAll()
        try await Task.sleep(for: .milliseconds(500))
        var events: [ParticipantID: EventLog<CoordinatorEvent>] = [:]
        for v in set.views { events[v.coordinator.id] = await v.coordinator.eventLog(clock: set.clock) }

        for (index, rate) in [(0, 2.0), (2, 1.0)] {
            let originator = set.views[index].coordinator.id
            set.recorder.setRate(rate)
            try await set.players[index].setRate(rate)
            let doneNs = set.nowNs
            let playing = await eventually { await set.allPlaying() }
            check(playing, "rate \(rate): \(await set.statuses())")
            let group = try unwrap(await set.medium.groupState(for: "event"))
            XCTAssertEqual(group.rate, rate)
            for p in set.players { let r = await p.rate; XCTAssertEqual(r, rate, "player rate") }

            // Positions advance at the new rate on every view.
            try await Task.sleep(for: .milliseconds(300))
            let c0 = set.clock.time
            let p0 = await set.settledPositions()
            try await Task.sleep(for: .seconds(1.5))
            let c1 = set.clock.time
            let p1 = await set.settledPositions()
            for i in p0.indices {
                let advance = try XCTUnwrap(p1[i]).seconds - XCTUnwrap(p0[i]).seconds
                let speed = advance / (c1.seconds - c0.seconds)
                XCTAssertEqual(speed, rate, accuracy: 0.1 * rate, "view index \(i) advances at \(speed)× for rate \(rate)")
            }
            assertPositions(p1, near: try unwrap(await set.groupTime()), toleranceS: 0.1 * rate, "rate \(rate)")
            assertAligned(set, since: doneNs, minFrames: 30, rate: rate, "rate \(rate)")

            let logs = events

            // Every coordinator is told, and knows whether another participant did it.
            for v in set.views {
                let id = v.coordinator.id
                let expected = CoordinatorEvent.rateChanged(rate: rate, originator: originator,
                                                            byOtherParticipant: id != originator)
                let told = await eventually(timeout: .seconds(2)) { logs[id]!.values.contains(expected) }
                XCTAssertTrue(told, "\(id) events: \(events[id]!.values.filter { if case .participantsChanged = $0 { false } else { true } })")
            }
        }
        await set.tearDown()
    }

    func testLateJoinerStartsAtTheGroupsTimeAlignedWithoutPausingTheOthers() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(3)))
        try await set.playAll()
        try await Task.sleep(for: .seconds(1))
        var logs: [EventLog<PlayerEvent>] = []
        for p in set.players { logs.append(await p.eventLog(clock: set.clock)) }
        let joinNs = set.nowNs

        let late = try await set.add(Media.angles[3], number: 4, item: "event")
        let lateEvents = await late.coordinator.eventLog(clock: set.clock)
        try await late.coordinator.join()
        let joinedNs = set.nowNs
        let playing = await eventually { await set.allPlaying() }
        check(playing, "\(await set.statuses())")
        // PLAYING comes before the start instant it was given; wait until it renders.
        let rendering = await set.waitRendering(since: joinedNs, views: [4])
        XCTAssertTrue(rendering, "the late joiner renders nothing")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after late join")
        let joined = await eventually(timeout: .seconds(2)) {
            lateEvents.values.contains { if case .joined = $0 { true } else { false } }
        }
        XCTAssertTrue(joined, "late joiner events \(lateEvents.values)")

        await set.waitCompared(since: joinedNs, minFrames: 30)
        assertAligned(set, since: joinedNs, minFrames: 30, "after late join")
        // The late joiner's first frame is where the group was when it started (it did not start from 0).
        let first = try XCTUnwrap(set.firstFrames(since: joinNs)[4])
        XCTAssertGreaterThan(Double(first.mediaTimeNs) / 1e9, 1.0, "late joiner started at \(first.mediaTimeNs) ns")

        // The others never paused nor waited, and kept rendering frames without a gap.
        for (i, log) in logs.enumerated() {
            let statuses = log.statuses(since: joinNs)
            XCTAssertFalse(statuses.contains { $0.state != .playing || $0.waitingToPlay != nil },
                           "view index \(i) during the join: \(statuses)")
            let renders = set.frames(since: joinNs, views: [i + 1]).map(\.renderClockNs).sorted()
            let gaps = zip(renders.dropFirst(), renders).map { Double($0 - $1) / 1e6 }
            XCTAssertLessThan(gaps.max() ?? .infinity, 100, "view \(i + 1) longest gap between frames (ms)")
        }
        await set.tearDown()
    }
}

/// A view says "playing" only from the group's start instant; before it, "waiting for coordinated playback".
final class StartInstantStatusTests: XCTestCase {
    func testStatusTurnsPlayingAtTheStartInstantNotBefore() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(2)))
        // A wide margin makes "before the instant" long enough to see.
        await set.medium.setStartMargin(.milliseconds(400))
        var logs: [EventLog<PlayerEvent>] = []
        for player in set.players { logs.append(await player.eventLog(clock: set.clock)) }
        let commandNs = set.nowNs
        try await set.players[0].play()
        let playing = await eventually { await set.allPlaying() }
        check(playing, "\(await set.statuses())")
        let group = try unwrap(await set.medium.groupState(for: "event"))
        let startNs = try unwrap(group.anchorClock).nanoseconds
        XCTAssertGreaterThan(startNs, commandNs)
        for (index, log) in logs.enumerated() {
            let entries = log.since(commandNs)
            let firstPlaying = try unwrap(entries.first { entry in
                if case .status(let s) = entry.value { return s.state == .playing && s.waitingToPlay == nil }
                return false
            }, "view \(index + 1) never reported playing: \(entries.map(\.value))")
            // Not before the instant (1 ms of slack for the timer); and not long after it.
            XCTAssertGreaterThanOrEqual(firstPlaying.clockNs + 1_000_000, startNs, "view \(index + 1) said playing early")
            XCTAssertLessThan(Double(firstPlaying.clockNs) - Double(startNs), 150e6, "view \(index + 1) said playing late")
            let waitedBefore = entries.contains { entry in
                if case .status(let s) = entry.value { return entry.clockNs < startNs && s.waitingToPlay == .waitingForCoordinatedPlayback }
                return false
            }
            XCTAssertTrue(waitedBefore, "view \(index + 1) showed 'waiting for coordinated playback' before the instant")
        }
        await set.tearDown()
    }
}

/// One player on the medium's clock, recorded as item "one", prepared at 2 s (not started).
private func preparedPlayer(named name: String, _ medium: PlaybackCoordinationMedium,
                            _ recorder: SyncRecorder) async throws -> Player {
    let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: name)))
    await player.adoptClock(medium.clock)
    try await player.load(MediaSource(Media.angles[0]))
    try recorder.attach(player, item: "one")
    try await player.prepareCoordinated(at: .seconds(2), rate: 1)
    return player
}

/// A "play at C" that arrives after C does not start the pipeline late; a later instant does start it.
final class MissedStartInstantTests: XCTestCase {
    func testAPlayerDoesNotStartWhenTheInstantHasPassed() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "late", medium, recorder)
        let prepared = recorder.frameCount

        let started = try await player.startCoordinated(
            at: medium.clock.time - ClockTime(Player.lateStartTolerance) - .milliseconds(5))
        XCTAssertFalse(started, "an instant further in the past than the tolerance is refused")
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertEqual(recorder.frameCount, prepared, "nothing rendered after a refused start")
        let status = await player.currentStatus
        XCTAssertNotEqual(status.state, .playing)

        let at = medium.clock.time + .milliseconds(100)
        let startedLater = try await player.startCoordinated(at: at)
        XCTAssertTrue(startedLater)
        try await Task.sleep(for: .milliseconds(500))
        let first = try unwrap(recorder.frames.filter { $0.renderClockNs >= at.nanoseconds - 5_000_000 }.first)
        XCTAssertEqual(Double(first.mediaTimeNs) / 1e9, 2, accuracy: 0.04, "it started from the prepared frame")
        XCTAssertLessThan(abs(Double(first.renderClockNs) - Double(at.nanoseconds)) / 1e6, 5, "at the instant")
        recorder.detachAll()
        await player.stop()
    }
}

/// A start instant seconds ahead of the view's clock (a member whose net clock is off the host's) is said in one
/// notice naming the view: the view would otherwise show "waiting" and render nothing until then, unexplained.
/// A start a group places as usual (tens of ms ahead) says nothing.
final class FarStartInstantTests: XCTestCase {
    func testAStartSecondsAheadIsReportedAndAUsualOneIsNot() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "far", medium, recorder)
        let notices = Mutex<[String]>([])
        let events = await player.events()
        let watcher = Task {
            for await event in events { if case .notice(let text) = event { notices.withLock { $0.append(text) } } }
        }
        defer { watcher.cancel() }

        let usual = try await player.startCoordinated(at: medium.clock.time + .milliseconds(150))
        XCTAssertTrue(usual)
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(notices.withLock { $0 }.filter { $0.contains("coordinated start") }, [], "a usual start is not reported")

        try await player.prepareCoordinated(at: .seconds(2), rate: 1)
        let far = try await player.startCoordinated(at: medium.clock.time + .milliseconds(2_500))
        XCTAssertTrue(far)
        let reported = await eventually(timeout: .seconds(2)) {
            notices.withLock { $0 }.contains { $0.hasPrefix("view 1 (far): its coordinated start is 2.5 s ahead on its clock") }
        }
        XCTAssertTrue(reported, "no notice for a start 2.5 s ahead: \(notices.withLock { $0 })")
        let status = await player.currentStatus
        XCTAssertEqual(status.waitingToPlay, .waitingForCoordinatedPlayback, "it waits for the instant meanwhile")
        recorder.detachAll()
        await player.stop()
    }
}

/// The player started at `at` from the frame `preparedPlayer` prepared (2 s) and plays; stops it.
private func assertPlaysFromThePreparedFrame(_ player: Player, _ recorder: SyncRecorder, at: ClockTime,
                                             file: StaticString = #filePath, line: UInt = #line) async throws {
    // Waits (up to 3 s) for a frame rendered from the instant on and PLAYING, rather than sleeping "long enough".
    _ = await eventually(timeout: .seconds(3)) {
        guard recorder.frames.contains(where: { $0.renderClockNs >= at.nanoseconds - 5_000_000 }) else { return false }
        return await player.currentStatus.state == .playing
    }
    let first = try unwrap(recorder.frames.first { $0.renderClockNs >= at.nanoseconds - 5_000_000 }, file: file, line: line)
    XCTAssertEqual(Double(first.mediaTimeNs) / 1e9, 2, accuracy: 0.04, "it started from the prepared frame",
                   file: file, line: line)
    XCTAssertLessThan(abs(Double(first.renderClockNs) - Double(at.nanoseconds)) / 1e6, 5, "at the instant",
                      file: file, line: line)
    let status = await player.currentStatus
    XCTAssertEqual(status.state, .playing, file: file, line: line)
    recorder.detachAll()
    await player.stop()
}

/// The start is the sinks' state change (the rest of the pipeline follows off the critical path), and nothing
/// that happens before the pipeline has followed can leave the sinks playing on their own.
final class SinksFirstStartTests: XCTestCase {
    func testTheSinksArePlayingWhenTheStartReturnsAndThePipelineFollows() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "sinks", medium, recorder)
        let sinks = player.pipeline.leafSinks()
        XCTAssertGreaterThanOrEqual(sinks.count, 2, "a video and an audio sink: \(sinks.map(\.name))")
        let at = medium.clock.time + .milliseconds(150)
        let started = try await player.startCoordinated(at: at)
        XCTAssertTrue(started)
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .playing, count: sinks.count),
                       "every sink is PLAYING as soon as the start returns")
        let followed = await eventually(timeout: .seconds(3)) { player.pipeline.currentState == .playing }
        XCTAssertTrue(followed, "the pipeline never followed its sinks to PLAYING")
        try await assertPlaysFromThePreparedFrame(player, recorder, at: at)
    }

    /// The medium runs a player's prepared start itself (before the instant); the player's own "play at C", even
    /// when it comes after the instant, then only follows: it does not refuse, restart or move anything.
    func testAStartRunByTheMediumIsFollowedByThePlayerEvenAfterTheInstant() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "direct", medium, recorder)
        let prepared = try unwrap(await player.preparedStart)
        let sinks = player.pipeline.leafSinks()
        let at = medium.clock.time + .milliseconds(100)
        XCTAssertTrue(prepared.start(at: at))
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .playing, count: sinks.count),
                       "the prepared start did not start the sinks")
        XCTAssertTrue(prepared.start(at: at), "running it again for the same instant is not an error")
        XCTAssertFalse(prepared.start(at: at + .milliseconds(40)), "one prepared start, one instant")
        try await Task.sleep(for: .milliseconds(200))   // past the instant and its late tolerance
        let followed = try await player.startCoordinated(at: at)
        XCTAssertTrue(followed, "the player refused a start that had been run in time")
        let playing = await eventually(timeout: .seconds(3)) { player.pipeline.currentState == .playing }
        XCTAssertTrue(playing, "the pipeline never followed its sinks")
        try await assertPlaysFromThePreparedFrame(player, recorder, at: at)
    }

    /// A prepared start the player has moved on from (prepared again for a newer command) starts nothing.
    func testAStartThePlayerMovedOnFromStartsNothing() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "stale", medium, recorder)
        let stale = try unwrap(await player.preparedStart)
        try await player.prepareCoordinated(at: .seconds(4), rate: 1)
        let prepared = recorder.frameCount
        XCTAssertFalse(stale.start(at: medium.clock.time + .milliseconds(50)), "a withdrawn start ran")
        let sinks = player.pipeline.leafSinks()
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .paused, count: sinks.count))
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertEqual(recorder.frameCount, prepared, "frames rendered from a withdrawn start")
        let fresh = try unwrap(await player.preparedStart)
        XCTAssertFalse(fresh === stale, "the new preparation has its own start")

        // Run by a medium, then the player moves on before taking it up: the sinks go back to PAUSED.
        XCTAssertTrue(fresh.start(at: medium.clock.time + .milliseconds(300)))
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .playing, count: sinks.count))
        try await player.prepareCoordinated(at: .seconds(6), rate: 1)
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .paused, count: sinks.count),
                       "sinks a medium started kept playing after the player moved on")
        let movedOn = recorder.frameCount
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(recorder.frameCount, movedOn, "frames rendered from a start the player moved on from")
        recorder.detachAll()
        await player.stop()
    }

    /// In a group, the last view to be ready starts every prepared view, ahead of the instant, within the margin.
    func testTheMediumStartsEveryViewBeforeTheInstant() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(3)))
        try await set.views[0].coordinator.coordinatePlay()
        try await set.views[1].coordinator.coordinateSeek(to: .seconds(3))
        let timing = try unwrap(await set.medium.lastBarrierTiming)
        let lead = try unwrap(timing.startLead, "the medium ran no prepared start")
        XCTAssertGreaterThan(lead, .zero, "the starts were done only after the instant")
        XCTAssertLessThanOrEqual(lead, timing.startMargin)
        XCTAssertTrue(timing.startedByLastReady, "the last view to be ready did not start the group itself")
        XCTAssertEqual(timing.missedStart, 0)
        let sinks = set.players.flatMap { $0.pipeline.leafSinks() }
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .playing, count: sinks.count))
        for player in set.players { await player.stop() }
    }

    func testAPauseRightAfterTheStartPausesTheSinksToo() async throws {
        let medium = PlaybackCoordinationMedium()
        let recorder = SyncRecorder(clock: medium.clock)
        let player = try await preparedPlayer(named: "sinks", medium, recorder)
        let prepared = recorder.frameCount
        let started = try await player.startCoordinated(at: medium.clock.time + .milliseconds(300))
        XCTAssertTrue(started)
        try await player.pauseLocally()
        let sinks = player.pipeline.leafSinks()
        XCTAssertEqual(sinks.map(\.currentState), Array(repeating: .paused, count: sinks.count),
                       "a sink kept playing after the pause")
        XCTAssertEqual(player.pipeline.currentState, .paused)
        try await Task.sleep(for: .milliseconds(700))
        XCTAssertEqual(recorder.frameCount, prepared, "frames rendered after the pause")
        recorder.detachAll()
        await player.stop()
    }
}
