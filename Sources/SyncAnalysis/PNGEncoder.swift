import Foundation

/// An 8-bit RGB colour.
public struct RGB: Sendable, Equatable, Hashable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) { self.r = r; self.g = g; self.b = b }

    public static let white = RGB(255, 255, 255)
    public static let black = RGB(0, 0, 0)
}

/// A width × height RGB raster, row-major from the top-left, 3 bytes per pixel. Drawing outside is ignored.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// width · height · 3 bytes.
    public private(set) var pixels: [UInt8]

    public init(width: Int, height: Int, background: RGB = .white) {
        precondition(width > 0 && height > 0, "image must not be empty")
        self.width = width; self.height = height
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: pixels.count, by: 3) {
            pixels[i] = background.r; pixels[i + 1] = background.g; pixels[i + 2] = background.b
        }
        self.pixels = pixels
    }

    public subscript(x: Int, y: Int) -> RGB {
        get {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel out of bounds")
            let i = (y * width + x) * 3
            return RGB(pixels[i], pixels[i + 1], pixels[i + 2])
        }
        set { set(x, y, newValue) }
    }

    public mutating func set(_ x: Int, _ y: Int, _ color: RGB) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        let i = (y * width + x) * 3
        pixels[i] = color.r; pixels[i + 1] = color.g; pixels[i + 2] = color.b
    }

    /// Fills the rectangle x0..<x1, y0..<y1 (clipped).
    public mutating func fill(x0: Int, y0: Int, x1: Int, y1: Int, _ color: RGB) {
        let xs = max(0, x0), xe = min(width, x1), ys = max(0, y0), ye = min(height, y1)
        guard xs < xe, ys < ye else { return }
        for y in ys..<ye { for x in xs..<xe { set(x, y, color) } }
    }

    public mutating func horizontalLine(y: Int, from x0: Int, to x1: Int, _ color: RGB) {
        fill(x0: min(x0, x1), y0: y, x1: max(x0, x1) + 1, y1: y + 1, color)
    }

    public mutating func verticalLine(x: Int, from y0: Int, to y1: Int, _ color: RGB) {
        fill(x0: x, y0: min(y0, y1), x1: x + 1, y1: max(y0, y1) + 1, color)
    }
}

/// Writes PNG files without any library: colour type 2 (RGB), 8 bits per channel, no interlace, filter type 0 on
/// every row, and the image data as a zlib stream made of *stored* (uncompressed) deflate blocks.
public enum PNGEncoder {
    /// The 8-byte PNG file signature.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Largest payload of one stored deflate block.
    public static let maxStoredBlock = 65_535
    /// Largest data size of one IDAT chunk written (the zlib stream is split over several IDAT chunks).
    public static let maxIDATChunk = 1 << 18

    /// The PNG file of an image.
    public static func encode(_ image: RGBImage) -> Data {
        var raw = [UInt8]()
        raw.reserveCapacity(image.height * (1 + image.width * 3))
        let rowBytes = image.width * 3
        for y in 0..<image.height {
            raw.append(0)   // filter type None
            raw.append(contentsOf: image.pixels[(y * rowBytes)..<((y + 1) * rowBytes)])
        }

        var ihdr = [UInt8]()
        appendBigEndian(UInt32(image.width), to: &ihdr)
        appendBigEndian(UInt32(image.height), to: &ihdr)
        ihdr += [8, 2, 0, 0, 0]   // bit depth 8, colour type RGB, deflate, adaptive filtering, no interlace

        var file = signature
        appendChunk("IHDR", ihdr, to: &file)
        let stream = zlibStored(raw)
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + maxIDATChunk)
            appendChunk("IDAT", Array(stream[start..<end]), to: &file)
            start = end
        }
        appendChunk("IEND", [], to: &file)
        return Data(file)
    }

    /// A zlib stream (RFC 1950) of `data` in stored deflate blocks (RFC 1951, BTYPE 00) of at most 65 535 bytes,
    /// ending with the Adler-32 of `data`.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]   // CM 8, 32 KiB window; FCHECK makes 0x7801 a multiple of 31
        out.reserveCapacity(data.count + data.count / maxStoredBlock * 5 + 16)
        var start = 0
        repeat {
            let end = min(data.count, start + maxStoredBlock)
            let length = UInt16(end - start)
            out.append(end == data.count ? 1 : 0)   // BFINAL, BTYPE 00
            out.append(UInt8(length & 0xFF)); out.append(UInt8(length >> 8))
            out.append(UInt8(~length & 0xFF)); out.append(UInt8(~length >> 8))
            out.append(contentsOf: data[start..<end])
            start = end
        } while start < data.count
        appendBigEndian(adler32(data), to: &out)
        return out
    }

    /// Adler-32 (RFC 1950).
    public static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var i = 0
        while i < data.count {
            let end = min(data.count, i + 5552)   // largest run without overflowing 32 bits
            while i < end { a += UInt32(data[i]); b += a; i += 1 }
            a %= 65_521; b %= 65_521
        }
        return b << 16 | a
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// CRC-32 (ISO 3309, as PNG uses it) of `data`.
    public static func crc32<S: Sequence>(_ data: S) -> UInt32 where S.Element == UInt8 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in data { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        appendBigEndian(UInt32(data.count), to: &file)
        file += typeBytes
        file += data
        appendBigEndian(crc32(typeBytes + data), to: &file)
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
