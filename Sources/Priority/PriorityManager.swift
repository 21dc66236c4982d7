import Foundation
import GStreamer
import HLS
import Multiview
import Synchronization

/// What hlsdemux2 is told for one view. `connectionBitrate` 0 leaves the demuxer's own measurement in charge.
public struct DemuxerCaps: Sendable, Equatable {
    public var maxBitrate: Int
    public var connectionBitrate: Int
    /// How far ahead the demuxer downloads (its `high-watermark-time`, default 30 s): shorter means the link is
    /// shared continuously and a new cap shows within seconds instead of after 30 s of already-fetched media.
    public var bufferAhead: ClockTime
}

/// The hlsdemux2 of one view and the caps it must have. The demuxer appears on a streaming thread
/// (playbin3's "deep-element-added") and must get the caps right there, before it picks its first variant; the
/// manager changes the caps from its actor. The Mutex owns both.
final class DemuxerSlot: Sendable {
    private struct State {
        var demuxer: Element?
        var caps: DemuxerCaps?
    }
    private let state = Mutex(State())

    func adopt(_ demuxer: Element) {
        state.withLock { s in
            s.demuxer = demuxer
            if let caps = s.caps { Self.apply(caps, to: demuxer) }
        }
    }

    func release(_ element: Element) {
        state.withLock { s in if s.demuxer?.gobject == element.gobject { s.demuxer = nil } }
    }

    func setCaps(_ caps: DemuxerCaps?) {
        state.withLock { s in
            guard s.caps != caps else { return }
            s.caps = caps
            if let caps, let demuxer = s.demuxer { Self.apply(caps, to: demuxer) }
        }
    }

    var demuxer: Element? { state.withLock { $0.demuxer } }

    private static func apply(_ caps: DemuxerCaps, to demuxer: Element) {
        try? demuxer.set("max-bitrate", caps.maxBitrate)
        try? demuxer.set("connection-bitrate", caps.connectionBitrate)
        try? demuxer.set("high-watermark-time", Int(caps.bufferAhead.nanoseconds))
    }
}

/// One view as the manager reports it.
public struct PriorityViewReport: Sendable, Equatable {
    public var view: ViewIdentity
    public var priority: NetworkResourcePriority
    /// The variant being shown (from the decoded video's size), nil before the first frame or for non-HLS views.
    public var currentRung: Rung?
    /// Index of `currentRung` among the view's rungs (0 = lowest), and how many there are.
    public var currentRungIndex: Int?
    public var rungCount: Int
    /// The rung the allocator chose (the demuxer's cap).
    public var allocated: Rung?
    /// hlsdemux2's `current-bandwidth` (bits/s), 0 when unknown.
    public var measuredBandwidth: Int

    /// "high 1920x1080 5.5M" (the tile tag and the status line).
    public var label: String {
        var text = priority.rawValue
        if let currentRung { text += " \(currentRung)" } else if rungCount > 0 { text += " …" }
        if let allocated, allocated != currentRung { text += " (cap \(Rung.megabits(allocated.bandwidth)))" }
        return text
    }
}

/// Applies `networkResourcePriority` to a set of players sharing one link: a `BandwidthAllocator` decides a rung
/// per HLS view; the manager caps each view's hlsdemux2 accordingly and re-runs the allocation when a view is
/// added or removed, a priority, tile or the budget changes, or the measured bandwidth moves by more than 15 %.
///
/// Threading: the actor owns the views, priorities and the last allocation. The demuxer of each view arrives on
/// a streaming thread and is handed to that view's `DemuxerSlot` (a Mutex), which applies the caps at once.
/// A polling task on the actor (every `pollInterval`) reads `current-bandwidth` and the shown variant.
public actor PriorityManager {
    private final class Entry {
        let player: Player
        var source: MediaSource?
        var priority: NetworkResourcePriority
        var tileWidth: Int?
        var tileHeight: Int?
        var rungs: [Rung] = []
        let slot = DemuxerSlot()
        var connections: [SignalConnection] = []
        var currentRung: Rung?
        var measured = 0
        /// Last position seen playing (for `recover`).
        var lastPosition: ClockTime?
        var recovering = false
        init(player: Player, priority: NetworkResourcePriority, tileWidth: Int?, tileHeight: Int?) {
            self.player = player; self.priority = priority; self.tileWidth = tileWidth; self.tileHeight = tileHeight
        }
    }

    /// The user's budget (bits/s, `--bandwidth`); nil: use what the demuxers measure.
    public private(set) var budget: Int?
    public let allocator: BandwidthAllocator
    /// With a user budget, also pin each demuxer's `connection-bitrate` so it takes the allocated rung from the
    /// first fragment on instead of probing (see DemuxerPropertyTests). Without a budget the
    /// demuxers keep measuring (connection-bitrate 0) and only `max-bitrate` caps them.
    public let pinConnectionBitrate: Bool
    public let bufferAhead: ClockTime
    /// false: allocate and report, but leave every hlsdemux2 as GStreamer made it (plain competing players, the
    /// bench's baseline).
    public let enforce: Bool
    private var entries: [Int: Entry] = [:]
    public private(set) var lastAllocation: Allocation?
    private var allocatedAvailable: Int?
    private var poller: Task<Void, Never>?
    private let pollInterval: Duration

    public init(budget: Int? = nil, allocator: BandwidthAllocator = BandwidthAllocator(), pinConnectionBitrate: Bool = true,
                bufferAhead: ClockTime = .seconds(4), enforce: Bool = true, pollInterval: Duration = .milliseconds(500)) {
        self.enforce = enforce
        self.budget = budget; self.allocator = allocator; self.pinConnectionBitrate = pinConnectionBitrate
        self.bufferAhead = bufferAhead; self.pollInterval = pollInterval
    }

    deinit { poller?.cancel() }

    /// Follows a player: call before it loads its media (so the demuxer is caught when created). Non-HLS views
    /// are followed too but get no cap (they have no rungs).
    public func attach(_ player: Player, source: MediaSource, priority: NetworkResourcePriority = .default,
                       tileWidth: Int? = nil, tileHeight: Int? = nil) async {
        let entry = Entry(player: player, priority: priority, tileWidth: tileWidth, tileHeight: tileHeight)
        let slot = entry.slot
        // Runs on the thread that adds the element (a streaming thread): adopt hlsdemux2 and cap it right away.
        if let watch = try? player.watchElements(
            added: { element in if element.factoryName == "hlsdemux2" { slot.adopt(element) } },
            removed: { element in if element.factoryName == "hlsdemux2" { slot.release(element) } }) {
            entry.connections.append(contentsOf: watch)
        }
        entry.source = source
        entries[player.view.number] = entry
        if Self.looksLikeHLS(source.uri) {
            // The ladder comes from the master playlist itself (hlsdemux2 does not expose its variants). A view
            // whose playlist cannot be read gets no rungs and so no cap; its own failure says why.
            if let playlist = try? await MasterPlaylist.load(source.uri) {
                entry.rungs = playlist.rungs
            }
        }
        reallocate()
        startPolling()
    }

    /// Stops following a view (it failed, or was removed); the others share its bandwidth.
    public func detach(view number: Int) {
        entries[number]?.connections = []
        entries[number]?.slot.setCaps(nil)
        entries[number] = nil
        reallocate()
    }

    public func setPriority(_ priority: NetworkResourcePriority, forView number: Int) {
        guard let entry = entries[number], entry.priority != priority else { return }
        entry.priority = priority
        reallocate()
    }

    public func priority(ofView number: Int) -> NetworkResourcePriority? { entries[number]?.priority }

    public func setTile(width: Int?, height: Int?, forView number: Int) {
        guard let entry = entries[number] else { return }
        entry.tileWidth = width; entry.tileHeight = height
        reallocate()
    }

    public func setBudget(_ bitsPerSecond: Int?) {
        budget = bitsPerSecond
        reallocate()
    }

    /// Every followed view, by view number.
    public func reports() -> [PriorityViewReport] {
        entries.keys.sorted().compactMap { report(forView: $0) }
    }

    public func report(forView number: Int) -> PriorityViewReport? {
        guard let entry = entries[number] else { return nil }
        let allocated = lastAllocation?.views[number]?.rung
        let index = entry.currentRung.flatMap { current in entry.rungs.firstIndex(of: current) }
        return PriorityViewReport(view: entry.player.view, priority: entry.priority, currentRung: entry.currentRung,
                                  currentRungIndex: index, rungCount: entry.rungs.count, allocated: allocated,
                                  measuredBandwidth: entry.measured)
    }

    /// A failed HLS view's cause in words ("variant v360/index.m3u8: HTTP 404 not found"), nil when the
    /// playlists look fine or the view is not HLS. hlsdemux2's own error says little (see `HLSDiagnosis`).
    public func explainFailure(ofView number: Int) async -> String? {
        guard let uri = entries[number]?.source?.uri, Self.looksLikeHLS(uri) else { return nil }
        return await HLSDiagnosis.explain(uri)
    }

    /// Brings a view whose server went away back: polls its master playlist every second (for up to `patience`);
    /// once the server answers, reloads the view, seeks to where it was and plays. hlsdemux2 itself gives up on
    /// a VOD stream after a few failed fragment downloads ("Couldn't download fragments"), so the retry is ours.
    /// Returns whether the view plays again.
    public func recover(view number: Int, patience: Duration = .seconds(120)) async -> Bool {
        guard let entry = entries[number], !entry.recovering, let source = entry.source, Self.looksLikeHLS(source.uri)
        else { return false }
        entry.recovering = true
        defer { entry.recovering = false }
        let deadline = ContinuousClock.now + patience
        var playlist: MasterPlaylist?
        while ContinuousClock.now < deadline {
            playlist = try? await MasterPlaylist.load(source.uri, timeout: 2)
            if playlist != nil { break }
            try? await Task.sleep(for: .seconds(1))
        }
        guard let playlist, entries[number] === entry else { return false }
        if entry.rungs != playlist.rungs {
            // The server was down when the view was attached (or the ladder changed): allocate with the real one.
            entry.rungs = playlist.rungs
            reallocate()
        }
        let player = entry.player
        do {
            try await player.load(source)
            try await player.preroll(timeout: .seconds(30))
            if let position = entry.lastPosition { try await player.seek(to: position, timeout: .seconds(30)) }
            try await player.play(timeout: .seconds(30))
            return true
        } catch {
            return false
        }
    }

    /// The demuxer of a view, once playbin3 made one (for tests of the property behaviour).
    public func demuxer(ofView number: Int) -> Element? { entries[number]?.slot.demuxer }

    // MARK: Internals

    static func looksLikeHLS(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        return (lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://"))
            && (lower.contains(".m3u8"))
    }

    /// The link estimate without a user budget: the sum of what the demuxers measure. Each measures the rate of
    /// its own fragment downloads; when they download at the same time each sees its share, so the sum is the
    /// link; when they do not, the sum overestimates — which only loosens the caps: each demuxer still picks no
    /// variant above its own measurement × bandwidth-target-ratio (connection-bitrate stays 0 without a budget).
    /// (The maximum instead kept every view on its floor: four capped views downloading together each measure a
    /// quarter of the link, the allocator caps them to floors, and the estimate never rises again.)
    private var measuredAvailable: Int? {
        let sum = entries.values.map(\.measured).reduce(0, +)
        return sum > 0 ? sum : nil
    }

    private func reallocate() {
        let available = budget ?? measuredAvailable
        let demands = entries.map { number, entry in
            ViewDemand(id: number, priority: entry.priority, rungs: entry.rungs, tileWidth: entry.tileWidth,
                       tileHeight: entry.tileHeight)
        }
        let allocation = allocator.allocate(available: available, views: demands)
        lastAllocation = allocation
        allocatedAvailable = available
        for (number, entry) in entries {
            guard enforce, let chosen = allocation.views[number] else { entry.slot.setCaps(nil); continue }
            // A fixed connection-bitrate is compared with the variants as it is (not × bandwidth-target-ratio, see
            // DemuxerPropertyTests), so the chosen rung's own bandwidth selects exactly that rung.
            let pin = pinConnectionBitrate && budget != nil
            entry.slot.setCaps(DemuxerCaps(maxBitrate: chosen.maxBitrate, connectionBitrate: pin ? chosen.maxBitrate : 0,
                                           bufferAhead: bufferAhead))
        }
    }

    private func startPolling() {
        guard poller == nil else { return }
        let interval = pollInterval
        poller = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                await self?.poll()
            }
        }
    }

    /// Reads each demuxer's measured bandwidth and each view's shown variant; re-allocates when the measured
    /// link moved by more than 15 % (only without a user budget).
    private func poll() {
        for entry in entries.values {
            if let demuxer = entry.slot.demuxer, let measured = try? demuxer.get("current-bandwidth", as: Int.self) {
                entry.measured = measured
            }
            entry.currentRung = Self.shownRung(entry)
            if let position = entry.player.queryPosition(), position > .zero, entry.player.pipelineState == .playing {
                entry.lastPosition = position
            }
        }
        if budget == nil, let now = measuredAvailable {
            let before = allocatedAvailable ?? 0
            if before == 0 || abs(Double(now - before)) / Double(before) > 0.15 { reallocate() }
        }
    }

    /// The rung whose resolution matches the caps reaching the video sink.
    private static func shownRung(_ entry: Entry) -> Rung? {
        guard !entry.rungs.isEmpty,
              let caps = entry.player.videoSinkCaps(), let s = caps.structure(),
              let width = s.int("width"), let height = s.int("height") else { return nil }
        return entry.rungs.last { $0.width == width && $0.height == height }
    }
}
