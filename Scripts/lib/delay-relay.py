#!/usr/bin/env python3
"""Userspace delay relay: the network delay and jitter this kernel's missing netem would add (Scripts/bench-network).

    python3 Scripts/lib/delay-relay.py --listen 10.77.1.1 --target 127.0.0.1 --udp 5637 --tcp 5636 \
        [--delay-ms 20] [--jitter-ms 5] [--seed N]

Listens on LISTEN:PORT for each --udp / --tcp port and forwards to TARGET:PORT, both directions, holding every UDP
datagram and every chunk of TCP bytes (what one recv() returned: one segment, or a few coalesced) for a delay drawn
uniformly from DELAY ± JITTER ms, independently per datagram / chunk and per direction. UDP datagrams may therefore
overtake each other, as on a real jittery path; TCP bytes keep their order (a chunk is never released before the
one ahead of it: its release time is max(its own, the previous chunk's)). Each UDP client (source address) gets its
own upstream socket, so replies find their way back. Prints "ready" on stdout once every port is bound.

Design: one asyncio loop, timers by loop.call_at on the monotonic clock (asyncio rounds waits to 1 ms), so the
relay adds its own scheduling error (~0.1-1 ms on an idle core, more on a busy one) on top of the drawn delay.
Run it with real-time priority (chrt -f) to keep that small. Standard library only.
"""
import argparse
import asyncio
import random
import signal
import sys


class Delay:
    """Draws the hold time of one datagram or chunk, in seconds."""

    def __init__(self, delay_ms, jitter_ms, seed):
        self.delay, self.jitter = delay_ms / 1000.0, jitter_ms / 1000.0
        self.random = random.Random(seed)

    def draw(self):
        return max(0.0, self.delay + self.random.uniform(-self.jitter, self.jitter))


class UdpUpstream(asyncio.DatagramProtocol):
    """The relay's socket towards the target for one client: replies go back to that client, delayed."""

    def __init__(self, relay, client):
        self.relay, self.client, self.transport = relay, client, None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, _addr):
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + self.relay.delay.draw(), self.relay.send_to_client, data, self.client)


class UdpRelay(asyncio.DatagramProtocol):
    def __init__(self, target, delay):
        self.target, self.delay = target, delay
        self.transport = None
        self.upstreams = {}   # client address → UdpUpstream (or a pending list of datagrams while it connects)

    def connection_made(self, transport):
        self.transport = transport

    def send_to_client(self, data, client):
        self.transport.sendto(data, client)

    def datagram_received(self, data, client):
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + self.delay.draw(), self.forward, data, client)

    def forward(self, data, client):
        upstream = self.upstreams.get(client)
        if isinstance(upstream, UdpUpstream):
            upstream.transport.sendto(data)
        elif isinstance(upstream, list):
            upstream.append(data)
        else:
            self.upstreams[client] = [data]
            asyncio.ensure_future(self.open_upstream(client))

    async def open_upstream(self, client):
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_datagram_endpoint(lambda: UdpUpstream(self, client), remote_addr=self.target)
        pending, self.upstreams[client] = self.upstreams[client], upstream
        for data in pending:
            upstream.transport.sendto(data)


async def pump(reader, writer, delay):
    """Copies one direction of a TCP connection, holding each chunk; order is kept."""
    loop = asyncio.get_running_loop()
    last_release = 0.0
    queue = asyncio.Queue()

    async def release():
        while True:
            item = await queue.get()
            if item is None:
                break
            when, data = item
            wait = when - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    releaser = asyncio.ensure_future(release())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            last_release = max(loop.time() + delay.draw(), last_release)
            queue.put_nowait((last_release, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait(None)
    try:
        await releaser
    except (ConnectionError, OSError):
        pass


async def tcp_client(client_reader, client_writer, target, delay):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(*target)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pump(client_reader, upstream_writer, delay), pump(upstream_reader, client_writer, delay))
    for w in (client_writer, upstream_writer):
        w.close()


async def main():
    parser = argparse.ArgumentParser(description="UDP/TCP relay adding DELAY ± JITTER ms each way")
    parser.add_argument("--listen", required=True)
    parser.add_argument("--target", default="127.0.0.1")
    parser.add_argument("--udp", type=int, action="append", default=[])
    parser.add_argument("--tcp", type=int, action="append", default=[])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--jitter-ms", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if not args.udp and not args.tcp:
        parser.error("nothing to relay: give --udp and/or --tcp ports")
    if args.jitter_ms < 0 or args.delay_ms < 0:
        parser.error("--delay-ms and --jitter-ms must not be negative")
    delay = Delay(args.delay_ms, args.jitter_ms, args.seed)
    loop = asyncio.get_running_loop()
    for port in args.udp:
        await loop.create_datagram_endpoint(lambda p=port: UdpRelay((args.target, p), delay),
                                            local_addr=(args.listen, port))
    for port in args.tcp:
        await asyncio.start_server(lambda r, w, p=port: tcp_client(r, w, (args.target, p), delay),
                                   host=args.listen, port=port, reuse_address=True)
    print("ready", flush=True)
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    await stop


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except OSError as error:
        print(f"error: delay-relay: {error}", file=sys.stderr)
        sys.exit(1)
