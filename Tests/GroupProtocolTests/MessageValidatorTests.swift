import GroupProtocol
import XCTest

/// What a host accepts from a member connection, and the command rate limit, with time passed in.
final class MessageValidatorTests: XCTestCase {
    private func greeted() throws -> MemberMessageValidator {
        var validator = MemberMessageValidator(token: "secret", items: ["event"], memberID: "m1")
        try validator.validate(.hello(.init(token: "secret", member: "wall", capabilities: [])), now: 0)
        try validator.validate(.join(.init(request: 1, participant: "m1.view1", item: "event")), now: 0)
        return validator
    }

    private func violation(_ body: () throws -> Void) -> ProtocolViolation? {
        do { try body() } catch let v as ProtocolViolation { return v } catch { XCTFail("\(error)") }
        return nil
    }

    func testHelloMustComeFirstWithTheToken() {
        var validator = MemberMessageValidator(token: "secret", items: ["event"], memberID: "m1")
        XCTAssertEqual(violation { try validator.validate(.join(.init(request: 1, participant: "m1.v", item: "event")), now: 0) },
                       .notJoined(.join))
        XCTAssertEqual(violation { try validator.validate(.hello(.init(token: "wrong", member: "w", capabilities: [])), now: 0) },
                       .badToken)
        XCTAssertEqual(violation { try validator.validate(.hello(.init(token: "", member: "w", capabilities: [])), now: 0) },
                       .badToken)
        XCTAssertFalse(validator.isGreeted)
        XCTAssertTrue(ProtocolViolation.badToken.closesConnection)
        XCTAssertNil(violation { try validator.validate(.hello(.init(token: "secret", member: "w", capabilities: [])), now: 0) })
        XCTAssertEqual(validator.memberID, "m1")
        XCTAssertEqual(violation { try validator.validate(.hello(.init(token: "secret", member: "w", capabilities: [])), now: 0) },
                       .alreadyJoined)
    }

    func testItemsParticipantsAndDirection() throws {
        var validator = try greeted()
        XCTAssertEqual(violation { try validator.validate(.join(.init(request: 2, participant: "m1.view2", item: "other")), now: 0) },
                       .unknownItem("other"))
        XCTAssertEqual(violation { try validator.validate(.join(.init(request: 2, participant: "m1.view1", item: "event")), now: 0) },
                       .duplicateParticipant("m1.view1"))
        XCTAssertEqual(violation { try validator.validate(.join(.init(request: 2, participant: "m2.view1", item: "event")), now: 0) },
                       .invalidField("participant \"m2.view1\" is not one of member m1's views"))
        XCTAssertEqual(violation { try validator.validate(.rejoin(.init(request: 3, participant: "m1.view9")), now: 0) },
                       .unknownParticipant("m1.view9"))
        XCTAssertEqual(violation { try validator.validate(.start(.init(request: 1, participant: "m1.view1", item: "event",
                                                                       itemTimeNs: 0, rate: 1, atClockNs: 0, originator: nil)), now: 0) },
                       .wrongDirection(.start))
        XCTAssertFalse(ProtocolViolation.unknownItem("x").closesConnection)
    }

    func testAReplysPreparationTimeIsBounded() throws {
        var validator = try greeted()
        XCTAssertNil(violation { try validator.validate(.reply(.init(request: 3, outcome: .ok, preparedNs: 40_000_000)), now: 0) })
        XCTAssertNil(violation { try validator.validate(.reply(.init(request: 3, outcome: .ok)), now: 0) })
        let absurd = MemberMessageValidator.longestPreparationNs + 1
        XCTAssertEqual(violation { try validator.validate(.reply(.init(request: 3, outcome: .ok, preparedNs: absurd)), now: 0) },
                       .invalidField("prepared in \(absurd) ns (more than an hour)"))
    }

    func testCommandValuesAreChecked() throws {
        var validator = try greeted()
        for bad in [WireIntent.rate(.nan), .play(rate: 100), .rate(0), .seekBy(seconds: .infinity)] {
            let v = violation { try validator.validate(.command(.init(request: 1, participant: "m1.view1", item: "event", intent: bad)), now: 0) }
            guard case .invalidField = v else { return XCTFail("\(bad) gave \(String(describing: v))") }
        }
        XCTAssertNil(violation { try validator.validate(.command(.init(request: 1, participant: "m1.view1", item: "event", intent: .rate(-2))), now: 0) })
    }

    func testAFloodOfCommandsIsRateLimitedAndRecovers() throws {
        var validator = try greeted()
        let pause = GroupMessage.command(.init(request: 1, participant: "m1.view1", item: "event", intent: .pause))
        var refused = 0
        for _ in 0..<20 where violation({ try validator.validate(pause, now: 10) }) == .rateLimited(participant: "m1.view1") {
            refused += 1
        }
        XCTAssertEqual(refused, 12, "a burst of 8 passes, the rest of 20 at one instant is dropped")
        XCTAssertNil(violation { try validator.validate(pause, now: 10.3) }, "a token comes back after 1/4 s")
        // Other messages are never rate-limited.
        XCTAssertNil(violation { try validator.validate(.ping(.init(sequence: 1, sentNs: 0)), now: 10.3) })
    }

    func testRateLimiterRefillsUpToTheBurst() {
        var limiter = CommandRateLimiter(burst: 2, perSecond: 1)
        XCTAssertTrue(limiter.allow(at: 0))
        XCTAssertTrue(limiter.allow(at: 0))
        XCTAssertFalse(limiter.allow(at: 0.5))
        XCTAssertTrue(limiter.allow(at: 1.1))
        XCTAssertTrue(limiter.allow(at: 100))
        XCTAssertTrue(limiter.allow(at: 100))
        XCTAssertFalse(limiter.allow(at: 100), "the bucket holds at most the burst")
    }

    func testMemberAcceptsWelcomeFirst() {
        var validator = HostMessageValidator()
        XCTAssertEqual(violation { try validator.validate(.prepare(.init(request: 1, participant: "m1.view1", item: "e",
                                                                         itemTimeNs: 0, rate: 1, originator: nil))) },
                       .notJoined(.prepare))
        XCTAssertEqual(violation { try validator.validate(.hello(.init(token: "t", member: "m", capabilities: []))) },
                       .wrongDirection(.hello))
        XCTAssertNil(violation { try validator.validate(.welcome(.init(memberID: "m1", clock: nil, startMarginMs: 1, groups: [],
                                                                        participants: [], items: [], media: [], heartbeatMs: 1))) })
        XCTAssertNil(violation { try validator.validate(.participants([])) })
    }

    func testTokensAreRandomAndComparedWhole() {
        let a = SessionToken.generate(), b = SessionToken.generate()
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(SessionToken.matches(a, a))
        XCTAssertFalse(SessionToken.matches(String(a.dropLast()), a))
        XCTAssertFalse(SessionToken.matches(a + "0", a))
    }
}
