import Foundation
import GroupProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The control channel's transport: WebSocket (RFC 6455) on swift-nio, one text frame per `GroupMessage`, at
/// the path `/multiview`. Servers and clients both end up with a `WebSocketPeer` (the sending half) and
/// `WebSocketInbound` values read by `readFrames`.
enum WebSocketTransport {
    static let path = "/multiview"
    /// Frames above this close the connection inside NIO (status 1009); between `GroupMessageCodec`'s limit and
    /// this one they reach the codec and are refused as oversized, the connection kept.
    static let nioMaximumFrame = 1 << 20

    typealias Channel = NIOAsyncChannel<WebSocketFrame, WebSocketFrame>

    enum Upgrade: Sendable {
        case websocket(Channel)
        case refused
    }
}

/// What came in on a connection, after WebSocket's own control frames (ping, close) are handled.
enum WebSocketInbound: Sendable {
    case text(String)
    case binary(bytes: Int)
}

/// The sending half of one connection; writes are ordered by NIO's async writer. Sending on a closed connection
/// does nothing (its reader sees the end and cleans up).
///
/// Threading: immutable; the writer is Sendable.
final class WebSocketPeer: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    /// Clients mask their frames (RFC 6455 §5.3); servers do not.
    private let masks: Bool

    init(outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, masks: Bool) {
        self.outbound = outbound
        self.masks = masks
    }

    func send(_ message: GroupMessage) async { await sendText(GroupMessageCodec.encode(message)) }

    /// Any text (tests send garbage through it).
    func sendText(_ text: String) async { await write(opcode: .text, data: ByteBuffer(string: text)) }

    func sendBinary(_ bytes: [UInt8]) async { await write(opcode: .binary, data: ByteBuffer(bytes: bytes)) }

    func close() async {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: .normalClosure)
        await write(opcode: .connectionClose, data: data)
        outbound.finish()
    }

    fileprivate func write(opcode: WebSocketOpcode, data: ByteBuffer) async {
        let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: masks ? .random() : nil, data: data)
        do { try await outbound.write(frame) } catch {
            // The connection is gone: its reader ends and the owner cleans up; nothing to do here.
        }
    }

    /// Reads frames until the connection ends, answering pings and closes itself; each text or binary frame goes
    /// to `handle` in order.
    static func readFrames(_ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, peer: WebSocketPeer,
                           handle: (WebSocketInbound) async -> Void) async {
        do {
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    var data = frame.unmaskedData
                    await handle(.text(data.readString(length: data.readableBytes) ?? ""))
                case .binary:
                    await handle(.binary(bytes: frame.data.readableBytes))
                case .ping:
                    await peer.write(opcode: .pong, data: frame.unmaskedData)
                case .connectionClose:
                    await peer.close()
                    return
                default:
                    break
                }
            }
        } catch {
            // A protocol error or a reset: the connection is over either way.
        }
    }
}

/// Installs the frame aggregator (fragmented messages arrive whole) and wraps the upgraded channel.
private func wrapUpgraded(_ channel: any NIOCore.Channel) -> EventLoopFuture<WebSocketTransport.Upgrade> {
    channel.eventLoop.makeCompletedFuture {
        try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
            maxAccumulatedFrameSize: WebSocketTransport.nioMaximumFrame))
        return .websocket(try WebSocketTransport.Channel(wrappingChannelSynchronously: channel))
    }
}

extension WebSocketTransport {
    /// Binds a listening socket; every upgraded connection is handed to `accept` (its own task). Returns the bound
    /// port (`port` 0: the kernel picks one) and the task serving connections until the listener closes.
    static func listen(host: String, port: Int,
                       accept: @escaping @Sendable (Channel) async -> Void) async throws -> (port: Int, server: NIOAsyncChannel<EventLoopFuture<Upgrade>, Never>) {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<Upgrade>(
                        maxFrameSize: nioMaximumFrame,
                        shouldUpgrade: { channel, head in
                            channel.eventLoop.makeSucceededFuture(head.uri == path ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in wrapUpgraded(channel) })
                    let configuration = NIOTypedHTTPServerUpgradeConfiguration(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            // Not a WebSocket request for our path: closed without an answer.
                            channel.close(promise: nil)
                            return channel.eventLoop.makeSucceededFuture(.refused)
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        let bound = server.channel.localAddress?.port ?? port
        return (bound, server)
    }

    /// Connects and upgrades to a WebSocket at `path`; nil when the server refused the upgrade.
    static func connect(host: String, port: Int) async throws -> Channel? {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(3))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: nioMaximumFrame,
                        upgradePipelineHandler: { channel, _ in wrapUpgraded(channel) })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // A host may write its first frames right behind its 101 answer, and they can arrive in the
                    // same read, inside the HTTP response decoder's buffer; NIO's default drops those bytes when the
                    // upgrade removes the decoder (MemberHandshakeTests lost its early welcome in 12 of 200 runs
                    // beside two busy loops, "the session host is gone" 3 s later). Forwarded, they reach the
                    // WebSocket frame decoder.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: pipeline)
                }
            }
        switch try await upgrade.get() {
        case .websocket(let channel): return channel
        case .refused: return nil
        }
    }
}
