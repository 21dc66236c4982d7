import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// The arbiter with real players, a real PulseAudio daemon and null sinks of the test's own. Placement is checked
/// through the server (our client listing sink inputs), sound by recording the sink's monitor.
final class RoutingArbiterTests: PulseTestCase {
    private func start(_ configuration: RoutingConfiguration, angles: Int = 3) async throws -> (RoutingArbiter, RoutedViews) {
        let arbiter = RoutingArbiter(configuration: configuration)
        try await arbiter.start()
        let started = try await RoutedViews.start(arbiter, files: RoutingMedia.angles.prefix(angles).map(\.file))
        views = started
        return (arbiter, started)
    }


    private func allStreamsUp(_ arbiter: RoutingArbiter, count: Int) async -> Bool {
        let pulse = self.pulse!
        return await eventually { ((try? await pulse.streams(of: arbiter.instance).count) ?? 0) == count }
    }

    /// Samples the server every few milliseconds until cancelled; the most of our streams ever seen on `sink`.
    private func watchMaximum(on sink: String, _ arbiter: RoutingArbiter) -> Task<Int, Never> {
        let pulse = self.pulse!
        return Task {
            var most = 0
            while !Task.isCancelled {
                if let index = try? await pulse.sinkIndex(sink), let streams = try? await pulse.streams(of: arbiter.instance) {
                    most = max(most, streams.filter { $0.input.sink == index }.count)
                }
                try? await Task.sleep(for: .milliseconds(3))
            }
            return most
        }
    }

    private func dominant(_ samples: [Float], fromSample: Int, toSample: Int) -> Double {
        let a = max(0, fromSample), b = min(samples.count, toSample)
        guard b > a + 2400 else { return 0 }
        return Spectrum.dominant(samples[a..<b]).frequency
    }

    /// A cheap test for the polls: `tone` is at least 4 × louder than each of `others` in `x` (the full band scan,
    /// `dominant`, is the assertion afterwards).
    private func louder(_ tone: Double, than others: [Double], in x: ArraySlice<Float>) -> Bool {
        let level = Spectrum.level(x, frequency: tone)
        return level > 0.001 && others.allSatisfy { level > 4 * Spectrum.level(x, frequency: $0) }
    }

    func testOnlyThePreferredViewPlaysOnTheNonMixableRouteAndASwapBringsTheOtherTone() async throws {
        let pulse = self.pulse!
        let living = try await pulse.nullSink("living", properties: "multiview.non-mixable=1")
        let (arbiter, _) = try await start(RoutingConfiguration(audioRoute: living, preferredAudio: 2))
        let route = await arbiter.currentRoute
        XCTAssertEqual(route?.mixing, .nonMixable)
        let up = await allStreamsUp(arbiter, count: 3)
        XCTAssertTrue(up, "three streams on the server")
        let settled = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [2] }
        let onSink = (try? await pulse.viewsOn(living, arbiter)) ?? []
        XCTAssertTrue(settled, "only view 2 on the non-mixable sink: \(onSink)")
        let watch = watchMaximum(on: living, arbiter)

        let streams = try await pulse.streams(of: arbiter.instance)
        for (view, input) in streams { XCTAssertEqual(input.muted, view != 2, "view \(view) muted") }
        let flags = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertEqual(flags, [1: true, 2: false, 3: true])

        let recording = try MonitorRecording(sink: living)
        // Before the swap: view 2's tone is what the room hears. Waited for as sound, not as time: a cold server
        // may start the streams (and the recording) a second or more late.
        let rate = Int(MonitorRecording.rate)
        let beforeHeard = await recording.waitUntil(timeout: .seconds(10)) { s in
            s.count >= rate && louder(660, than: [440, 880], in: s[(s.count - rate / 2)...])
        }
        let swapIndex = recording.sampleCount
        print("routing: 660 Hz heard after \(beforeHeard.samples.count) samples recorded; swap at sample \(swapIndex)")
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        let swapped = await eventually(timeout: .seconds(3)) { (try? await pulse.viewsOn(living, arbiter)) == [3] }
        // After it: 0.4 s to change over, then 0.8 s judged (positions in samples from the swap's own).
        let afterFrom = swapIndex + rate * 2 / 5, afterTo = swapIndex + rate * 6 / 5
        let afterRecorded = await recording.waitUntil(timeout: .seconds(10)) { $0.count >= afterTo }
        let samples = recording.stop()
        watch.cancel()
        let most = await watch.value
        XCTAssertTrue(swapped, "only view 3 on the non-mixable sink after the swap")
        XCTAssertEqual(most, 1, "never more than one of our streams on the non-mixable sink (server sampled every 3 ms)")

        XCTAssertTrue(beforeHeard.met, "view 2's 660 Hz never dominated the living room within 10 s (\(beforeHeard.samples.count) samples recorded)")
        XCTAssertTrue(afterRecorded.met, "the recording stopped growing after the swap (\(afterRecorded.samples.count) samples, wanted \(afterTo))")
        let before = dominant(samples, fromSample: swapIndex - rate * 4 / 5, toSample: swapIndex)
        let after = dominant(samples, fromSample: afterFrom, toSample: afterTo)
        XCTAssertEqual(before, 660, accuracy: 10, "before the swap the living room hears view 2's 660 Hz")
        XCTAssertEqual(after, 880, accuracy: 10, "after the swap it hears view 3's 880 Hz")
        let flagsAfter = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertEqual(flagsAfter, [1: true, 2: true, 3: false])
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.audioOutputSuppressedDueToNonMixableAudioRoute(view: 2, suppressed: true)))
        XCTAssertTrue(events.contains(.nonMixableAudioOwner(view: 3, route: living, byDefault: false)))
        // The others kept playing through it all.
        for player in views!.players {
            let state = await player.currentStatus.state
            XCTAssertEqual(state, .playing, "\(player.view)")
        }
    }

    func testAMixableRouteReceivesEveryView() async throws {
        let pulse = self.pulse!
        let speakers = try await pulse.nullSink("speakers")
        let (arbiter, _) = try await start(RoutingConfiguration(audioRoute: speakers, preferredAudio: 2))
        let up = await allStreamsUp(arbiter, count: 3)
        XCTAssertTrue(up)
        let all = await eventually { (try? await pulse.viewsOn(speakers, arbiter)) == [1, 2, 3] }
        let onSink = (try? await pulse.viewsOn(speakers, arbiter)) ?? []
        XCTAssertTrue(all, "every view plays on the mixable sink: \(onSink)")
        for (view, input) in try await pulse.streams(of: arbiter.instance) { XCTAssertFalse(input.muted, "view \(view)") }
        let recording = try MonitorRecording(sink: speakers)
        // 440, 660 and 880 Hz are all there; 1100 Hz (view 4, not playing) is not. Judged on the last second
        // recorded once all three are heard (a cold server starts streams late: wait for the sound, not the time).
        let tones = RoutingMedia.angles.prefix(4).map(\.tone)
        func levels(_ s: [Float]) -> [Double] { tones.map { Spectrum.level(s.suffix(48_000), frequency: $0) } }
        let heard = await recording.waitUntil(timeout: .seconds(10)) { s in
            guard s.count >= 48_000 else { return false }
            let l = levels(s)
            return (0..<3).allSatisfy { l[$0] > 20 * l[3] }
        }
        let samples = recording.stop()
        XCTAssertGreaterThan(samples.count, 40000, "recorded the monitor")
        let final = levels(heard.samples)
        for i in 0..<3 { XCTAssertGreaterThan(final[i], 20 * final[3], "tone \(tones[i]) Hz within 10 s: \(final)") }
        XCTAssertTrue(heard.met)
        let flags = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertFalse(flags.values.contains(true))
    }

    func testWithoutAPreferenceTheFirstViewPlaysAndAPreferenceResetsWhenItsViewEnds() async throws {
        let pulse = self.pulse!
        let living = try await pulse.nullSink("living", properties: "multiview.non-mixable=1")
        let (arbiter, started) = try await start(RoutingConfiguration(audioRoute: living), angles: 2)
        let byDefault = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [1] }
        XCTAssertTrue(byDefault, "no preference: the first view plays on the non-mixable route")
        let announced = await arbiter.pastEvents
        XCTAssertTrue(announced.contains(.nonMixableAudioOwner(view: 1, route: living, byDefault: true)), "\(announced)")

        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(2)
        let preferred = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [2] }
        XCTAssertTrue(preferred)

        // View 2 runs to its end; the stage tells the arbiter (as Stage does on endOfStream).
        let player = started.players[1]
        let events = await player.events()
        try await player.seek(to: .seconds(22.5))
        var ended = false
        for await event in events { if case .endOfStream = event { ended = true; break } }
        XCTAssertTrue(ended)
        await arbiter.viewEnded(2)
        let reset = await arbiter.preferredParticipantForNonMixableAudioRoutes
        XCTAssertNil(reset, "the preference resets to none when its view ends")
        let back = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [1] }
        XCTAssertTrue(back, "the default (first live view) plays there again")
        let log = await arbiter.pastEvents
        XCTAssertTrue(log.contains(.preferenceReset(view: 2, external: false)))
    }

    func testRemovingTheRoutedSinkFallsBackToTheDefaultSinkWithAnEvent() async throws {
        let pulse = self.pulse!
        let den = try await pulse.nullSink("den")
        let (arbiter, started) = try await start(RoutingConfiguration(audioRoute: den), angles: 1)
        let on = await eventually { (try? await pulse.viewsOn(den, arbiter)) == [1] }
        XCTAssertTrue(on)
        let defaultSink = try await pulse.client.serverDefaultSinkName()
        try await pulse.unload(sink: den)
        let fell = await eventually { (try? await pulse.viewsOn(defaultSink, arbiter)) == [1] }
        XCTAssertTrue(fell, "the stream now plays on the default sink \(defaultSink)")
        let event = await eventually { await arbiter.pastEvents.contains(.routeLost(sink: den, fallback: defaultSink)) }
        let log = await arbiter.pastEvents
        XCTAssertTrue(event, "a clear event: \(log)")
        try await Task.sleep(for: .milliseconds(500))
        let state = await started.players[0].currentStatus.state
        XCTAssertEqual(state, .playing, "the view keeps playing")
        let failure = await started.players[0].failure
        XCTAssertNil(failure)
    }

    func testACorkedStreamPausesOnlyThatViewWhichResumesWhenUncorked() async throws {
        let pulse = self.pulse!
        try await pulse.ensureRoleCork()
        let living = try await pulse.nullSink("living", properties: "multiview.non-mixable=1")
        let (arbiter, started) = try await start(RoutingConfiguration(audioRoute: living, preferredAudio: 1), angles: 2)
        let on = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [1] }
        XCTAssertTrue(on)
        let playing = await eventually {
            var all = true
            for p in started.players where await p.currentStatus.state != .playing { all = false }
            return all
        }
        XCTAssertTrue(playing)
        let interruptions = InterruptionLog()
        let events = await started.players[0].events()
        let reader = Task { for await e in events { if case .interruption(let began) = e { await interruptions.add(began) } } }
        defer { reader.cancel() }

        // A phone call on the living-room sink: module-role-cork corks the video/music streams there.
        let phone = try startTool(["gst-launch-1.0", "-q", "audiotestsrc", "freq=2000", "!", "pulsesink", "device=\(living)",
                                   "stream-properties=props,media.role=phone"])
        let paused = await eventually(timeout: .seconds(10)) { await started.players[0].currentStatus.state == .paused }
        XCTAssertTrue(paused, "view 1 pauses when its stream is corked")
        try await Task.sleep(for: .milliseconds(500))
        let other = await started.players[1].currentStatus.state
        XCTAssertEqual(other, .playing, "view 2 (not on that sink) goes on")
        let stillPaused = await started.players[0].currentStatus.state
        XCTAssertEqual(stillPaused, .paused, "view 1 stays paused while the call lasts")
        stopTool(phone)
        let resumed = await eventually(timeout: .seconds(10)) { await started.players[0].currentStatus.state == .playing }
        XCTAssertTrue(resumed, "view 1 resumes by itself when uncorked")
        let seen = await interruptions.values
        XCTAssertEqual(seen.first, true)
        XCTAssertTrue(seen.contains(false))
    }
}

actor InterruptionLog {
    private(set) var values: [Bool] = []
    func add(_ v: Bool) { values.append(v) }
}
