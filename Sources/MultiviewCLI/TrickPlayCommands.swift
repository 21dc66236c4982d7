import ArgumentParser
import Foundation
import Multiview
import TrickPlay

/// `multiview preview URL --at T --output F.png`: a scrub preview from the HLS I-frame playlist.
struct PreviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Write a scrub preview (the I-frame at or before --at) of an HLS view, from its I-frame playlist.",
        discussion: "Uses the smallest EXT-X-I-FRAME-STREAM-INF rung; fetches one byte range and decodes it alone."
    )

    @Argument(help: "The HLS multi-variant playlist (http(s) or file URL).")
    var master: String

    // Unconditional: `--at -1` is a value out of range (one line saying so), not a missing value.
    @Option(name: .long, parsing: .unconditional, help: "Media time in seconds.")
    var at: Double

    @Option(name: .long, help: "Output image: .png, or .ppm.")
    var output: String

    @Option(name: .long, help: "Scale to WIDTHxHEIGHT (default: the rung's size).")
    var size: String?

    @Option(name: .long, help: "View name used in messages.")
    var view: String = "1"

    func validate() throws {
        // The format follows the extension: `x.jpg` wrote PNG data before.
        let suffix = URL(fileURLWithPath: output).pathExtension.lowercased()
        guard ["png", "ppm"].contains(suffix) else {
            throw ValidationError("--output \(output): the image format follows the extension: .png or .ppm")
        }
        do {
            _ = try StageLimits.mediaTime(at, input: "--at \(StageLimits.format(at))")
            if let size { do { _ = try StageLimits.tile(size) } catch { throw ValidationError("--size \(error)") } }
        } catch let error as StageInputError {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        var width: Int?, height: Int?
        if let size, let parsed = try? StageLimits.tile(size) { width = parsed.width; height = parsed.height }
        let player = TrickPlayer(view: view, master: masterURL(master))
        do {
            let frame = try await player.preview(at: at, width: width, height: height)
            let data = try await frame.encoded(forPath: output, view: view)
            try PreviewFile.write(data, to: output)
            print("preview: view \(view) at \(at) s -> \(output) (\(frame.width)x\(frame.height))")
        } catch let error as TrickPlayViewError {
            TerminalReporter().error("\(error)")
            throw ExitCode(1)
        }
    }
}

/// `multiview trickplay URL --rate 8 --from 0 --duration 2`: runs I-frame trick play and prints each I-frame
/// shown and the position to resume at.
struct TrickPlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trickplay",
        abstract: "Fast-forward / rewind an HLS view through its I-frame playlist (8× / −8×), printing the I-frames.",
        discussion: "Prints one line per I-frame shown ('iframe 6.0 s (clock 6.3 s)'), then 'resume at T s'."
    )

    @Argument(help: "The HLS multi-variant playlist (http(s) or file URL).")
    var master: String

    @Option(name: .long, parsing: .unconditional, help: "Trick-play rate: 8 (fast-forward) or -8 (rewind); any non-zero value works.")
    var rate: Double = 8

    @Option(name: .long, parsing: .unconditional, help: "Start media time in seconds.")
    var from: Double = 0

    @Option(name: .long, help: "Wall-clock seconds to run (it also stops at the start or the end).")
    var duration: Double = 2

    @Option(name: .long, help: "The view's height in pixels: picks the I-frame rung (default: the largest).")
    var height: Int?

    @Option(name: .long, help: "View name used in messages.")
    var view: String = "1"

    /// Trick-play rates: any non-zero speed up to 64× either way (one I-frame every 2 s of media is then shown
    /// every 31 ms of wall time; faster only skips more of them).
    static let rates: ClosedRange<Double> = 0.125...64

    func validate() throws {
        do {
            guard rate.isFinite else { throw StageInputError.notFinite(input: "--rate \(rate)", allowed: "±0.125…64") }
            guard TrickPlayCommand.rates.contains(abs(rate)) else {
                throw StageInputError.outOfRange(input: "--rate \(rate)", allowed: "±0.125…64 (negative: rewind)")
            }
            _ = try StageLimits.mediaTime(from, input: "--from \(from)")
            _ = try StageLimits.duration(duration, input: "--duration \(duration)")
            if let height, !StageLimits.tileHeights.contains(height) {
                throw StageInputError.outOfRange(input: "--height \(height)",
                                                 allowed: "\(StageLimits.tileHeights.lowerBound)…\(StageLimits.tileHeights.upperBound)")
            }
        } catch let error as StageInputError {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let player = TrickPlayer(view: view, master: masterURL(master), viewHeight: height)
        let (events, continuation) = AsyncStream<TrickPlayEvent>.makeStream()
        do {
            try await player.play(rate: rate, from: from) { continuation.yield($0) }
        } catch {
            TerminalReporter().error("\(error)")
            throw ExitCode(1)
        }
        let timer = Task { try? await Task.sleep(for: .seconds(duration)); continuation.finish() }
        var failed = false
        for await event in events {
            switch event {
            case .frame(let frame):
                print(String(format: "iframe %.1f s (clock %.1f s) %dx%d", frame.mediaTime, frame.clock,
                             frame.picture.width, frame.picture.height))
            case .reachedEnd:
                continuation.finish()
            case .failed(let error):
                TerminalReporter().error("\(error)")
                failed = true
                continuation.finish()
            }
        }
        timer.cancel()
        let position = await player.stop() ?? from
        print(String(format: "resume at %.1f s", position))
        if failed { throw ExitCode(1) }
    }
}

/// The multi-variant playlist argument of `preview` and `trickplay` as a URL: an http(s) or file URL as given,
/// anything without a scheme as a file path.
private func masterURL(_ text: String) -> URL {
    URL(string: text).flatMap { $0.scheme == nil ? nil : $0 } ?? URL(fileURLWithPath: text)
}

/// Writes a preview image; a folder that is missing or a file that cannot be written is one line in the user's terms
/// (Foundation's own error would print its domain and code).
enum PreviewFile {
    static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            TerminalReporter().error("--output \(path): no folder \(folder)")
            throw ExitCode(1)
        }
        do {
            try data.write(to: url)
        } catch {
            TerminalReporter().error("--output \(path): cannot write the file there (permissions or a full disk)")
            throw ExitCode(1)
        }
    }
}
