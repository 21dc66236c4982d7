import Priority
import XCTest

/// The allocator's rules with fake ladders (no GStreamer): the ladder of Scripts/make-hls, rounded.
final class BandwidthAllocatorTests: XCTestCase {
    static let ladder = [
        Rung(bandwidth: 700_000, width: 640, height: 360),
        Rung(bandwidth: 1_300_000, width: 960, height: 540),
        Rung(bandwidth: 2_850_000, width: 1280, height: 720),
        Rung(bandwidth: 5_470_000, width: 1920, height: 1080),
    ]

    func views(_ priorities: [NetworkResourcePriority], tile: (Int, Int)? = nil) -> [ViewDemand] {
        priorities.enumerated().map {
            ViewDemand(id: $0.offset + 1, priority: $0.element, rungs: Self.ladder, tileWidth: tile?.0, tileHeight: tile?.1)
        }
    }

    func testHighViewGetsTopRungBeforeLowViewsLeaveTheirFloor() {
        // 8.5 Mbit/s (budget 7.65): four top rungs would need 21.9 Mbit/s; high top + three floors = 7.57.
        let allocation = BandwidthAllocator().allocate(available: 8_500_000, views: views([.high, .low, .low, .low]))
        XCTAssertEqual(allocation.views[1]?.rungIndex, 3)
        XCTAssertEqual(allocation.views[1]?.maxBitrate, 5_470_000)
        for id in 2...4 { XCTAssertEqual(allocation.views[id]?.rungIndex, 0, "view \(id)") }
        XCTAssertLessThanOrEqual(allocation.total, 7_650_000)
        XCTAssertFalse(allocation.oversubscribed)
        // 10 Mbit/s (budget 9): the 1.43 M left after the high view lifts two low views one step each.
        let more = BandwidthAllocator().allocate(available: 10_000_000, views: views([.high, .low, .low, .low]))
        XCTAssertEqual(more.views[1]?.rungIndex, 3)
        XCTAssertEqual((2...4).map { more.views[$0]!.rungIndex }, [1, 1, 0])
        XCTAssertLessThanOrEqual(more.total, 9_000_000)
    }

    func testSwappingPrioritiesSwapsRungs() {
        let allocator = BandwidthAllocator()
        let before = allocator.allocate(available: 10_000_000, views: views([.high, .low, .low, .low]))
        let after = allocator.allocate(available: 10_000_000, views: views([.low, .high, .low, .low]))
        XCTAssertEqual(before.views[1]?.rungIndex, after.views[2]?.rungIndex)
        XCTAssertEqual(before.views[2]?.rungIndex, after.views[1]?.rungIndex)
        XCTAssertGreaterThan(after.views[2]!.rungIndex, after.views[1]!.rungIndex)
    }

    func testLeftoverGoesToDefaultsBeforeLows() {
        // 11 M (budget 9.9 M): floors 2.8 M, high top → 7.57 M; the 2.33 M left lift the default view twice
        // (0.7/2 < 0.7/1, then 1.3/2 < 0.7/1) and then nothing fits for the lows.
        let allocation = BandwidthAllocator().allocate(available: 11_000_000, views: views([.high, .default, .low, .low]))
        XCTAssertEqual(allocation.views[2]?.rungIndex, 2)
        XCTAssertEqual(allocation.views[3]?.rungIndex, 0)
        XCTAssertEqual(allocation.views[1]?.rungIndex, 3)
        XCTAssertGreaterThan(allocation.views[2]!.rungIndex, allocation.views[3]!.rungIndex)
        XCTAssertGreaterThanOrEqual(allocation.views[3]!.rungIndex, allocation.views[4]!.rungIndex)
        XCTAssertLessThanOrEqual(allocation.total, allocation.budget!)
    }

    func testAllDefaultShareEqually() {
        let allocation = BandwidthAllocator().allocate(available: 12_000_000, views: views([.default, .default, .default, .default]))
        let indices = (1...4).map { allocation.views[$0]!.rungIndex }
        XCTAssertLessThanOrEqual(indices.max()! - indices.min()!, 1, "\(indices)")
        XCTAssertLessThanOrEqual(allocation.total, 10_800_000)
    }

    func testSmallTileNeverGetsALargerRungThanItShows() {
        // A 480x270 tile is covered by 640x360: nothing above that, even with bandwidth to spare.
        let allocation = BandwidthAllocator().allocate(available: 100_000_000, views: views([.high, .default], tile: (480, 270)))
        XCTAssertEqual(allocation.views[1]?.rungIndex, 0)
        XCTAssertEqual(allocation.views[2]?.rungIndex, 0)
        // A 1280x720 tile needs the 720p rung, not 1080p.
        let big = BandwidthAllocator().allocate(available: 100_000_000, views: views([.high], tile: (1280, 720)))
        XCTAssertEqual(big.views[1]?.rung.height, 720)
    }

    func testFloorsAreKeptWhenEvenTheyDoNotFit() {
        let allocation = BandwidthAllocator().allocate(available: 1_000_000, views: views([.high, .low, .low, .low]))
        XCTAssertTrue(allocation.oversubscribed)
        for id in 1...4 { XCTAssertEqual(allocation.views[id]?.rungIndex, 0) }
    }

    func testUnlimitedBandwidthGivesTopRungsWithinDecodingCapacity() {
        let unlimited = BandwidthAllocator().allocate(available: nil, views: views([.low, .default, .high, .low]))
        for id in 1...4 { XCTAssertEqual(unlimited.views[id]?.rungIndex, 3) }
        // Two 1080p decodes' worth of pixels: the high view keeps 1080p; the others fit what is left.
        let allocator = BandwidthAllocator(maxDecodedPixels: BandwidthAllocator.decodedPixels(cores: 2))
        let limited = allocator.allocate(available: nil, views: views([.low, .default, .high, .low]))
        XCTAssertEqual(limited.views[3]?.rungIndex, 3)
        let pixels = (1...4).map { limited.views[$0]!.rung.width! * limited.views[$0]!.rung.height! }.reduce(0, +)
        XCTAssertLessThanOrEqual(pixels, 2 * 1920 * 1080)
        XCTAssertLessThan(limited.views[1]!.rungIndex, 3)
    }

    func testViewsWithoutRungsAreIgnored() {
        var demands = views([.high])
        demands.append(ViewDemand(id: 2, priority: .high, rungs: []))
        let allocation = BandwidthAllocator().allocate(available: 8_000_000, views: demands)
        XCTAssertNil(allocation.views[2])
        XCTAssertEqual(allocation.views[1]?.rungIndex, 3)
    }

    func testPriorityNamesAndCycle() {
        XCTAssertEqual(NetworkResourcePriority(rawValue: "high"), .high)
        XCTAssertNil(NetworkResourcePriority(rawValue: "urgent"))
        XCTAssertEqual(NetworkResourcePriority.low.next.next.next, .low)
    }
}
