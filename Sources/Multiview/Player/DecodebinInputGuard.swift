import Dispatch
import GStreamer
import Synchronization

/// Works around two faults of GStreamer 1.22.0's decodebin3 at its inputs (issue 15).
///
/// **The crash (row 12).** playbin3 feeds decodebin3 one input per elementary stream (urisourcebin parses the
/// container), each through an `identity` of decodebin3's own. decodebin3 holds all inputs back until the first
/// buffer of any of them arrives; then it links them all and, in that same pass, forgets every input that has
/// already ended (`unblock_pending_input`, "Removing EOS'd stream"). Its reset at PAUSED→READY looks the
/// forgotten input up again and dereferences NULL (`reset_input` → `remove_input_stream(NULL)`; fixed upstream
/// after 1.22.0). A truncated mp4 whose audio has no data ends that stream before the first video frame gets
/// through in about one run in seven, and the player's stop of the failed view then crashed the process. (Such a
/// pass can also run late: two inputs' first buffers enter decodebin3's probe at once, the second pass waits for
/// the first and then finds the first input ended.) So an end-of-stream is held back — dropped, and sent again
/// from here — until every input of that decodebin3 has either passed its first buffer through decodebin3's
/// probe (its pass is over) or ended itself; then no pass can find an ended input any more.
///
/// **The leak (soak).** 1.22.0's reset also leaves the old `identity` / `parsebin` elements in the bin (fixed
/// upstream in 1.22.4); every reload of a view (an HLS view reconnecting after its server came back) added
/// more, which the next start brought up again with the rest. `pipelineStopped(_:)` removes them once the
/// pipeline is in NULL, when decodebin3 holds no reference to them any more.
///
/// Threading: `watch` runs on the streaming thread that adds the identity, the probes on streaming threads (a
/// held EOS is sent again from a dispatch queue, never from a streaming thread), `pipelineStopped` on the
/// player's executor. One `Mutex` owns the inputs; nothing blocks under it.
final class DecodebinInputGuard: Sendable {
    /// One decodebin3 input: the identity's pads, whether its first buffer got through decodebin3's probe and
    /// whether its end-of-stream is held.
    private struct Input {
        /// The decodebin3 it belongs to, and that as a key for grouping.
        var decodebinElement: Element
        var decodebin: UInt
        var sink: Pad
        var source: Pad
        var firstBufferPassed = false
        var heldEndOfStream = false
        /// The next EOS is the held one, sent again: let it through.
        var passNextEndOfStream = false
        var eventProbe: PadProbe?
        /// Sees the first buffer after decodebin3's own probe (installed once events flow, which is after
        /// decodebin3 installed its probe; probes run in the order they were added).
        var bufferProbe: PadProbe?
    }

    private let inputs = Mutex<[UInt: Input]>([:])
    private static let resendQueue = DispatchQueue(label: "multiview.decodebin-eos")

    /// Looks after `identity`, an input of `decodebin` (playbin3's "deep-element-added").
    func watch(identity: Element, in decodebin: Element) {
        guard let sink = try? identity.staticPad("sink"), let source = try? identity.staticPad("src") else { return }
        let key = UInt(bitPattern: identity.gobject)
        inputs.withLock { $0[key] = Input(decodebinElement: decodebin, decodebin: UInt(bitPattern: decodebin.gobject),
                                          sink: sink, source: source) }
        let probe = sink.addProbe([.eventDownstream, .eventFlush]) { [weak self] info in
            guard let self else { return .ok }
            switch info.eventName {
            case "eos": return self.endOfStreamArrived(key)
            case "flush-stop": self.flushed(key); return .ok
            default: self.eventsFlow(key); return .ok
            }
        }
        inputs.withLock { $0[key]?.eventProbe = probe }
    }

    /// Takes the elements decodebin3's reset left behind out of every decodebin3 of `pipeline` (in NULL now) and
    /// forgets the inputs: the next start makes new ones.
    func pipelineStopped(_ pipeline: Pipeline) {
        inputs.withLock { $0 = [:] }
        for decodebin in pipeline.descendants(where: { $0.factoryName == "decodebin3" }) {
            guard let bin = decodebin.asBin() else { continue }
            for child in bin.children where child.factoryName == "identity" || child.factoryName == "parsebin" {
                guard child.currentState == .null else { continue }
                bin.remove(child)
            }
        }
    }

    // MARK: Streaming threads

    private func endOfStreamArrived(_ key: UInt) -> PadProbeReturn {
        // An input fed through a parsebin has no identity to watch, so the count of inputs would never be
        // complete: hold nothing in such a decodebin3 (its parsebin inputs are not the crashing path).
        guard let decodebin = inputs.withLock({ $0[key]?.decodebinElement })?.asBin(),
              !decodebin.children.contains(where: { $0.factoryName == "parsebin" && $0.currentState != .null })
        else { return .ok }
        let (verdict, resend) = inputs.withLock { inputs -> (PadProbeReturn, [Pad]) in
            guard var input = inputs[key] else { return (.ok, []) }
            if input.passNextEndOfStream {
                input.passNextEndOfStream = false
                inputs[key] = input
                return (.ok, [])
            }
            input.heldEndOfStream = true
            inputs[key] = input
            var released = Self.release(in: input.decodebin, of: &inputs)
            // This EOS may be the one that lets the held ones go: then it passes itself, not sent again.
            guard released.removeValue(forKey: key) != nil else {
                // Never held for good: an input that neither ends nor brings a buffer would freeze the view.
                Self.resendQueue.asyncAfter(deadline: .now() + Self.holdLimit) { [weak self] in self?.holdExpired(key) }
                return (.drop, Array(released.values))
            }
            inputs[key]?.passNextEndOfStream = false
            return (.ok, Array(released.values))
        }
        Self.send(resend)
        return verdict
    }

    /// The longest an EOS is held (a safety net: the other inputs' first buffers come within milliseconds).
    static let holdLimit: DispatchTimeInterval = .seconds(3)

    private func holdExpired(_ key: UInt) {
        let pad: Pad? = inputs.withLock { inputs in
            guard let input = inputs[key], input.heldEndOfStream else { return nil }
            inputs[key]?.heldEndOfStream = false
            inputs[key]?.passNextEndOfStream = true
            return input.sink
        }
        if let pad { Self.send([pad]) }
    }

    private func flushed(_ key: UInt) {
        inputs.withLock { inputs in
            inputs[key]?.heldEndOfStream = false
            inputs[key]?.passNextEndOfStream = false
        }
    }

    /// The first event reached the identity: decodebin3's blocking buffer probe is in place on its source pad,
    /// so a probe added now runs after it.
    private func eventsFlow(_ key: UInt) {
        let source: Pad? = inputs.withLock { inputs in
            guard let input = inputs[key], input.bufferProbe == nil, !input.firstBufferPassed else { return nil }
            return input.source
        }
        guard let source else { return }
        let probe = source.addProbe(.buffer) { [weak self] _ in
            self?.firstBufferPassed(key)
            return .remove
        }
        inputs.withLock { $0[key]?.bufferProbe = probe }
    }

    private func firstBufferPassed(_ key: UInt) {
        let resend: [Pad] = inputs.withLock { inputs in
            guard let input = inputs[key] else { return [] }
            inputs[key]?.firstBufferPassed = true
            return Array(Self.release(in: input.decodebin, of: &inputs).values)
        }
        Self.send(resend)
    }

    /// The held EOSes of `decodebin` that may go now: all of them once every input of it has passed its first
    /// buffer or ended (no unblocking pass can run any more). An input whose identity decodebin3 has not made
    /// yet (it waits for the stream collection) still counts: decodebin3's linked sink pads are its inputs.
    /// Marks them as released.
    private static func release(in decodebin: UInt, of inputs: inout [UInt: Input]) -> [UInt: Pad] {
        let group = inputs.filter { $0.value.decodebin == decodebin }
        guard let element = group.first?.value.decodebinElement, group.count >= element.linkedSinkPadCount,
              group.values.allSatisfy({ $0.firstBufferPassed || $0.heldEndOfStream }) else { return [:] }
        var pads: [UInt: Pad] = [:]
        for (key, input) in group where input.heldEndOfStream {
            inputs[key]?.heldEndOfStream = false
            inputs[key]?.passNextEndOfStream = true
            pads[key] = input.sink
        }
        return pads
    }

    private static func send(_ pads: [Pad]) {
        guard !pads.isEmpty else { return }
        resendQueue.async { for pad in pads { pad.sendEndOfStream() } }
    }
}
