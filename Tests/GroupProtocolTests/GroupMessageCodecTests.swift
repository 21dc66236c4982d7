import GroupProtocol
import XCTest

/// The wire format: every message round-trips, and each kind of bad frame fails with its own violation.
final class GroupMessageCodecTests: XCTestCase {
    private let samples: [GroupMessage] = [
        .hello(.init(token: "abc", member: "wall-2", capabilities: ["netclock", "views"])),
        .join(.init(request: 1, participant: "m1.view1", item: "event")),
        .command(.init(request: 2, participant: "m1.view1", item: "event", intent: .seek(toNs: 5_000_000_000))),
        .command(.init(request: 3, participant: "m1.view1", item: "event", intent: .pause)),
        .suspensions(.init(participant: "m1.view1", reasons: ["stallRecovery"])),
        .rejoin(.init(request: 4, participant: "m1.view1")),
        .leave(.init(participant: nil)),
        .welcome(.init(memberID: "m1", clock: .init(host: "127.0.0.1", port: 9000), startMarginMs: 40,
                       groups: [.init(item: "event", rate: 1, playing: true, anchorMediaNs: 1, anchorClockNs: 2)],
                       participants: [.init(id: "view1", item: "event", ready: true, suspensions: [])],
                       items: ["event"], media: [.init(view: 1, uri: "file:///a.mp4")], heartbeatMs: 500)),
        .prepare(.init(request: 5, participant: "m1.view1", item: "event", itemTimeNs: 7, rate: 2, originator: "view2")),
        .start(.init(request: 6, participant: "m1.view1", item: "event", itemTimeNs: 7, rate: 1, atClockNs: 99,
                     originator: nil)),
        .pause(.init(request: 7, participant: "m1.view1", item: "event", itemTimeNs: 7, originator: "m2.view1")),
        .event(.init(participant: "m1.view1", event: .timeJumped(toNs: 3, originator: "view1"))),
        .event(.init(participant: "m1.view1", event: .joined(.init(item: "event", rate: 1, playing: false,
                                                                    anchorMediaNs: 0, anchorClockNs: nil)))),
        .participants([.init(id: "m1.view1", item: nil, ready: false, suspensions: ["x"])]),
        .end(.init(reason: "host ended the session")),
        .reply(.init(request: 6, outcome: .missedStart)),
        .reply(.init(request: 6, outcome: .failed("no"))),
        .reply(.init(request: 5, outcome: .ok, preparedNs: 31_000_000)),
        .error(.init(code: .rateLimited, detail: "slow down")),
        .ping(.init(sequence: 1, sentNs: 123)),
        .pong(.init(sequence: 1, sentNs: 123)),
        .pong(.init(sequence: 2, sentNs: 123, receivedNs: 20_000_123)),
    ]

    func testEveryMessageRoundTrips() throws {
        for message in samples {
            let text = GroupMessageCodec.encode(message)
            XCTAssertEqual(try GroupMessageCodec.decode(text), message, text)
        }
        // Every kind is covered by a sample.
        XCTAssertEqual(Set(samples.map(\.kind)), Set(GroupMessage.Kind.allCases))
    }

    /// A prepare's answer may say how long the view took; a reply without it (every other answer, an older member)
    /// still decodes, and is encoded without the field.
    func testAReplyMaySayHowLongThePreparationTook() throws {
        let prepared = GroupMessageCodec.encode(.reply(.init(request: 5, outcome: .ok, preparedNs: 31_000_000)))
        XCTAssertTrue(prepared.contains(#""preparedNs":31000000"#), prepared)
        let plain = GroupMessageCodec.encode(.reply(.init(request: 5, outcome: .ok)))
        XCTAssertFalse(plain.contains("preparedNs"), plain)
        XCTAssertEqual(try GroupMessageCodec.decode(plain), .reply(.init(request: 5, outcome: .ok)))
    }

    func testTheEnvelopeIsDocumentedJSON() throws {
        let text = GroupMessageCodec.encode(.rejoin(.init(request: 4, participant: "m1.view1")))
        XCTAssertEqual(text, #"{"body":{"participant":"m1.view1","request":4},"type":"rejoin","v":1}"#)
    }

    func testGarbageIsMalformed() {
        XCTAssertThrowsError(try GroupMessageCodec.decode("garbage \u{1}")) { error in
            guard case .malformed = error as? ProtocolViolation else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try GroupMessageCodec.decode(#"{"v":1,"type":"join","body":{"participant":3}}"#)) { error in
            XCTAssertEqual(error as? ProtocolViolation, .malformed("join: body does not match the message"))
        }
    }

    func testWrongVersionAndUnknownTypeAreNamed() {
        XCTAssertThrowsError(try GroupMessageCodec.decode(#"{"v":2,"type":"hello","body":{}}"#)) { error in
            XCTAssertEqual(error as? ProtocolViolation, .unsupportedVersion(2))
        }
        XCTAssertThrowsError(try GroupMessageCodec.decode(#"{"v":1,"type":"teleport","body":{}}"#)) { error in
            XCTAssertEqual(error as? ProtocolViolation, .unknownType("teleport"))
        }
    }

    func testOversizedFramesAreRefusedBeforeParsing() {
        let big = String(repeating: "x", count: GroupMessageCodec.maximumFrameBytes + 1)
        XCTAssertThrowsError(try GroupMessageCodec.decode(big)) { error in
            XCTAssertEqual(error as? ProtocolViolation,
                           .oversized(bytes: GroupMessageCodec.maximumFrameBytes + 1, limit: GroupMessageCodec.maximumFrameBytes))
        }
    }
}
