import Foundation
import GStreamer
import Multiview
@testable import RemoteControl
import TestSupport
import XCTest

/// The server in this process on a private bus, the real playerctl as the client.
final class MPRISServerTests: PrivateBusTestCase {
    func testSecondInstanceGetsTheInstanceSuffixAndBothAreListed() async throws {
        let first = try await MPRISServer.start()
        let second = try await MPRISServer.start()
        XCTAssertEqual(first.busName, "org.mpris.MediaPlayer2.multiview")
        XCTAssertEqual(second.busName, "org.mpris.MediaPlayer2.multiview.instance\(getpid())")
        let players = try playerctl(["-l"], bus: bus).stdout.split(separator: "\n").map(String.init).sorted()
        XCTAssertEqual(players, ["multiview", "multiview.instance\(getpid())"])
        await second.stop()
        let afterStop = try playerctl(["-l"], bus: bus).stdout
        XCTAssertEqual(afterStop, "multiview", "the stopped server's name must go away")
        await first.stop()
    }

    func testRemoteCommandsArriveTypedAndPropertiesReadBack() async throws {
        let server = try await MPRISServer.start()
        defer { Task { await server.stop() } }
        server.update { state in
            state.track = NowPlaying.Track(trackID: "/org/mpris/MediaPlayer2/multiview/item7", title: "Angle three",
                                           length: .seconds(24), url: nil, views: ["a.mkv", "b.mp4"])
            state.status = .paused
            state.canSeek = true; state.canPlay = true; state.canPause = true; state.canGoNext = true
        }
        server.setPositionReader { .milliseconds(5500) }
        let metadata = try playerctl(["-p", "multiview", "metadata", "--format", "{{title}}|{{mpris:length}}"], bus: bus).stdout
        XCTAssertEqual(metadata, "Angle three|24000000")
        XCTAssertEqual(try playerctl(["-p", "multiview", "status"], bus: bus).stdout, "Paused")
        XCTAssertEqual(try playerctl(["-p", "multiview", "position"], bus: bus).stdout, "5.500000")

        let received = CommandLog(server.commands)
        let cases: [([String], RemoteCommand)] = [
            (["play-pause"], .playPause),
            (["next"], .next),
            // A relative seek carries its own offset (microseconds).
            (["position", "7-"], .seek(offsetMicroseconds: -7_000_000)),
            // An absolute position is SetPosition on the current track id.
            (["position", "12"], .setPosition(trackID: "/org/mpris/MediaPlayer2/multiview/item7", microseconds: 12_000_000)),
        ]
        for (index, (arguments, expected)) in cases.enumerated() {
            let result = try playerctl(["-p", "multiview"] + arguments, bus: bus)
            let arrived = await eventually(timeout: .seconds(5)) { received.commands.count > index }
            XCTAssertTrue(arrived, "playerctl \(arguments) sent nothing (\(result.status) \(result.stderr))")
            guard arrived else { return }
            XCTAssertEqual(received.commands[index], expected, "playerctl \(arguments)")
        }
    }

    func testCanSeekFalseDisablesSeekingWithoutRemovingIt() async throws {
        let server = try await MPRISServer.start()
        defer { Task { await server.stop() } }
        server.update { state in
            state.track = NowPlaying.Track(trackID: "/org/mpris/MediaPlayer2/multiview/item1", title: "live",
                                           length: nil, url: "http://example.invalid/live", views: ["live"])
            state.canSeek = false; state.canPlay = true; state.canPause = true; state.status = .playing
        }
        let canSeek = try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", server.busName, "--object-path",
                                                      "/org/mpris/MediaPlayer2", "--method", "org.freedesktop.DBus.Properties.Get",
                                                      "org.mpris.MediaPlayer2.Player", "CanSeek"], environment: bus.environment).stdout
        XCTAssertTrue(canSeek.contains("<false>"), canSeek)
        // The method is still there (introspection lists it).
        let introspection = try runTool("/usr/bin/gdbus", ["introspect", "--session", "--dest", server.busName,
                                                           "--object-path", "/org/mpris/MediaPlayer2"],
                                        environment: bus.environment).stdout
        XCTAssertTrue(introspection.contains("Seek(in  x Offset)"), introspection)
        XCTAssertTrue(introspection.contains("SetPosition("), introspection)
    }

    func testNoBusIsATypedError() async throws {
        setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/multiview-bus", 1)
        do {
            _ = try await MPRISServer.start()
            XCTFail("started without a bus")
        } catch let error as MPRISError {
            guard case .noSessionBus = error else { return XCTFail("wrong error \(error)") }
        }
    }
}

/// Collects a server's commands as they arrive.
final class CommandLog: Sendable {
    private let storage = Storage()
    private final class Storage: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        let lock = NSLock()
        var items: [RemoteCommand] = []
    }
    init(_ stream: AsyncStream<RemoteCommand>) {
        let storage = self.storage
        Task { for await c in stream { storage.lock.withLock { storage.items.append(c) } } }
    }
    var commands: [RemoteCommand] { storage.lock.withLock { storage.items } }
}
