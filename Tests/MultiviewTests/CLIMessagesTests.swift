import Foundation
import TestSupport
import XCTest

/// Issue 16's "Messages" rows that are one line each: the built `multiview` given bad input answers in the user's
/// terms (what was wrong, what is allowed), and no internal text reaches the terminal — Swift enum dumps
/// (`seekTo(3.0)`, `priority(view: 1, …)`, `Optional(2)`), Foundation error domains and codes.
final class CLIMessagesTests: XCTestCase {
    private var binary: String { TestMedia.root.appendingPathComponent(".build/debug/multiview").path }

    /// Swift's description of an enum case with a payload, `Optional(`, NSError text, GStreamer's own words
    /// (error quarks, element and type names, pipeline paths).
    private static let internals = try! NSRegularExpression(
        pattern: #"\b[a-z][A-Za-z]*\((view:|Optional|-?[0-9][0-9.]*\))|Optional\(|Domain|Code=[0-9]|\bgst[-_]|Gst[A-Z]|quark|playbin|decodebin|souphttpsrc|hlsdemux|GStreamer-WARNING|Internal data stream"#)

    private func leaks(_ text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return Self.internals.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }

    func testTheLeakPatternCatchesWhatIssue16Saw() {
        for leaked in ["'priority(view: 1, level: \"high\")' needs HLS views", "'preferAudio(Optional(2))' needs",
                       "seekTo(3.0) done", "rate(2.0) done", "The file couldn’t be saved. (NSCocoaErrorDomain error 4.)",
                       "Error Domain=NSCocoaErrorDomain Code=4"] {
            XCTAssertFalse(leaks(leaked).isEmpty, leaked)
        }
        for leaked in ["No error message for domain gst-uri-error-quark.", "/GstPlayBin3:playbin3-0/GstURIDecodeBin3",
                       "view 1 (x.mp4): Internal data stream error."] {
            XCTAssertFalse(leaks(leaked).isEmpty, leaked)
        }
        XCTAssertTrue(leaks("error: rate 100: out of range; allowed: 0.125…8 (1/8× to 8×; faster: ff N on HLS views)").isEmpty)
        XCTAssertTrue(leaks("view 2 (x.mkv): missing GStreamer element: avdec_h264").isEmpty)
    }

    /// Issue 16's rows that were wrong at 18d4f33, one bad invocation each: exit status, the one line expected (a
    /// pattern), and nothing internal anywhere in the output.
    func testBadInvocationsAreOneLineInTheUsersTerms() throws {
        try HLSFixture.ensure()
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("mv-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let emptyList = FileManager.default.temporaryDirectory.appendingPathComponent("mv-none-\(UUID().uuidString).m3u")
        try "#EXTM3U\n".write(to: emptyList, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: emptyList) }
        let play = ["play", "--headless", "--no-audio", "--duration", "3"]
        let cases: [(arguments: [String], status: Int32, pattern: String)] = [
            // It said only "Internal data stream error.".
            (play + ["http://127.0.0.1:9/x.mp4"], 1,
             #"^error: view 1 \(x\.mp4\): network error: connection refused by 127\.0\.0\.1:9 \(no server listening there\)$"#),
            // It printed a GStreamer warning, then "view 1 (): no decoder installed for FOO protocol source".
            (play + ["foo://x"], 1, #"^error: view 1 \(foo://x\): unknown scheme 'foo' in foo://x: give a file path, or a file://, http://"#),
            // It said "No error message for domain gst-uri-error-quark." after a GLib warning.
            (play + [HLSFixture.root + "/angle1/master.m3u8"], 1,
             #"^error: view 1 \(master\.m3u8\): .*master\.m3u8 is an HLS playlist on disk: HLS plays over http\(s\) only"#),
            // `info` said "No URI handler implemented for "foo"." and "Internal data stream error.".
            (["info", "foo://x"], 1, #"^foo://x: unknown scheme 'foo' in foo://x"#),
            (["info", "http://127.0.0.1:9/x.mp4"], 1, #"^http://127\.0\.0\.1:9/x\.mp4: connection refused by 127\.0\.0\.1:9"#),
            (["play", "--headless", "--priority", "9=high", TestMedia.angles[0], TestMedia.angles[1]], 64,
             #"^error: --priority 9=high: no view 9; views are 1…2$"#),
            (["play", "--headless", empty.path], 64, #"^error: .*mv-empty-.*: no media files in this folder \(looked for mp4, mkv"#),
            (["play", "--headless", emptyList.path], 64, #"^error: .*mv-none-.*\.m3u: the playlist names no media$"#),
        ]
        for (arguments, status, pattern) in cases {
            let result = try runTool(binary, arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            let regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
            let range = NSRange(result.stderr.startIndex..., in: result.stderr)
            XCTAssertNotNil(regex.firstMatch(in: result.stderr, range: range), "\(arguments): no /\(pattern)/ in:\n\(result.stderr)")
            XCTAssertEqual(leaks(result.stdout + result.stderr), [], "\(arguments): \(result.stdout)\n\(result.stderr)")
        }
    }

    func testBadStdinCommandsOnAFileViewAreOneLineInTheUsersTerms() throws {
        // Sent at once, as a user typing ahead of the first frame would; then every answer is waited for (the good
        // commands answer once the view has prerolled, which a busy machine can take seconds for) before `q`.
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--duration", "60", TestMedia.angle1])
        defer { app.kill() }
        app.send("priority 1 high\naudio 2\nexternal none\nseek 0:01\n+1\nrate 2\ndance\nvolume 1 500\n\u{1B}[A")
        let expected = [
            "error: 'priority 1 high' needs HLS views (http://…/master.m3u8) or --priority/--bandwidth",
            "error: 'audio 2' needs audio routing (--audio-route / --external-display)",
            "error: 'external none' needs audio routing (--audio-route / --external-display)",
            "note: seek 1: done", "note: +1: done", "note: rate 2: done",
            "error: unknown command 'dance'; type help for the commands",
            "error: volume 1 500: out of range; allowed: 0…150 (percent)",
            // An arrow key typed on stdin: quoted in caret notation, not sent to the terminal raw.
            "error: unknown command '^[[A'; type help for the commands",
        ]
        let answered = app.wait { app in
            let lines = Set(app.stderr.split(separator: "\n").map(String.init))
            return expected.allSatisfy(lines.contains)
        }
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        let stderr = app.stderr, stdout = app.stdout
        let lines = stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(answered, "not every command answered within 30 s; status lines and stderr:\n\(stdout.suffix(3000))\n\(stderr)")
        for line in expected { XCTAssertTrue(lines.contains(line), "missing '\(line)' in:\n\(stderr)") }
        XCTAssertEqual(leaks(stdout + stderr), [], stderr)
        XCTAssertFalse(stderr.contains("\u{1B}"), "no raw escape byte reaches the terminal")
    }

    /// `multiview` alone printed "Missing expected argument '<media> ...'" above the help: now the help alone.
    func testMultiviewAloneIsTheHelp() throws {
        let result = try runTool(binary, [])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("OVERVIEW: Synchronized multiview"), result.stdout)
        XCTAssertTrue(result.stdout.contains("play (default)"), result.stdout)
        XCTAssertFalse((result.stdout + result.stderr).contains("Missing"), result.stdout + result.stderr)
    }

    /// `play --help` wrapped mid-sentence (hard breaks in the text, rewrapped by the parser): in 100 columns every
    /// paragraph of the description now fills its lines, a short line only at a paragraph's end.
    func testPlayHelpReadsWellIn100Columns() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "100"
        let result = try runTool(binary, ["play", "--help"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.components(separatedBy: "\n")
        let description = Array(lines.prefix { !$0.hasPrefix("USAGE:") })
        XCTAssertGreaterThan(description.count, 8, result.stdout)
        for (index, line) in description.enumerated() {
            XCTAssertLessThanOrEqual(line.count, 100, line)
            let next = index + 1 < description.count ? description[index + 1] : ""
            if !line.isEmpty && !next.isEmpty { XCTAssertGreaterThan(line.count, 60, "a break inside a paragraph: '\(line)'") }
        }
    }

    /// `routes --non-mixable nosuch` listed the sinks and said nothing about the name no sink has.
    func testRoutesNamesAnUnknownNonMixableSink() throws {
        let result = try runTool(binary, ["routes", "--non-mixable", "nosuch"])
        XCTAssertEqual(result.status, 64, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("Audio routes:"), result.stdout)
        XCTAssertEqual(result.stderr, "error: --non-mixable nosuch: no such sink (the sink names are listed above)\n")
    }

    func testBadOptionsNameTheAllowedRange() throws {
        try HLSFixture.ensure()
        let master = "file://" + HLSFixture.root + "/angle1/master.m3u8"
        let cases: [([String], Int32, String)] = [
            (["play", "--headless", "--tile", "0x0", TestMedia.angle1], 64,
             "error: --tile 0x0: out of range; allowed: WIDTHxHEIGHT with width 16…7680 and height 16…4320"),
            (["play", "--headless", "--tile", "100000x100000", TestMedia.angle1], 64,
             "error: --tile 100000x100000: out of range; allowed: WIDTHxHEIGHT with width 16…7680 and height 16…4320"),
            // Silently accepted before.
            (["play", "--headless", "--audio-lang", "zz", TestMedia.angle1], 64,
             "error: --audio-lang zz: expected a language code (ISO 639), e.g. en, fr, deu"),
            (["play", "--headless", "--subtitles", "xx", TestMedia.angle1], 64,
             "error: --subtitles xx: expected a language code (ISO 639), e.g. en, fr, deu"),
            // It said "Missing value for '--at <at>'".
            (["preview", "--at", "-1", "--output", "/tmp/x.png", master], 64, "--at -1: out of range; allowed: 0…604800 s"),
            // It wrote PNG data to x.jpg.
            (["preview", "--at", "3", "--output", "/tmp/x.jpg", master], 64,
             "--output /tmp/x.jpg: the image format follows the extension: .png or .ppm"),
            // It said "NSCocoaErrorDomain Code=4".
            (["preview", "--at", "3", "--output", "/nonexistent/folder/x.png", master], 1,
             "error: --output /nonexistent/folder/x.png: no folder /nonexistent/folder"),
        ]
        for (arguments, status, message) in cases {
            let result = try runTool(binary, arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(leaks(result.stdout + result.stderr), [], "\(arguments): \(result.stderr)")
        }
    }
}
