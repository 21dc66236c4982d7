import Foundation

/// An 8-bit RGB colour.
public struct RGB: Sendable, Equatable, Hashable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) { self.r = r; self.g = g; self.b = b }

    public static let white = RGB(255, 255, 255)
    public static let black = RGB(0, 0, 0)
}

/// A width × height RGB raster, row-major from the top-left, 3 bytes per pixel. Drawing outside is ignored.
/// (Pure: SyncBench encodes it as PNG with GStreamer's pngenc.)
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
