import Foundation
import XCTest
@testable import Multiview

/// `PulseServerInstance`: which daemon answers on a PulseAudio native socket, told apart from a restarted one, and
/// the address libpulse would use. Real Unix sockets standing for the daemon (a listener bound to the path, closed
/// as a SIGKILL closes it, bound anew as a restarted daemon does); the real daemon's side is in
/// `PausedViewServerLossTests` and `CoordinatedKillCommandTests`.
final class PulseServerInstanceTests: XCTestCase {
    func testARunningKilledAndRestartedListenerAreToldApart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mv-pulse-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("native").path
        let environment = ["PULSE_SERVER": "unix:\(path)"]

        XCTAssertEqual(PulseServerInstance.probe(environment: environment), .unreachable, "no socket file: unreachable")
        let first = try UnixListener(path: path)
        guard case .running(let a) = PulseServerInstance.probe(environment: environment) else {
            return XCTFail("a listener on the path is a running daemon")
        }
        XCTAssertEqual(PulseServerInstance.probe(environment: environment), .running(a), "the same daemon, asked again")

        first.close()   // as SIGKILL: the file stays, nobody accepts
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(PulseServerInstance.probe(environment: environment), .unreachable, "a dead daemon's socket")

        unlink(path)   // a restarted daemon replaces the file
        let second = try UnixListener(path: path)
        defer { second.close() }
        guard case .running(let b) = PulseServerInstance.probe(environment: environment) else {
            return XCTFail("the restarted listener answers")
        }
        XCTAssertNotEqual(a, b, "a restarted daemon is another instance")

        // Sinks made for the later daemon connect under a name of their own; asking again gives the same names.
        let names = [PulseConnectionName.name(for: .running(a)), PulseConnectionName.name(for: .running(b))]
        XCTAssertNotEqual(names[0], names[1])
        XCTAssertEqual(PulseConnectionName.name(for: .running(a)), names[0])
        XCTAssertEqual(PulseConnectionName.name(for: .unknown), "Multiview")
    }

    func testTheAddressIsPulseServersFirstLocalEntryElseTheRuntimeDirectory() {
        XCTAssertEqual(PulseServerInstance.socketPath(environment: ["PULSE_SERVER": "unix:/a/native /b/native"]), "/a/native")
        XCTAssertEqual(PulseServerInstance.socketPath(environment: ["PULSE_SERVER": "{abc}unix:/a/native"]), "/a/native")
        XCTAssertEqual(PulseServerInstance.socketPath(environment: ["PULSE_SERVER": "/a/native"]), "/a/native")
        XCTAssertNil(PulseServerInstance.socketPath(environment: ["PULSE_SERVER": "tcp:host:4713"]))
        XCTAssertEqual(PulseServerInstance.probe(environment: ["PULSE_SERVER": "tcp:host:4713"]), .unknown)
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("mv-rt-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        FileManager.default.createFile(atPath: runtime + "/native", contents: nil)
        XCTAssertEqual(PulseServerInstance.socketPath(environment: ["PULSE_RUNTIME_PATH": runtime]), runtime + "/native")
    }
}

/// A listening Unix stream socket at a path (what a PulseAudio daemon offers its clients).
private final class UnixListener {
    private var fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { Glibc.close(fd); throw POSIXError(.EADDRINUSE) }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { close() }
}
