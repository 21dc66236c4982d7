import Foundation
import GStreamer
import HLS
import Multiview
import Synchronization

/// Applies `networkResourcePriority` to a set of players sharing one link: a `BandwidthAllocator` decides a rung
/// per HLS view from the link figure (the user's budget, or else the `SharedLinkEstimator`'s estimate of the
/// link from the bytes all views receive); a `CapPlanner` turns that into demuxer caps (pins, caps, low views
/// dropping first); the manager sets them on each view's hlsdemux2 and re-runs all this when a view is added or
/// removed, a priority, tile or the budget changes, the estimate becomes confident or moves by more than 10 %.
///
/// Threading: the actor owns the views, priorities, the estimator, the planner and the last allocation. The
/// demuxer of each view arrives on a streaming thread and is handed to that view's `DemuxerSlot` (a Mutex),
/// which applies the caps at once; downloaded chunks are stamped on the demuxers' threads into the
/// `DownloadMeter` (a Mutex). A polling task on the actor (every `pollInterval`) drains the meter into the
/// estimator and reads `current-bandwidth` and the shown variant.
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
        var downloads: DownloadWatch?
        var currentRung: Rung?
        var measured = 0
        /// Last position seen playing (for `bringBack` of a view without video).
        var lastPosition: ClockTime?
        /// Where the view's video stopped (for `bringBack`).
        let shown = ShownPosition()
        /// Where a reload in progress resumes (kept across attempts until one plays).
        var resumeAt: ClockTime?
        var recovering = false
        init(player: Player, priority: NetworkResourcePriority, tileWidth: Int?, tileHeight: Int?) {
            self.player = player; self.priority = priority; self.tileWidth = tileWidth; self.tileHeight = tileHeight
        }
    }

    /// The user's budget (bits/s, `--bandwidth`); nil: use what the demuxers measure.
    public private(set) var budget: Int?
    public let allocator: BandwidthAllocator
    public let bufferAhead: ClockTime
    /// false: allocate and report, but leave every hlsdemux2 as GStreamer made it (plain competing players, the
    /// bench's baseline).
    public let enforce: Bool
    private var entries: [Int: Entry] = [:]
    public private(set) var lastAllocation: Allocation?
    /// The figure the last allocation shared out (given, estimated, or measuring).
    public private(set) var link: LinkFigure = .measuring(nil)
    /// What the shared-link estimator believes now (published and measured figures, confidence), for reports and
    /// test failure messages.
    public var linkEstimate: SharedLinkEstimator.Estimate? { estimator.estimate }
    private var allocatedLink: LinkFigure?
    private var estimator: SharedLinkEstimator
    private var planner: CapPlanner
    private let meter = DownloadMeter()
    private var poller: Task<Void, Never>?
    private let pollInterval: Duration

    public init(budget: Int? = nil, allocator: BandwidthAllocator = BandwidthAllocator(),
                estimator: SharedLinkEstimator.Configuration = .init(), planner: CapPlanner = CapPlanner(),
                bufferAhead: ClockTime = .seconds(4), enforce: Bool = true, pollInterval: Duration = .milliseconds(500)) {
        self.enforce = enforce
        self.budget = budget; self.allocator = allocator
        self.estimator = SharedLinkEstimator(configuration: estimator); self.planner = planner
        self.bufferAhead = bufferAhead; self.pollInterval = pollInterval
        self.link = budget.map { .given($0) } ?? .measuring(nil)
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
        entry.shown.watch(player)
        // Every downloaded chunk, stamped where it arrives, for the shared-link estimate.
        let meter = self.meter, number = player.view.number
        entry.downloads = try? player.watchDownloadedBytes { stream, bytes in
            meter.record(stream: DownloadMeter.key(view: number, stream: stream), bytes: bytes)
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
        entries[number]?.downloads = nil
        entries[number]?.slot.setCaps(nil)
        entries[number] = nil
        planner.forget(view: number)
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
        link = linkFigure()
        reallocate()
    }

    /// Every followed view, by view number.
    public func reports() -> [PriorityViewReport] {
        entries.keys.sorted().compactMap { report(forView: $0) }
    }

    public func report(forView number: Int) -> PriorityViewReport? {
        guard let entry = entries[number] else { return nil }
        let allocated = planner.enforced[number] ?? lastAllocation?.views[number]?.rung
        let index = entry.currentRung.flatMap { current in entry.rungs.firstIndex(of: current) }
        let firstHLS = entries.filter { !$0.value.rungs.isEmpty }.keys.min()
        return PriorityViewReport(view: entry.player.view, priority: entry.priority, currentRung: entry.currentRung,
                                  currentRungIndex: index, rungCount: entry.rungs.count, allocated: allocated,
                                  measuredBandwidth: entry.measured, link: number == firstHLS ? link : nil)
    }

    /// A failed HLS view's cause in words ("variant v360/index.m3u8: HTTP 404 not found"), nil when the
    /// playlists look fine or the view is not HLS. hlsdemux2's own error says little (see `HLSDiagnosis`).
    public func explainFailure(ofView number: Int) async -> String? {
        guard let uri = entries[number]?.source?.uri, Self.looksLikeHLS(uri) else { return nil }
        return await HLSDiagnosis.explain(uri)
    }

    /// Whether `startRecovery(view:)` is bringing view N back now (its status says RETRYING, not FAILED).
    public func isRecovering(view number: Int) -> Bool { entries[number]?.recovering ?? false }

    /// Starts bringing back a view whose server went away (see `bringBack`), unless it is not HLS or is being
    /// brought back already. It counts as recovering from this call on (`isRecovering`), not from when a task
    /// gets to run: the stage asks right after, to know whether the view is done. Returns whether it started.
    @discardableResult
    public func startRecovery(view number: Int, patience: Duration = .seconds(120)) -> Bool {
        guard let entry = entries[number], !entry.recovering, let source = entry.source, Self.looksLikeHLS(source.uri)
        else { return false }
        entry.recovering = true
        Task { await bringBack(entry, number: number, source: source, patience: patience) }
        return true
    }

    /// Brings a view back: polls its master playlist every second; once the server answers, reloads the view and
    /// plays it again (`Player.resumeAfterReload`: alone, from where its video stopped; coordinated, at its group's
    /// time). A reload that fails (the server went again, or answered the playlist but not yet the segments) goes
    /// back to polling, until `patience` runs out. hlsdemux2 itself gives up on a VOD stream after a few failed
    /// fragment downloads ("Couldn't download fragments"), so the retry is ours. Returns whether the view plays.
    @discardableResult
    private func bringBack(_ entry: Entry, number: Int, source: MediaSource, patience: Duration) async -> Bool {
        defer { entry.recovering = false }
        let deadline = ContinuousClock.now + patience
        // Where its video stopped (exact to a frame, see `ShownPosition`; the last polled position without video),
        // read once: the reload starts a new segment, and a failed attempt is retried from the same place.
        let resume = entry.resumeAt ?? entry.shown.latest ?? entry.lastPosition
        entry.resumeAt = resume
        while ContinuousClock.now < deadline {
            guard entries[number] === entry else { return false }
            guard let playlist = try? await MasterPlaylist.load(source.uri, timeout: 2) else {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            guard entries[number] === entry else { return false }
            if entry.rungs != playlist.rungs {
                // The server was down when the view was attached (or the ladder changed): allocate with the real one.
                entry.rungs = playlist.rungs
                reallocate()
            }
            let player = entry.player
            do {
                try await player.load(source)
                try await player.preroll(timeout: .seconds(30))
                // Coordinated, the view rejoins the group's time; its own seek and play would be group commands
                // (every view moved to where this one was, and waiting for it) and left it waiting for good.
                try await player.resumeAfterReload(from: Self.resumable(resume, duration: await player.duration),
                                                   timeout: .seconds(30))
                entry.resumeAt = nil
                return true
            } catch {
                // A pipeline that cannot be reused is not retried; anything else is tried again.
                if let error = error as? PlayerError, case .pipelineStuck = error.cause { return false }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return false
    }

    /// Where a reloaded view resumes: where it stopped, but at least `endMargin` before the end. A view that failed
    /// at its end (the server down when a `--loop` run took it back to the start) stopped on its last frame, and
    /// hlsdemux2 refused a seek there ("seek to 0:00:23.953 refused", every attempt): it then retried for its whole
    /// patience. From just before the end, it ends (or loops) as it would have.
    static func resumable(_ position: ClockTime?, duration: ClockTime?) -> ClockTime? {
        guard let position, let duration, position + endMargin > duration else { return position }
        return duration > endMargin ? duration - endMargin : .zero
    }

    static let endMargin = ClockTime.seconds(1)

    /// The demuxer of a view, once playbin3 made one (for tests of the property behaviour).
    public func demuxer(ofView number: Int) -> Element? { entries[number]?.slot.demuxer }

    // MARK: Internals

    static func looksLikeHLS(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        return (lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://"))
            && (lower.contains(".m3u8"))
    }

    /// The estimator's current figure (or the user's budget).
    private func linkFigure() -> LinkFigure {
        if let budget { return .given(budget) }
        guard let estimate = estimator.estimate else { return .measuring(nil) }
        return estimate.isConfident ? .estimated(estimate.bitsPerSecond) : .measuring(estimate.bitsPerSecond)
    }

    private func reallocate() {
        let available = link.bitsPerSecond
        let demands = entries.map { number, entry in
            ViewDemand(id: number, priority: entry.priority, rungs: entry.rungs, tileWidth: entry.tileWidth,
                       tileHeight: entry.tileHeight)
        }
        let allocation = allocator.allocate(available: available, views: demands)
        lastAllocation = allocation
        allocatedLink = link
        let caps = planner.plan(link: link, allocation: allocation, priorities: entries.mapValues(\.priority),
                                floors: entries.compactMapValues { $0.rungs.min { $0.bandwidth < $1.bandwidth } },
                                shown: entries.compactMapValues(\.currentRung), now: meter.now)
        for (number, entry) in entries {
            guard enforce, let planned = caps[number] else { entry.slot.setCaps(nil); continue }
            // A fixed connection-bitrate is compared with the variants as it is (not × bandwidth-target-ratio, see
            // DemuxerPropertyTests), so a pinned rung's own bandwidth selects exactly that rung.
            entry.slot.setCaps(DemuxerCaps(maxBitrate: planned.maxBitrate, connectionBitrate: planned.connectionBitrate,
                                           bufferAhead: bufferAhead))
        }
    }

    /// Whether the link figure moved enough since the last allocation to allocate again: it became known or
    /// stopped being known, or changed by more than 10 %, or a high view's drop is waiting for its grace.
    private func linkMovedEnough() -> Bool {
        if planner.dropWantedSince != nil { return true }
        guard let before = allocatedLink else { return true }
        switch (before, link) {
        case (.estimated(let a), .estimated(let b)), (.given(let a), .given(let b)):
            return a == 0 || abs(Double(b - a)) / Double(a) > 0.10
        case (.measuring, .measuring):
            return false
        default:
            return true
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

    /// Feeds the downloaded chunks to the estimator, reads each demuxer's measured bandwidth and each view's
    /// shown variant; re-allocates when the link figure moved enough (`linkMovedEnough`).
    private func poll() {
        for arrival in meter.drain() {
            estimator.received(bytes: arrival.bytes, stream: arrival.stream, at: arrival.time)
        }
        estimator.update(now: meter.now)
        link = linkFigure()
        for entry in entries.values {
            if let demuxer = entry.slot.demuxer, let measured = try? demuxer.get("current-bandwidth", as: Int.self) {
                entry.measured = measured
            }
            entry.currentRung = Self.shownRung(entry)
            if let position = entry.player.queryPosition(), position > .zero, entry.player.pipelineState == .playing {
                entry.lastPosition = position
                entry.shown.calibrate(position: position)
            }
        }
        if linkMovedEnough() { reallocate() }
    }

    /// The rung whose resolution matches the caps reaching the video sink.
    private static func shownRung(_ entry: Entry) -> Rung? {
        guard !entry.rungs.isEmpty,
              let caps = entry.player.videoSinkCaps(), let s = caps.structure(),
              let width = s.int("width"), let height = s.int("height") else { return nil }
        return entry.rungs.last { $0.width == width && $0.height == height }
    }
}
