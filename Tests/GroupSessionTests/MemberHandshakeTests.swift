import Foundation
import GroupProtocol
@testable import GroupSession
import TestSupport
import XCTest

/// A member's handshake over a real WebSocket on loopback, against a bare host that welcomes every connection at
/// once, before the member's hello has even been written: the one order a busy machine produces now and then by
/// itself (the welcome read while the member is still suspended in sending its hello). No pipeline, no daemon.
final class MemberHandshakeTests: XCTestCase {
    /// Before: the welcome found nobody waiting for it yet and was dropped; the member then waited for it 5 s and
    /// gave up ("no welcome from the host": `LinkFaultTests` at load 8, a member that never joined).
    func testAWelcomeThatArrivesBeforeTheMemberWaitsForItEndsTheHandshake() async throws {
        let welcome = GroupMessage.Welcome(memberID: "m7", clock: nil, startMarginMs: 25, groups: [], participants: [],
                                           items: ["event"], media: [], heartbeatMs: 500)
        let (port, server) = try await WebSocketTransport.listen(host: "127.0.0.1", port: 0) { _ in }
        let serving = Task {
            try? await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { upgrades in
                    for try await upgrade in upgrades {
                        group.addTask {
                            guard case .websocket(let channel)? = try? await upgrade.get() else { return }
                            try? await channel.executeThenClose { inbound, outbound in
                                let peer = WebSocketPeer(outbound: outbound, masks: false)
                                await peer.send(.welcome(welcome))
                                await WebSocketPeer.readFrames(inbound, peer: peer) { _ in }
                            }
                        }
                    }
                }
            }
        }
        let started = ContinuousClock.now
        let outcome: Result<SessionMember, any Error>
        do {
            outcome = .success(try await SessionMember.connect(host: "127.0.0.1", port: port, token: "t", name: "early",
                                                               log: { _ in }))
        } catch {
            outcome = .failure(error)
        }
        let took = ContinuousClock.now - started
        try? await server.channel.close()
        serving.cancel()

        let member = try outcome.get()
        let received = await member.welcome
        XCTAssertEqual(received?.memberID, "m7")
        XCTAssertLessThan(took, .seconds(4), "welcomed as soon as the welcome came, not at the 5 s handshake limit")
        await member.leaveSession()
    }
}
