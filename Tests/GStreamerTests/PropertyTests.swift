import GStreamer
import XCTest

/// Typed errors and typed property access (no pipeline needs to run).
final class PropertyTests: XCTestCase {
    override func setUp() {
        super.setUp()
        XCTAssertTrue(GStreamer.ensureInitialized())
    }

    func assertThrows<T>(_ expected: GStreamerError, _ body: @autoclosure () throws -> T,
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? GStreamerError, expected, "\(error)", file: file, line: line)
        }
    }

    // MARK: Elements and initialisation

    func testRuntimeVersionAndFactoryLookup() {
        XCTAssertTrue(GStreamer.version.hasPrefix("1.22"), GStreamer.version)
        XCTAssertTrue(GStreamer.hasElement("fakesink"))
        XCTAssertFalse(GStreamer.hasElement("no-such-element"))
    }

    func testMissingElementThrowsTypedError() {
        assertThrows(.missingElement(factory: "no-such-element"), try Element(factory: "no-such-element"))
        assertThrows(.missingElement(factory: "no-such-element"), try Pipeline(factory: "no-such-element"))
        XCTAssertEqual(GStreamerError.missingElement(factory: "x264enc").description,
                       "GStreamer element 'x264enc' is not installed (missing plugin)")
    }

    func testElementIdentity() throws {
        let sink = try Element(factory: "fakesink", name: "mysink")
        XCTAssertEqual(sink.name, "mysink")
        XCTAssertEqual(sink.factoryName, "fakesink")
        XCTAssertEqual(sink.typeName, "GstFakeSink")
        XCTAssertEqual(sink.currentState, .null)
        XCTAssertEqual(try sink.staticPad("sink").name, "sink")
        assertThrows(.noSuchPad(element: "mysink", pad: "src"), try sink.staticPad("src"))
    }

    func testPipelineConstructionErrors() throws {
        assertThrows(.notAPipeline("fakesink"), try Pipeline(factory: "fakesink"))
        assertThrows(.notAPipeline("fakesink"), try Pipeline.parseLaunch("fakesink"))
        XCTAssertThrowsError(try Pipeline.parseLaunch("videotestsrc ! no-such-element ! fakesink")) { error in
            guard case .parse(let description, let message)? = error as? GStreamerError else {
                return XCTFail("expected .parse, got \(error)")
            }
            XCTAssertEqual(description, "videotestsrc ! no-such-element ! fakesink")
            XCTAssertTrue(message.contains("no-such-element"), message)
        }
        XCTAssertThrowsError(try Bin.parse("queue ! ! fakesink")) { error in
            guard case .parse? = error as? GStreamerError else { return XCTFail("expected .parse, got \(error)") }
        }
        let playbin = try Pipeline(factory: "playbin3", name: "player")
        XCTAssertEqual(playbin.typeName, "GstPlayBin3")
        XCTAssertEqual(playbin.name, "player")
    }

    func testBinParseGhostsUnlinkedPadsAndFindsChildren() throws {
        let bin = try Bin.parse("queue name=q ! fakesink name=s")
        XCTAssertEqual(try bin.staticPad("sink").name, "sink", "the queue's sink pad is ghosted")
        XCTAssertEqual(bin.child(named: "s")?.factoryName, "fakesink")
        XCTAssertNil(bin.child(named: "nope"))
        let unghosted = try Bin.parse("queue ! fakesink", ghostUnlinkedPads: false)
        XCTAssertThrowsError(try unghosted.staticPad("sink"))

        let pipeline = try Pipeline(name: "outer")
        try pipeline.add(bin)
        XCTAssertEqual(pipeline.child(named: "q")?.name, "q", "child(named:) recurses into sub-bins")
    }

    func testLinkFailureIsTyped() throws {
        let pipeline = try Pipeline()
        let audio = try Element(factory: "audiotestsrc", name: "a")
        let video = try Element(factory: "videoconvert", name: "v")
        try pipeline.add(audio)
        try pipeline.add(video)
        assertThrows(.linkFailed(from: "a", to: "v"), try audio.link(video))
        // Adding an element that already has a parent fails too.
        let other = try Pipeline()
        assertThrows(.linkFailed(from: "a", to: other.name), try other.add(audio))
    }

    // MARK: Property errors

    func testMissingPropertyThrows() throws {
        let sink = try Element(factory: "fakesink", name: "s")
        XCTAssertFalse(sink.hasProperty("no-such-property"))
        assertThrows(.noSuchProperty(element: "s", property: "no-such-property"), try sink.set("no-such-property", true))
        assertThrows(.noSuchProperty(element: "s", property: "no-such-property"),
                     try sink.get("no-such-property", as: Bool.self))
        assertThrows(.noSuchProperty(element: "s", property: "no-such-property"),
                     try sink.set("no-such-property", fromString: "1"))
        assertThrows(.noSuchProperty(element: "s", property: "no-such-property"),
                     try sink.string(ofProperty: "no-such-property"))
        assertThrows(.noSuchProperty(element: "s", property: "no-such-property"),
                     try sink.propertyTypeName("no-such-property"))
    }

    func testTypeMismatchThrowsAndLeavesValueUnchanged() throws {
        let sink = try Element(factory: "fakesink", name: "s")
        try sink.set("sync", true)
        assertThrows(.propertyTypeMismatch(element: "s", property: "sync", expected: "Int", actual: "gboolean"),
                     try sink.set("sync", 0))
        assertThrows(.propertyTypeMismatch(element: "s", property: "sync", expected: "String", actual: "gboolean"),
                     try sink.set("sync", "false"))
        assertThrows(.propertyTypeMismatch(element: "s", property: "sync", expected: "Double", actual: "gboolean"),
                     try sink.set("sync", 0.0))
        assertThrows(.propertyTypeMismatch(element: "s", property: "sync", expected: "Int", actual: "gboolean"),
                     try sink.get("sync", as: Int.self))
        assertThrows(.propertyTypeMismatch(element: "s", property: "num-buffers", expected: "Bool", actual: "gint"),
                     try sink.set("num-buffers", true))
        XCTAssertEqual(try sink.get("sync", as: Bool.self), true, "a rejected set must not change the value")

        // Enums are not integers: they are set by nick through set(_:fromString:).
        let source = try Element(factory: "videotestsrc", name: "v")
        assertThrows(.propertyTypeMismatch(element: "v", property: "pattern", expected: "Int",
                                           actual: "GstVideoTestSrcPattern"),
                     try source.set("pattern", 1))
    }

    func testReadOnlyPropertyReadsButRefusesWrites() throws {
        let queue = try Element(factory: "queue", name: "q")
        XCTAssertEqual(try queue.get("current-level-buffers", as: Int.self), 0)
        assertThrows(.propertyNotWritable(element: "q", property: "current-level-buffers"),
                     try queue.set("current-level-buffers", 3))
        let sink = try Element(factory: "fakesink", name: "s")
        assertThrows(.propertyNotWritable(element: "s", property: "last-message"), try sink.set("last-message", "x"))
        // Writability is checked before the type.
        assertThrows(.propertyNotWritable(element: "s", property: "last-message"), try sink.set("last-message", 1))
    }

    func testIntegerOutOfRangeOfTheCTypeIsInvalid() throws {
        let sink = try Element(factory: "fakesink", name: "s")
        assertThrows(.invalidPropertyValue(element: "s", property: "num-buffers", value: "4294967296"),
                     try sink.set("num-buffers", 1 << 32))                    // gint
        assertThrows(.invalidPropertyValue(element: "s", property: "blocksize", value: "-1"),
                     try sink.set("blocksize", -1))                           // guint
        assertThrows(.invalidPropertyValue(element: "s", property: "max-bitrate", value: "-1"),
                     try sink.set("max-bitrate", -1))                         // guint64
        XCTAssertEqual(try sink.get("num-buffers", as: Int.self), -1, "unchanged default")
    }

    // MARK: Round trips

    func testBoolIntDoubleStringRoundTrips() throws {
        let sink = try Element(factory: "fakesink", name: "s")
        for value in [true, false, true] {
            try sink.set("sync", value)
            XCTAssertEqual(try sink.get("sync", as: Bool.self), value)
        }
        try sink.set("num-buffers", 42)                    // gint
        XCTAssertEqual(try sink.get("num-buffers", as: Int.self), 42)
        try sink.set("blocksize", 8192)                    // guint
        XCTAssertEqual(try sink.get("blocksize", as: Int.self), 8192)
        try sink.set("max-lateness", -1)                   // gint64
        XCTAssertEqual(try sink.get("max-lateness", as: Int.self), -1)
        try sink.set("max-lateness", 5_000_000_000)
        XCTAssertEqual(try sink.get("max-lateness", as: Int.self), 5_000_000_000)
        try sink.set("max-bitrate", 1 << 40)               // guint64
        XCTAssertEqual(try sink.get("max-bitrate", as: Int.self), 1 << 40)

        let tone = try Element(factory: "audiotestsrc")
        try tone.set("freq", 1234.5)                       // gdouble
        XCTAssertEqual(try tone.get("freq", as: Double.self), 1234.5)
        let panorama = try Element(factory: "audiopanorama")
        try panorama.set("panorama", -0.25)                // gfloat
        XCTAssertEqual(try panorama.get("panorama", as: Double.self), -0.25)
        XCTAssertEqual(try panorama.propertyTypeName("panorama"), "gfloat")

        let file = try Element(factory: "filesrc")
        try file.set("location", "/tmp/some file ü.mp4")
        XCTAssertEqual(try file.get("location", as: String.self), "/tmp/some file ü.mp4")
        XCTAssertEqual(try file.string(ofProperty: "location"), "/tmp/some file ü.mp4")
        try sink.set("name", "renamed")
        XCTAssertEqual(sink.name, "renamed")
        XCTAssertEqual(try sink.get("name", as: String.self), "renamed")
    }

    func testCapsPropertyRoundTrip() throws {
        let filter = try Element(factory: "capsfilter", name: "f")
        XCTAssertEqual(try filter.propertyTypeName("caps"), "GstCaps")
        let caps = try Caps("video/x-raw, format=(string)I420, width=(int)320, height=(int)240, framerate=(fraction)30/1")
        try filter.set("caps", caps)
        let back = try filter.get("caps", as: Caps.self)
        XCTAssertEqual(back.description, caps.description)
        XCTAssertEqual(back.count, 1)
        let structure = try XCTUnwrap(back.structure(at: 0))
        XCTAssertEqual(structure.name, "video/x-raw")
        XCTAssertEqual(structure.int("width"), 320)
        XCTAssertEqual(structure.int("height"), 240)
        XCTAssertEqual(structure.string("format"), "I420")
        XCTAssertEqual(structure.fields["framerate"], .fraction(30, 1))
        XCTAssertEqual(structure.double("framerate"), 30)
        XCTAssertNil(back.structure(at: 1))

        try filter.set("caps", fromString: "audio/x-raw,rate=48000,channels=2")
        let audio = try filter.get("caps", as: Caps.self)
        XCTAssertEqual(audio.structure()?.name, "audio/x-raw")
        XCTAssertEqual(audio.structure()?.int("rate"), 48000)
        XCTAssertTrue(try filter.string(ofProperty: "caps").contains("audio/x-raw"))
        assertThrows(.propertyTypeMismatch(element: "f", property: "caps", expected: "String", actual: "GstCaps"),
                     try filter.set("caps", "video/x-raw"))
    }

    func testElementPropertyRoundTrip() throws {
        let playbin = try Pipeline(factory: "playbin3")
        let sink = try Element(factory: "fakesink", name: "videosink")
        try playbin.set("video-sink", sink)
        let back = try playbin.get("video-sink", as: Element.self)
        XCTAssertEqual(back.gobject, sink.gobject)
        XCTAssertEqual(back.name, "videosink")
    }

    func testSetFromStringAndStringOfProperty() throws {
        let source = try Element(factory: "videotestsrc", name: "v")
        XCTAssertEqual(try source.propertyTypeName("pattern"), "GstVideoTestSrcPattern")
        XCTAssertEqual(try source.string(ofProperty: "pattern"), "smpte")
        try source.set("pattern", fromString: "ball")
        XCTAssertEqual(try source.string(ofProperty: "pattern"), "ball")
        try source.set("pattern", fromString: "18")                   // by value works too (18 = ball)
        XCTAssertEqual(try source.string(ofProperty: "pattern"), "ball")
        try source.set("pattern", fromString: "snow")
        XCTAssertEqual(try source.string(ofProperty: "pattern"), "snow")
        try source.set("is-live", fromString: "true")
        XCTAssertEqual(try source.get("is-live", as: Bool.self), true)
        try source.set("num-buffers", fromString: "17")
        XCTAssertEqual(try source.get("num-buffers", as: Int.self), 17)
        XCTAssertEqual(try source.string(ofProperty: "num-buffers"), "17")

        assertThrows(.invalidPropertyValue(element: "v", property: "pattern", value: "not-a-pattern"),
                     try source.set("pattern", fromString: "not-a-pattern"))
        assertThrows(.invalidPropertyValue(element: "v", property: "is-live", value: "perhaps"),
                     try source.set("is-live", fromString: "perhaps"))
        assertThrows(.invalidPropertyValue(element: "v", property: "num-buffers", value: "12abc"),
                     try source.set("num-buffers", fromString: "12abc"))
        XCTAssertEqual(try source.string(ofProperty: "pattern"), "snow", "a rejected value must not change it")

        let playbin = try Pipeline(factory: "playbin3", name: "p")
        try playbin.set("flags", fromString: "video+audio")
        // GStreamer serialises flags by value *name* (enums by nick); both forms deserialise.
        let flags = try playbin.string(ofProperty: "flags")
        XCTAssertEqual(flags, "Render the video stream+Render the audio stream")
        try playbin.set("flags", fromString: "audio")
        XCTAssertEqual(try playbin.string(ofProperty: "flags"), "Render the audio stream")
        try playbin.set("flags", fromString: flags)
        XCTAssertEqual(try playbin.string(ofProperty: "flags"), flags)
        assertThrows(.invalidPropertyValue(element: "p", property: "flags", value: "video+nonsense"),
                     try playbin.set("flags", fromString: "video+nonsense"))
    }
}
