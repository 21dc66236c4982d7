import Foundation
import TestSupport
import XCTest

/// The `multiview preview` and `multiview trickplay` subcommands, run as the built binary against the server.
final class TrickPlayCLITests: XCTestCase {
    private static let multiview = repoRoot.appendingPathComponent(".build/debug/multiview").path

    private func run(_ arguments: [String]) throws -> ToolResult {
        guard FileManager.default.isExecutableFile(atPath: Self.multiview) else {
            throw TestFailure("\(Self.multiview) is not built (run swift build)")
        }
        return try runTool(Self.multiview, arguments)
    }

    func testPreviewWritesAPNGAndRewindPrintsIFramesBackwards() throws {
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let master = server.uri("angle4/master.m3u8")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("preview-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }

        let preview = try run(["preview", master, "--at", "7", "--output", output.path, "--size", "320x180"])
        XCTAssertEqual(preview.status, 0, preview.stderr)
        XCTAssertTrue(preview.stdout.contains("(320x180)"), preview.stdout)
        // The same preview as PPM (raw pixels): the PNG, decoded independently, holds exactly those pixels.
        let ppmOutput = output.deletingPathExtension().appendingPathExtension("ppm")
        defer { try? FileManager.default.removeItem(at: ppmOutput) }
        let ppmRun = try run(["preview", master, "--at", "7", "--output", ppmOutput.path, "--size", "320x180"])
        XCTAssertEqual(ppmRun.status, 0, ppmRun.stderr)
        let ppm = try Data(contentsOf: ppmOutput)
        let header = Data("P6\n320 180\n255\n".utf8)
        XCTAssertEqual(ppm.prefix(header.count), header)
        let png = try decodePNG(atPath: output.path)
        XCTAssertEqual([png.width, png.height], [320, 180])
        XCTAssertEqual(png.rgb, [UInt8](ppm.dropFirst(header.count)), "the PNG holds the decoded I-frame's pixels")
        XCTAssertGreaterThan(Set(png.rgb).count, 16, "a picture, not a blank")

        let rewind = try run(["trickplay", master, "--rate", "-8", "--from", "10", "--duration", "5", "--height", "360"])
        XCTAssertEqual(rewind.status, 0, rewind.stderr)
        let times = rewind.stdout.split(separator: "\n").filter { $0.hasPrefix("iframe ") }
            .compactMap { Double($0.split(separator: " ")[1]) }
        XCTAssertEqual(times.last, 0, rewind.stdout)
        XCTAssertGreaterThanOrEqual(times.count, 3, rewind.stdout)
        XCTAssertEqual(times, times.sorted(by: >), "rewind shows I-frames backwards: \(rewind.stdout)")
        XCTAssertTrue(rewind.stdout.contains("resume at 0.0 s"), rewind.stdout)

        let missing = try run(["preview", server.uri("angle4/missing.m3u8"), "--at", "1",
                               "--output", output.path, "--view", "overhead"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") },
                       ["error: view overhead: trick play: cannot download \(server.uri("angle4/missing.m3u8")): HTTP 404"])
    }
}
