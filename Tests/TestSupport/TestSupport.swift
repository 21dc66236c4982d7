import Foundation

// What every test target needs and used to write again: the repository root, a failure with a message, polling
// until a condition holds, and the HLS set from Scripts/make-hls (Processes.swift: running other programs;
// HLSServer.swift: the test HTTP server). A plain library target (no XCTest) that the test targets depend on.

/// The repository's root directory (this file is Tests/TestSupport/TestSupport.swift).
public let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A test precondition that did not hold, with the reason.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held (checked once more
/// at the deadline).
public func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// The HLS set from Scripts/make-hls (cached: a no-op when out/hls is up to date; about a minute otherwise).
public enum HLSFixture {
    private static let made = NSLock()
    nonisolated(unsafe) private static var ready = false   // guarded by `made`

    public static var root: String { repoRoot.appendingPathComponent("out/hls").path }

    public static func ensure() throws {
        try made.withLock {
            if ready { return }
            let result = try runTool(["/bin/bash", repoRoot.appendingPathComponent("Scripts/make-hls").path],
                                     timeout: .seconds(900))
            guard result.status == 0 else { throw TestFailure("Scripts/make-hls failed: \(result.stderr)") }
            ready = true
        }
    }
}
