import Foundation

/// A PNG file as pixels, decoded by Python's zlib and the PNG row filters written out below — independently of
/// GStreamer's pngenc/pngdec and of libpng, so a test of our PNG output does not check it with the same code.
public struct DecodedPNG: Sendable {
    public var width: Int
    public var height: Int
    /// PNG colour type (0 grey, 2 RGB, 6 RGBA).
    public var colourType: Int
    /// Chunk types in file order (every chunk's CRC was checked).
    public var chunkTypes: [String]
    /// width × height × 3 bytes, row-major from the top-left (grey repeated, alpha dropped).
    public var rgb: [UInt8]

    /// The pixel at x, y as (r, g, b).
    public func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * width + x) * 3
        return Array(rgb[i..<(i + 3)])
    }
}

/// Decodes the PNG file at `path` (8-bit, not interlaced, grey/RGB/RGBA); throws on anything else or a bad file.
public func decodePNG(atPath path: String) throws -> DecodedPNG {
    let scratch = try TemporaryDirectory(prefix: "png-decode")
    let output = scratch.path("pixels.rgb")
    let result = try runTool(["python3", "-c", pngDecoderScript, path, output])
    guard result.status == 0 else { throw TestFailure("cannot decode \(path) as PNG: \(result.output)") }
    let fields = result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
    guard fields.count >= 3, let width = Int(fields[0]), let height = Int(fields[1]), let colour = Int(fields[2]) else {
        throw TestFailure("PNG decoder answered '\(result.stdout)'")
    }
    let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    guard rgb.count == width * height * 3 else { throw TestFailure("decoded \(rgb.count) bytes for \(width)x\(height)") }
    return DecodedPNG(width: width, height: height, colourType: colour, chunkTypes: Array(fields.dropFirst(3)), rgb: rgb)
}

/// argv: PNG path, output path (raw RGB). Prints "width height colourType chunkType…".
private let pngDecoderScript = #"""
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
if data[:8] != b'\x89PNG\r\n\x1a\n': sys.exit('no PNG signature')
pos, idat, ihdr, types = 8, b'', None, []
while pos < len(data):
    n, = struct.unpack('>I', data[pos:pos + 4])
    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
    crc, = struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])
    if zlib.crc32(kind + body) & 0xffffffff != crc: sys.exit('bad CRC in ' + kind.decode())
    types.append(kind.decode())
    if kind == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
    elif kind == b'IDAT': idat += body
    elif kind == b'IEND': break
    pos += 12 + n
if ihdr is None or types[-1] != 'IEND': sys.exit('no IHDR or no IEND')
w, h, depth, colour, _, _, interlace = ihdr
if depth != 8 or interlace != 0 or colour not in (0, 2, 6): sys.exit('unsupported: depth %d colour %d interlace %d' % (depth, colour, interlace))
bpp = {0: 1, 2: 3, 6: 4}[colour]
raw, stride = zlib.decompress(idat), w * bpp
if len(raw) != h * (stride + 1): sys.exit('image data is %d bytes, not %d' % (len(raw), h * (stride + 1)))
out, prev = bytearray(), bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif f != 0: sys.exit('bad filter type %d' % f)
    prev = line
    for x in range(w):
        px = line[x * bpp:(x + 1) * bpp]
        out += bytes([px[0]] * 3) if colour == 0 else bytes(px[:3])
open(sys.argv[2], 'wb').write(out)
print(w, h, colour, ' '.join(types))
"""#
