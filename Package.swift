// swift-tools-version:6.0
// Multiview: a synchronized multiview audio/video player for Linux, in Swift over GStreamer.
//
// Layers, imports flowing one way (bottom to top):
//   CGStreamer (system headers) ← CGStreamerShim (what Swift cannot call) ← GStreamer (safe Swift wrappers)
//   (CGIO, CXlib, CPulse: one system-library module per other C library, imported only where it is used)
//   ← Multiview (Player, Stage, grid window) ← Coordination (+ SyncAnalysis, pure), Priority, Routing,
//   RemoteControl
//   ← multiview (command-line tool)
import PackageDescription

let package = Package(
    name: "Multiview",
    products: [
        .library(name: "GStreamer", targets: ["GStreamer"]),
        .library(name: "Multiview", targets: ["Multiview"]),
        .library(name: "Coordination", targets: ["Coordination"]),
        .library(name: "Routing", targets: ["Routing"]),
        .library(name: "RemoteControl", targets: ["RemoteControl"]),
        .executable(name: "multiview", targets: ["MultiviewCLI"]),
        .executable(name: "netclock-baseline", targets: ["NetClockBaseline"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Tests only: `TestClock`, so the coordination medium's waits are tested by advancing time.
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        // Group sessions' control channel: WebSocket over swift-nio (NIOWebSocket + NIOHTTP1 for the upgrade).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    ],
    targets: [
        // System-library modules, one per C library family; each imported only where its library is used
        // (ARCHITECTURE.md, "Modules"). GStreamer: core, app, video, audio, pbutils, net (GLib/GObject with it).
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-1.0",
            providers: [.apt([
                "libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libgstreamer-plugins-bad1.0-dev",
            ])]
        ),
        // GIO's GDBus and GVariant: the MPRIS2 server of RemoteControl.
        .systemLibrary(name: "CGIO", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // Xlib (+ Xft for the tile tags): the grid window (Multiview) and the external display window (Routing).
        // pkg-config xft gives the freetype include path Xft.h needs.
        .systemLibrary(name: "CXlib", pkgConfig: "xft", providers: [.apt(["libx11-dev", "libxft-dev"])]),
        // libpulse: the PulseAudio client of Routing.
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse", providers: [.apt(["libpulse-dev"])]),
        // The one small C shim: only variadic setters, cast macros and trampolines Swift cannot express.
        .target(name: "CGStreamerShim", dependencies: ["CGStreamer"]),
        .target(
            name: "GStreamer",
            dependencies: ["CGStreamer", "CGStreamerShim"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "Multiview",
            dependencies: ["GStreamer", "CXlib"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Pure Swift, no GStreamer: HLS playlists and attribute lists (multi-variant, I-frame), text in, values out.
        .target(name: "HLS", swiftSettings: [.swiftLanguageMode(.v6)]),
        // Pure Swift: turns per-frame render records into skew figures, summary.json and a PNG plot.
        .target(name: "SyncAnalysis", swiftSettings: [.swiftLanguageMode(.v6)]),
        // One clock, shared transport, suspensions: AVPlaybackCoordinator's behaviour over our players.
        .target(
            name: "Coordination",
            dependencies: ["Multiview", "GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Pure Swift: the group session's wire messages (one Codable enum), their codec and validation.
        .target(name: "GroupProtocol", swiftSettings: [.swiftLanguageMode(.v6)]),
        // Group sessions across processes and hosts: the WebSocket control channel, the host's proxies of remote
        // views on its in-process medium, the member's link feeding a NetworkCoordinationMedium.
        .target(
            name: "GroupSession",
            dependencies: ["GroupProtocol", "Coordination", "Multiview", "GStreamer",
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOWebSocket", package: "swift-nio")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The sync benchmark harness: per-frame render recorder and the scripted sync-report runner (CLI, tests).
        .target(
            name: "SyncBench",
            dependencies: ["Coordination", "Multiview", "GStreamer", "SyncAnalysis"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // networkResourcePriority: a pure bandwidth allocator and the manager that caps each view's hlsdemux2.
        .target(
            name: "Priority",
            dependencies: ["HLS", "Multiview", "GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Audio routes (PulseAudio sinks, mixable or not) and the external display, arbitrated between views.
        .target(
            name: "Routing",
            dependencies: ["Multiview", "GStreamer", "CXlib", "CPulse"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Now playing + remote commands over MPRIS2 (D-Bus session bus, GIO's GDBus).
        .target(
            name: "RemoteControl",
            dependencies: ["Coordination", "Multiview", "GStreamer", "CGIO"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // I-frame trick play (±8×) and scrub previews from HLS I-frame playlists (byte ranges, decoded alone).
        .target(
            name: "TrickPlay",
            dependencies: ["HLS", "Multiview", "GStreamer", "CGStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The command-line tool; its product (the binary) is `multiview`, the target's folder `MultiviewCLI` so it
        // does not collide by case with the `Multiview` library on case-insensitive file systems.
        .executableTarget(
            name: "MultiviewCLI",
            dependencies: ["Routing", "Coordination", "GroupSession", "SyncBench", "Priority", "RemoteControl", "TrickPlay", "Multiview", "GStreamer", "SyncAnalysis", "HLS",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Raw GStreamer on the network clock, no coordination layer: Scripts/bench-network's baseline members.
        .executableTarget(
            name: "NetClockBaseline",
            dependencies: ["GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What every test target needs (repository root, polling, TestFailure, the HLS set): not a test target itself.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "GStreamerTests",
            dependencies: ["GStreamer", "CGStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "HLSTests",
            dependencies: ["HLS"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Pure: the group session's codec and validation (no socket, no pipeline, no daemon).
        .testTarget(
            name: "GroupProtocolTests",
            dependencies: ["GroupProtocol"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Real member processes (the built `multiview` binary) on loopback, and the WebSocket server itself.
        .testTarget(
            name: "GroupSessionTests",
            dependencies: ["TestSupport", "GroupSession", "GroupProtocol", "Coordination", "GStreamer",
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "SyncAnalysisTests",
            dependencies: ["SyncAnalysis"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "SyncBenchTests",
            dependencies: ["TestSupport", "SyncBench", "SyncAnalysis", "GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "CoordinationTests",
            dependencies: ["TestSupport", "Coordination", "SyncBench", "Multiview", "GStreamer", "SyncAnalysis",
                           .product(name: "Clocks", package: "swift-clocks")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "PriorityTests",
            dependencies: ["TestSupport", "Priority", "HLS", "Multiview", "GStreamer", "Coordination"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "RoutingTests",
            dependencies: ["TestSupport", "Routing", "Coordination", "Multiview", "GStreamer", "CPulse"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "RemoteControlTests",
            dependencies: ["TestSupport", "RemoteControl", "Coordination", "Multiview", "GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "TrickPlayTests",
            dependencies: ["TestSupport", "TrickPlay", "HLS", "Multiview", "GStreamer"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The CLI's pure parts (option parsing, language option lines): no pipeline, no daemon.
        .testTarget(
            name: "MultiviewCLITests",
            dependencies: ["MultiviewCLI", "Multiview", "Priority", "GStreamer", "HLS",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "MultiviewTests",
            dependencies: ["TestSupport", "Multiview", "GStreamer", "CGStreamer", .product(name: "Clocks", package: "swift-clocks")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
