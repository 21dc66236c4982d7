import Foundation
import GStreamer
import TestSupport
import XCTest

/// PNG files made by GStreamer's pngenc (`PNGEncoding`), read back by an independent decoder (TestSupport's
/// `decodePNG`: Python's zlib): every pixel must come back. No pipeline of ours, no daemon.
final class PNGEncodingTests: XCTestCase {
    /// A width × height picture whose every pixel differs from its neighbours.
    private func picture(width: Int, height: Int) -> [UInt8] {
        var rgb: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                rgb += [UInt8((x * 37 + y) & 255), UInt8((y * 51 + x * 3) & 255), UInt8((x * y * 13 + 7) & 255)]
            }
        }
        return rgb
    }

    private func roundTrip(width: Int, height: Int) async throws {
        let scratch = try TemporaryDirectory(prefix: "png-encoding")
        let rgb = picture(width: width, height: height)
        let data = try await PNGEncoding.encode(rgb: rgb, width: width, height: height)
        try data.write(to: scratch.url.appendingPathComponent("p.png"))
        let png = try decodePNG(atPath: scratch.path("p.png"))
        XCTAssertEqual(png.width, width)
        XCTAssertEqual(png.height, height)
        XCTAssertEqual(png.colourType, 2, "RGB in, RGB out")
        XCTAssertEqual(png.chunkTypes.first, "IHDR")
        XCTAssertEqual(png.chunkTypes.last, "IEND")
        XCTAssertEqual(png.rgb, rgb, "\(width)x\(height): the pixels come back unchanged")
    }

    /// Odd widths: GStreamer pads RGB rows to 4 bytes, our pictures are packed.
    func testOddSizedPicturesComeBackPixelForPixel() async throws {
        try await roundTrip(width: 7, height: 5)
        try await roundTrip(width: 1, height: 1)
        try await roundTrip(width: 101, height: 67)
    }

    func testAPictureOfTheWrongSizeIsATypedError() async {
        do {
            _ = try await PNGEncoding.encode(rgb: [1, 2, 3, 4], width: 2, height: 1)
            XCTFail("4 bytes are not a 2x1 RGB picture")
        } catch {
            XCTAssertEqual(error, .badPicture(width: 2, height: 1, bytes: 4))
            XCTAssertEqual(error.description, "not a 2x1 RGB picture (4 bytes, expected 6)")
        }
    }
}
