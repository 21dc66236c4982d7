import Coordination
import Foundation
import GroupProtocol
@testable import GroupSession
import Synchronization
import TestSupport
import XCTest

/// The host's control channel over a real WebSocket on loopback, spoken to by a raw client: bad frames are
/// refused one by one (one log line, one error message each) and the session goes on.
final class ControlChannelTests: XCTestCase {
    /// A bare WebSocket client: what it receives is kept in order; the host's prepare/start/pause are answered ok
    /// (those of the kinds in `answering`).
    final class RawClient: Sendable {
        let peer: WebSocketPeer
        private let received: Mutex<[GroupMessage]>

        private init(peer: WebSocketPeer) {
            self.peer = peer
            self.received = Mutex([])
        }

        var messages: [GroupMessage] { received.withLock { $0 } }

        static func connect(port: Int, answering: Set<GroupMessage.Kind> = [.prepare, .start, .pause]) async throws -> RawClient {
            guard let channel = try await WebSocketTransport.connect(host: "127.0.0.1", port: port) else {
                throw TestFailure("upgrade refused")
            }
            let (peers, continuation) = AsyncStream<RawClient>.makeStream()
            Task {
                try? await channel.executeThenClose { inbound, outbound in
                    let peer = WebSocketPeer(outbound: outbound, masks: true)
                    let client = RawClient(peer: peer)
                    continuation.yield(client)
                    await WebSocketPeer.readFrames(inbound, peer: peer) { frame in
                        guard case .text(let text) = frame, let message = try? GroupMessageCodec.decode(text) else { return }
                        client.received.withLock { $0.append(message) }
                        if let request = message.request, answering.contains(message.kind) {
                            await peer.send(.reply(.init(request: request, outcome: .ok)))
                        }
                    }
                }
                continuation.finish()
            }
            var iterator = peers.makeAsyncIterator()
            guard let client = await iterator.next() else { throw TestFailure("connection ended at once") }
            return client
        }

        func count(_ predicate: (GroupMessage) -> Bool) -> Int { messages.filter(predicate).count }

        func waitFor(_ what: String, count wanted: Int = 1, _ predicate: @escaping (GroupMessage) -> Bool) async throws {
            guard await eventually(timeout: .seconds(5), { count(predicate) >= wanted }) else {
                throw TestFailure("no \(what) (×\(wanted)); received: \(messages.map(\.kind.rawValue))")
            }
        }
    }

    private func errors(_ code: WireErrorCode) -> (GroupMessage) -> Bool {
        { if case .error(let e) = $0 { return e.code == code } else { return false } }
    }

    func testBadFramesAreRefusedOneByOneAndTheSessionGoesOn() async throws {
        let lines = Mutex<[String]>([])
        let medium = PlaybackCoordinationMedium()
        let host = SessionHost(medium: medium, configuration: .init(token: "t0k", items: ["event"], media: [], clock: nil),
                               log: { line in lines.withLock { $0.append(line) } })
        let port = try await host.start(host: "127.0.0.1", port: 0)
        let client = try await RawClient.connect(port: port)

        await client.peer.send(.hello(.init(token: "t0k", member: "raw", capabilities: [])))
        try await client.waitFor("welcome") { $0.kind == .welcome }

        await client.peer.sendText("garbage{")
        try await client.waitFor("malformed error") { [errors] in errors(.malformed)($0) }
        await client.peer.sendText(String(repeating: "x", count: 70_000))
        try await client.waitFor("oversized error") { [errors] in errors(.oversized)($0) }
        await client.peer.sendText(#"{"v":2,"type":"ping","body":{"sequence":1,"sentNs":0}}"#)
        try await client.waitFor("version error") { [errors] in errors(.unsupportedVersion)($0) }
        await client.peer.sendBinary([1, 2, 3])
        try await client.waitFor("binary refused", count: 2) { [errors] in errors(.malformed)($0) }
        await client.peer.send(.join(.init(request: 1, participant: "m1.view1", item: "another")))
        try await client.waitFor("unknown item") {
            if case .error(let e) = $0 { return e.code == .unknownItem && e.request == 1 } else { return false }
        }

        // A real join, then a flood of commands: 8 pass (each answered), the other 12 are dropped.
        await client.peer.send(.join(.init(request: 2, participant: "m1.view1", item: "event")))
        try await client.waitFor("join reply") { if case .reply(let r) = $0 { r.request == 2 && r.outcome == .ok } else { false } }
        for request in 10..<30 {
            await client.peer.send(.command(.init(request: request, participant: "m1.view1", item: "event", intent: .pause)))
        }
        try await client.waitFor("rate-limit errors", count: 12) { [errors] in errors(.rateLimited)($0) }
        try await client.waitFor("replies to the commands that passed", count: 8) {
            if case .reply(let r) = $0 { return (10..<30).contains(r.request) } else { return false }
        }
        XCTAssertEqual(client.count { [errors] in errors(.rateLimited)($0) }, 12)

        // The session is unharmed: the member is still in the group and answers.
        await client.peer.send(.ping(.init(sequence: 7, sentNs: 1)))
        try await client.waitFor("pong") { if case .pong(let p) = $0 { p.sequence == 7 } else { false } }
        let participants = await medium.participants().map(\.id.rawValue)
        XCTAssertEqual(participants, ["m1.view1"])
        // One log line per refused message (garbage, oversized, version, binary, unknown item + 12 dropped commands).
        let refused = lines.withLock { $0 }.filter { $0.hasPrefix("group session: member m1 (raw): ") }
        XCTAssertEqual(refused.count, 17, refused.joined(separator: "\n"))
        XCTAssertTrue(refused.contains { $0.contains("oversized message: 70000 bytes (limit 65536)") }, "\(refused)")
        await host.end()
    }

    /// A view whose join hangs (its member does not answer the host's prepare) is reported while it joins, on the
    /// host: a line naming the unanswered request, again after each interval; once the answer comes the join ends
    /// and so do the lines. (A member's view once waited 15 s "waiting for coordinated playback" in
    /// MemberProcessTests with nothing said on either side.)
    func testAJoinThatHangsSaysWhatItWaitsForUntilItEnds() async throws {
        let lines = Mutex<[String]>([])
        var configuration = SessionHostConfiguration(token: "t", items: ["event"], media: [], clock: nil)
        configuration.slowJoinNotice = .milliseconds(300)
        let host = SessionHost(medium: PlaybackCoordinationMedium(), configuration: configuration,
                               log: { line in lines.withLock { $0.append(line) } })
        let port = try await host.start(host: "127.0.0.1", port: 0)
        let client = try await RawClient.connect(port: port, answering: [.start, .pause])
        await client.peer.send(.hello(.init(token: "t", member: "raw", capabilities: [])))
        try await client.waitFor("welcome") { $0.kind == .welcome }
        await client.peer.send(.join(.init(request: 1, participant: "m1.view1", item: "event")))
        try await client.waitFor("join reply") { if case .reply(let r) = $0 { r.request == 1 && r.outcome == .ok } else { false } }

        await client.peer.send(.rejoin(.init(request: 2, participant: "m1.view1")))
        try await client.waitFor("prepare") { $0.kind == .prepare }
        let prepare = try XCTUnwrap(client.messages.first { $0.kind == .prepare }?.request)
        let slow = { lines.withLock { $0 }.filter { $0.contains("group session: m1.view1 is still joining the group's timeline after") } }
        let twice = await eventually(timeout: .seconds(5)) { slow().count >= 2 }
        XCTAssertTrue(twice, "no two slow-join lines: \(lines.withLock { $0 })")
        XCTAssertTrue(slow().allSatisfy { $0.contains("unanswered: prepare #\(prepare) for ") }, "\(slow())")

        // The answer comes: the join ends (its reply), and the lines stop.
        await client.peer.send(.reply(.init(request: prepare, outcome: .ok)))
        try await client.waitFor("rejoin reply") { if case .reply(let r) = $0 { r.request == 2 } else { false } }
        let after = slow().count
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(slow().count, after, "slow-join lines after the join ended: \(slow().suffix(2))")
        await host.end()
    }

    /// When `end` returns (the CLI exits right after it), every member has the end message: it is not left queued
    /// behind a closed connection. Ten sessions in a row, each with two members.
    func testEveryMemberHasTheEndWhenEndReturns() async throws {
        for round in 0..<10 {
            let host = SessionHost(medium: PlaybackCoordinationMedium(),
                                   configuration: .init(token: "t", items: ["event"], media: [], clock: nil), log: { _ in })
            let port = try await host.start(host: "127.0.0.1", port: 0)
            var clients: [RawClient] = []
            for name in ["a", "b"] {
                let client = try await RawClient.connect(port: port)
                await client.peer.send(.hello(.init(token: "t", member: name, capabilities: [])))
                try await client.waitFor("welcome") { $0.kind == .welcome }
                clients.append(client)
            }
            await host.end()
            for client in clients {
                XCTAssertEqual(client.count { $0.kind == .end }, 1,
                               "round \(round): a member did not have the end when end() returned: \(client.messages.map(\.kind.rawValue))")
            }
        }
    }

    func testAWrongTokenClosesTheConnectionAndOthersCanStillJoin() async throws {
        let medium = PlaybackCoordinationMedium()
        let host = SessionHost(medium: medium, configuration: .init(token: "right", items: ["event"], media: [], clock: nil),
                               log: { _ in })
        let port = try await host.start(host: "127.0.0.1", port: 0)
        do {
            _ = try await SessionMember.connect(host: "127.0.0.1", port: port, token: "wrong", name: "x", log: { _ in })
            XCTFail("a wrong token was accepted")
        } catch let error as GroupLinkError {
            guard case .refused(.badToken, _) = error else { return XCTFail("\(error)") }
        }
        let member = try await SessionMember.connect(host: "127.0.0.1", port: port, token: "right", name: "ok", log: { _ in })
        let id = await member.memberID
        XCTAssertEqual(id, "m2")
        await member.leaveSession()
        await host.end()
    }
}
