import Foundation
import TestSupport
import XCTest
@testable import Multiview

/// The grid window's habit keys under Xvfb (issue 16): `m` mutes every view, keypad `*` raises the volume, and
/// Shift+/ (`?`) prints the help. The keys are typed through the X server's XTEST extension (libXtst, from a Python
/// ctypes script: a real client, not our own code), at the pointer over the window.
final class WindowKeysTests: XCTestCase {
    /// Moves the pointer over (x, y) and types each key: a keysym name, "+"-joined for chords ("Shift_L+slash").
    private func type(_ keys: [String], at point: (x: Int, y: Int)) throws {
        let script = """
        import ctypes, sys, time
        x11 = ctypes.CDLL("libX11.so.6"); xtst = ctypes.CDLL("libXtst.so.6")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XStringToKeysym.restype = ctypes.c_ulong
        x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ulong]
        x11.XFlush.argtypes = [ctypes.c_void_p]
        d = x11.XOpenDisplay(None)
        if not d: sys.exit("no display")
        xtst.XTestFakeMotionEvent(d, -1, \(point.x), \(point.y), 0); x11.XFlush(d); time.sleep(0.2)
        for chord in sys.argv[1:]:
            codes = [x11.XKeysymToKeycode(d, x11.XStringToKeysym(k.encode())) for k in chord.split("+")]
            if 0 in codes: sys.exit("no keycode for " + chord)
            for c in codes: xtst.XTestFakeKeyEvent(d, c, 1, 0)
            for c in reversed(codes): xtst.XTestFakeKeyEvent(d, c, 0, 0)
            x11.XFlush(d); time.sleep(0.3)
        """
        let result = try runTool("/usr/bin/python3", ["-c", script] + keys)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testMuteVolumeAndHelpKeys() async throws {
        try Services.requireDisplay()
        let reporter = RecordingReporter()
        let stage = Stage(configuration: StageConfiguration(
            sources: Array(TestMedia.angles.prefix(2)).map(MediaSource.init), headless: false, duration: 20,
            audio: .fakeSink), reporter: reporter)
        let run = Task { await stage.run() }
        let playing = await eventually(timeout: .seconds(10)) {
            let players = await stage.currentPlayers
            guard players.count == 2 else { return false }
            for p in players where await p.currentStatus.state != .playing { return false }
            return true
        }
        XCTAssertTrue(playing, "both views play in the window")
        let maybeWindow = await stage.gridWindow
        let window = try XCTUnwrap(maybeWindow)
        let players = await stage.currentPlayers
        let center = (x: window.width / 2, y: window.height / 2)

        try type(["m"], at: center)
        let muted = await eventually(timeout: .seconds(5)) { players.allSatisfy { (try? $0.audioLevel.muted) == true } }
        XCTAssertTrue(muted, "m muted every view; notes: \(reporter.notes)")
        // Each tile's tag (the label the window drew) says so.
        func tags() async -> [String] { players.indices.map { window.drawnTag(tile: $0) ?? "none" } }
        let tagged = await eventually(timeout: .seconds(5)) { await tags().allSatisfy { $0.hasSuffix("  muted") } }
        let texts = await tags()
        XCTAssertTrue(tagged, "tags: \(texts)")

        try type(["KP_Multiply"], at: center)
        let louder = await eventually(timeout: .seconds(5)) {
            players.allSatisfy { (try? $0.audioLevel.volume).map { abs($0 - 1.1) < 1e-6 } == true }
        }
        XCTAssertTrue(louder, "keypad * raised every view to 110 %; notes: \(reporter.notes)")

        try type(["Shift_L+slash"], at: center)
        let helped = await eventually(timeout: .seconds(5)) { reporter.notes.contains(StageHelp.text) }
        XCTAssertTrue(helped, "Shift+/ (?) printed the help; notes: \(reporter.notes)")
        // `/` alone is volume down, not help: back to 100 %.
        try type(["slash"], at: center)
        let back = await eventually(timeout: .seconds(5)) {
            players.allSatisfy { (try? $0.audioLevel.volume).map { abs($0 - 1.0) < 1e-6 } == true }
        }
        XCTAssertTrue(back, "/ lowered every view to 100 %; notes: \(reporter.notes)")
        XCTAssertEqual(reporter.notes.filter { $0 == StageHelp.text }.count, 1, "one help, from the ? key only")

        await stage.send(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0, "\(outcome.failures)")
    }
}
