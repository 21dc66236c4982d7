import HLS

extension MasterPlaylist {
    /// The variants as the allocator's rungs, ascending by bandwidth.
    public var rungs: [Rung] { variants.map { Rung(bandwidth: $0.bandwidth, width: $0.width, height: $0.height) } }
}
