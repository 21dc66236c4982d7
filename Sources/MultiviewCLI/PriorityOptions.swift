import ArgumentParser
import Foundation
import Multiview
import Priority

/// `play`'s networkResourcePriority options: `--priority N=high` (repeatable, N = 1-based view number) and
/// `--bandwidth 6M` (the budget the HLS views share). With HLS views and neither option, every view is `default`
/// and the budget is the manager's estimate of the shared link (`SharedLinkEstimator`).
struct PriorityOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("View priority on a shared link, N=low|default|high (N = view number from 1; repeatable).",
                                            valueName: "N=level"))
    var priority: [String] = []

    @Option(name: .long, help: ArgumentHelp("Bandwidth budget shared by the HLS views, bits/s with k/M/G (e.g. 6M); without it the shared link is estimated.",
                                            valueName: "rate"))
    var bandwidth: String?

    @Flag(name: .long, help: "Report each HLS view's rung but leave its demuxer uncapped (plain competing players).")
    var noPriorityCaps = false

    func validate() throws {
        _ = try parsedPriorities()
        if let bandwidth, Self.parseRate(bandwidth) == nil {
            throw ValidationError("--bandwidth must look like 6M, 800k or 6000000 (bits per second)")
        }
    }

    func parsedPriorities() throws -> [Int: NetworkResourcePriority] {
        var result: [Int: NetworkResourcePriority] = [:]
        for item in priority {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let n = Int(parts[0]), n >= 1,
                  let level = NetworkResourcePriority(rawValue: parts[1].lowercased()) else {
                throw ValidationError("--priority must look like 2=high (view number = low|default|high), not '\(item)'")
            }
            result[n] = level
        }
        return result
    }

    /// "6M" → 6_000_000; nil when malformed, below 1 bit/s or beyond `Int`.
    static func parseRate(_ text: String) -> Int? {
        let scales: [Character: Double] = ["k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.last, let s = scales[last] { scale = s; number = text.dropLast() }
        // At least 1 bit/s (`0.4` is no rate), and within Int: `1e30G` once trapped converting to Int.
        guard let value = Double(number), case let bps = value * scale, bps.isFinite, bps >= 1,
              bps < Double(Int.max) else { return nil }
        return Int(bps)
    }

    /// The stage observer when any view is HLS or an option was given; nil otherwise.
    func makeObserver(media: [String]) throws -> PriorityStageObserver? {
        let anyHLS = media.contains { $0.lowercased().contains(".m3u8") }
        guard anyHLS || !priority.isEmpty || bandwidth != nil else { return nil }
        // Decoding capacity: one 1080p decode per core (rule 5 of the allocator) — more pixels than that would
        // only be dropped frames on this kind of machine.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let allocator = BandwidthAllocator(maxDecodedPixels: BandwidthAllocator.decodedPixels(cores: cores))
        let manager = PriorityManager(budget: bandwidth.flatMap(Self.parseRate), allocator: allocator,
                                      enforce: !noPriorityCaps)
        return PriorityStageObserver(manager: manager, initialPriorities: try parsedPriorities())
    }
}
