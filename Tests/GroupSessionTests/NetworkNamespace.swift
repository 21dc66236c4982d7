import Foundation
import Synchronization
import TestSupport
import XCTest

/// A network namespace made by a test, joined to this process's namespace by a veth pair on a /30 of its own:
/// this side `hostAddress` on `hostInterface`, the namespace's side `memberAddress` on its `eth0`. Processes started
/// with `launcher` run inside it; `linkDown()` / `linkUp()` cut and restore its side of the link (`ip link set`).
/// Removed on release; namespaces left by a test process that was killed are removed by the next one.
///
/// Names carry this process's id (`mvt<pid>-<n>`), so parallel test processes (Scripts/test's shards, other
/// worktrees on the same machine) never collide; addresses are the first /30 of 10.99.0.0/16 no interface uses yet.
///
/// Threading: immutable after init; the counter of namespaces made by this process is a `Mutex`.
final class NetworkNamespace: Sendable {
    static let ip = "/usr/sbin/ip"
    private static let made = Mutex(0)
    let name: String
    let hostInterface: String
    let hostAddress: String
    let memberAddress: String

    /// Makes the namespace and its link (up). Throws a `TestFailure` carrying `ip`'s own message when this machine
    /// refuses namespaces or veth pairs (the tests then fail loudly: they need them).
    init() throws {
        Self.removeLeftovers()
        let pid = ProcessInfo.processInfo.processIdentifier
        let n = Self.made.withLock { count in count += 1; return count }
        name = "mvt\(pid)-\(n)"
        hostInterface = "mvt\(pid)h\(n)"
        (hostAddress, memberAddress) = try Self.freeSubnet(start: Int(pid) &* 8 &+ n)
        do {
            try Self.run(["netns", "add", name])
            try Self.run(["link", "add", hostInterface, "type", "veth", "peer", "name", "eth0", "netns", name])
            try Self.run(["addr", "add", "\(hostAddress)/30", "dev", hostInterface])
            try Self.run(["link", "set", hostInterface, "up"])
            try Self.run(["-n", name, "addr", "add", "\(memberAddress)/30", "dev", "eth0"])
            try Self.run(["-n", name, "link", "set", "eth0", "up"])
            try Self.run(["-n", name, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The command prefix that runs a program inside the namespace (`ip netns exec` execs it: same pid).
    var launcher: [String] { [Self.ip, "netns", "exec", name] }

    /// Cuts the link on the namespace's side: its route to this side goes, nothing passes either way.
    func linkDown() throws { try Self.run(["-n", name, "link", "set", "eth0", "down"]) }

    /// Restores it (the address and route come back with the link).
    func linkUp() throws { try Self.run(["-n", name, "link", "set", "eth0", "up"]) }

    private func remove() {
        _ = try? runTool(Self.ip, ["link", "del", hostInterface], timeout: .seconds(20))
        _ = try? runTool(Self.ip, ["netns", "del", name], timeout: .seconds(20))
    }

    private static func run(_ arguments: [String]) throws {
        let result = try runTool(ip, arguments, timeout: .seconds(20))
        guard result.status == 0 else {
            throw TestFailure("ip \(arguments.joined(separator: " ")) failed (status \(result.status)): \(result.output)"
                              + " — these tests need network namespaces and veth pairs (root, CAP_NET_ADMIN)")
        }
    }

    /// The first /30 of 10.99.0.0/16 from `start` on that no interface here uses: (this side, the namespace's side).
    private static func freeSubnet(start: Int) throws -> (String, String) {
        let used = try runTool(ip, ["-o", "-4", "addr", "show"], timeout: .seconds(20)).stdout
        for step in 0..<16384 {
            let index = (start &+ step) & 16383
            let third = index / 64, fourth = (index % 64) * 4
            let prefix = "10.99.\(third).\(fourth)"
            if !used.contains(" \(prefix)/") && !used.contains(" 10.99.\(third).\(fourth + 1)/")
                && !used.contains(" 10.99.\(third).\(fourth + 2)/") {
                return ("10.99.\(third).\(fourth + 1)", "10.99.\(third).\(fourth + 2)")
            }
        }
        throw TestFailure("no free /30 left in 10.99.0.0/16")
    }

    /// Namespaces (and their veth ends) of test processes that no longer run.
    private static func removeLeftovers() {
        guard let list = try? runTool(ip, ["netns", "list"], timeout: .seconds(20)).stdout else { return }
        for line in list.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix("mvt"), let dash = name.firstIndex(of: "-"),
                  let pid = Int32(name[name.index(name.startIndex, offsetBy: 3)..<dash]),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            let n = name[name.index(after: dash)...]
            _ = try? runTool(ip, ["link", "del", "mvt\(pid)h\(n)"], timeout: .seconds(20))
            _ = try? runTool(ip, ["netns", "del", name], timeout: .seconds(20))
        }
    }
}

/// CLOCK_MONOTONIC in ns: the host's clock (GStreamer's system clock), which members' net clocks follow, and the
/// one kernel clock every namespace shares.
func monotonicNow() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
