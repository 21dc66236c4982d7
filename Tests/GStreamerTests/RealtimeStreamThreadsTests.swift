import CGStreamer
import Foundation
import Glibc
@testable import GStreamer
import Synchronization
import XCTest

/// `RealtimeStreamThreads` on a thread of its own, fed stream-status messages as a task's thread posts them: an
/// owner's ENTER raises the thread, and any other task's ENTER on a thread still at SCHED_FIFO (a pooled thread
/// whose owner task's LEAVE was lost) puts it back to normal. No pipeline runs: the messages are made here.
final class RealtimeStreamThreadsTests: XCTestCase {
    func testAnOwnersEnterRaisesAndAnyOtherTasksEnterLowersAThreadLeftRealtime() {
        let threads = RealtimeStreamThreads(owners: ["vqueue"], priority: 11)
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex<[String]>([])
        let thread = Thread {
            func policy() -> String {
                switch sched_getscheduler(0) & ~0x4000_0000 {   // without SCHED_RESET_ON_FORK
                case Int32(SCHED_FIFO): return "fifo"
                case Int32(SCHED_OTHER): return "other"
                case let other: return "policy \(other)"
                }
            }
            func enter(factory: String, name: String) {
                guard let element = try? Element(factory: factory, name: name) else {
                    seen.withLock { $0.append("no \(factory)") }
                    return
                }
                let raw = UnsafeMutableRawPointer(element.gobject)
                guard let message = gst_message_new_stream_status(raw.assumingMemoryBound(to: GstObject.self),
                                                                  GST_STREAM_STATUS_TYPE_ENTER,
                                                                  raw.assumingMemoryBound(to: GstElement.self)) else {
                    seen.withLock { $0.append("no message") }
                    return
                }
                threads.apply(message)
                gst_message_unref(message)
            }
            enter(factory: "queue", name: "vqueue")
            seen.withLock { $0.append(policy()) }
            // The owner's LEAVE never comes; the pooled thread is given another task.
            enter(factory: "typefind", name: "typefindelement")
            seen.withLock { $0.append(policy()) }
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the thread never finished")
        XCTAssertEqual(seen.withLock { $0 }, ["fifo", "other"],
                       "the owner's ENTER gives SCHED_FIFO (refused: the tests run as root); another task's ENTER gives it back")
    }
}
