import Foundation
@testable import SyncAnalysis

/// Clock time where synthetic runs start (1000 s, like a monotonic clock some time after boot).
let baseClockNs: UInt64 = 1_000_000_000_000

/// Media time of frame `index` at 30 fps as a container stores it: WebM in whole milliseconds (33 ms, 67 ms…),
/// MP4 exactly (33 333 333 ns…).
func pts(_ index: Int, webm: Bool) -> UInt64 {
    webm ? UInt64((Double(index) * 1000 / 30).rounded()) * 1_000_000 : UInt64(index) * 1_000_000_000 / 30
}

/// Frame records of one view playing `indices` in order, as a sink would render them: render clock =
/// `startClockNs` + (pts − pts(first index)) / rate + `offsetNs`. The sink renders at the container's PTS, so
/// WebM frames are rendered with the container's millisecond quantization.
func renders(view: Int, indices: [Int], webm: Bool = false, rate: Double = 1, offsetNs: Int64 = 0,
             startClockNs: UInt64 = baseClockNs, phase: Int = 0, item: String = "a",
             startIndex: Int? = nil) -> [FrameRecord] {
    let origin = Double(pts(startIndex ?? indices.first ?? 0, webm: webm))
    return indices.map { index in
        let media = pts(index, webm: webm)
        let delta = (Double(media) - origin) / rate
        let render = UInt64(Int64(startClockNs) + Int64(delta.rounded()) + offsetNs)
        return FrameRecord(view: view, mediaTimeNs: media, renderClockNs: render, rate: rate, phase: phase, item: item)
    }
}

/// Views 1 and 2 rendering the same `indices` from `startClockNs`, view 2 `offsetNs` after view 1 (the skew).
func twoViews(indices: [Int], offsetNs: Int64, startClockNs: UInt64 = baseClockNs, phase: Int = 0) -> [FrameRecord] {
    renders(view: 1, indices: indices, startClockNs: startClockNs, phase: phase)
        + renders(view: 2, indices: indices, offsetNs: offsetNs, startClockNs: startClockNs, phase: phase)
}

func phase(_ index: Int, _ name: String, from: UInt64, to: UInt64) -> PhaseRecord {
    PhaseRecord(index: index, name: name, commandClockNs: from, endClockNs: to)
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("SyncAnalysisTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
