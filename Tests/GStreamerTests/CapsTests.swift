import GStreamer
import XCTest

/// `Caps` parsing and `Structure`'s typed field values (what the player reads a stream's size, rate and channels
/// from). Needs `gst_init` only: no element, no pipeline.
final class CapsTests: XCTestCase {
    override func setUp() {
        super.setUp()
        XCTAssertTrue(GStreamer.ensureInitialized())
    }

    func testCapsParsing() throws {
        let two = try Caps("video/x-raw, width=(int)640; audio/x-raw, channels=(int)2")
        XCTAssertEqual(two.count, 2)
        XCTAssertEqual(two.structure(at: 0)?.name, "video/x-raw")
        XCTAssertEqual(two.structure(at: 1)?.name, "audio/x-raw")
        XCTAssertEqual(two.structure(at: 1)?.int("channels"), 2)
        XCTAssertNil(two.structure(at: 2))
        XCTAssertThrowsError(try Caps("video/x-raw, width=(int)")) { error in
            XCTAssertEqual(error as? GStreamerError, .invalidCaps("video/x-raw, width=(int)"))
        }
    }

    func testFieldValuesAreTyped() throws {
        let caps = try Caps("video/x-h264, width=(int)1920, height=(int)1080, framerate=(fraction)30000/1001, " +
                            "interlaced=(boolean)false, profile=(string)high, bitrate=(uint)5500000, gain=(double)0.5, " +
                            "offset=(gint64)-3, size=(guint64)9000000000")
        let s = try XCTUnwrap(caps.structure())
        XCTAssertEqual(s.name, "video/x-h264")
        XCTAssertEqual(s.fields["width"], .int(1920))
        XCTAssertEqual(s.fields["framerate"], .fraction(30000, 1001))
        XCTAssertEqual(s.fields["interlaced"], .bool(false))
        XCTAssertEqual(s.fields["profile"], .string("high"))
        XCTAssertEqual(s.fields["bitrate"], .uint(5_500_000))
        XCTAssertEqual(s.fields["gain"], .double(0.5))
        XCTAssertEqual(s.fields["offset"], .int(-3))
        XCTAssertEqual(s.fields["size"], .uint(9_000_000_000))
        XCTAssertEqual(s.fields.count, 9)
    }

    func testAccessorsConvertWhereItMakesSense() throws {
        let s = try XCTUnwrap(try Caps("audio/x-raw, rate=(int)48000, channels=(uint)2, framerate=(fraction)25/2, " +
                                       "zero=(fraction)0/1, format=(string)S16LE").structure())
        XCTAssertEqual(s.int("channels"), 2, "an unsigned field reads as an Int")
        XCTAssertEqual(s.double("rate"), 48000, "an integer field reads as a Double")
        XCTAssertEqual(s.double("framerate"), 12.5)
        XCTAssertEqual(s.double("zero"), 0)
        XCTAssertNil(s.int("format"), "a string is no number")
        XCTAssertNil(s.double("format"))
        XCTAssertNil(s.string("rate"), "a number is no string")
        XCTAssertNil(s.int("missing"))
        XCTAssertEqual(s.string("format"), "S16LE")
    }

    func testOtherTypesKeepGStreamersSerialisedForm() throws {
        let s = try XCTUnwrap(try Caps("video/x-raw, width=(int)[ 16, 4096 ], format=(string){ I420, NV12 }").structure())
        guard case .other(let range)? = s.fields["width"] else { return XCTFail("a range is \(String(describing: s.fields["width"]))") }
        XCTAssertTrue(range.contains("16") && range.contains("4096"), range)
        guard case .other(let list)? = s.fields["format"] else { return XCTFail("a list is \(String(describing: s.fields["format"]))") }
        XCTAssertTrue(list.contains("I420") && list.contains("NV12"), list)
        XCTAssertNil(s.int("width"), "a range is no single number")
    }

    func testTextForms() throws {
        let caps = try Caps("audio/x-raw,rate=48000,channels=2")
        XCTAssertTrue(caps.description.hasPrefix("audio/x-raw"), caps.description)
        XCTAssertTrue(caps.description.contains("rate=(int)48000"), caps.description)
        let s = try XCTUnwrap(caps.structure())
        XCTAssertEqual(s.description, s.serialized)
        XCTAssertTrue(s.serialized.contains("channels=(int)2"), s.serialized)
        XCTAssertEqual(try Caps(caps.description).structure(), s, "the text parses back to the same structure")
        let made = Structure(name: "x/y", fields: ["n": .int(1)])
        XCTAssertEqual(made.description, "x/y")
        XCTAssertEqual(made.int("n"), 1)
    }
}
