#!/usr/bin/env python3
"""Measures what Scripts/lib/delay-relay.py does to traffic: one-way delays of UDP datagrams and TCP chunks, each
way, on CLOCK_MONOTONIC (one kernel clock shared by every network namespace, so a sender in one and a receiver in
another compare stamps directly). Used by the relay's test (Tests/GroupSessionTests/DelayRelayTests.swift).

    relay-probe.py echo --listen 127.0.0.1
        binds a UDP and a TCP port, prints "ready UDP_PORT TCP_PORT", then answers every datagram and every line with
        the sender's stamp, its own receive stamp and its own send stamp. Runs until killed.
    relay-probe.py probe --host ADDR --udp PORT --tcp PORT [--count 30] [--spacing-ms 25] [--timeout-s 10]
        sends COUNT datagrams, then COUNT lines on one TCP connection, SPACING apart (so the relay sees each TCP
        chunk alone), and prints one line per answer: "udp|tcp SEQ UP_MS DOWN_MS" (sender → echo, echo → sender).
        Exits 1 with a message on stderr when answers are missing after TIMEOUT.
Standard library only.
"""
import argparse
import selectors
import socket
import sys
import time


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def echo(args):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((args.listen, 0))
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((args.listen, 0))
    server.listen(8)
    print(f"ready {udp.getsockname()[1]} {server.getsockname()[1]}", flush=True)
    selector = selectors.DefaultSelector()
    selector.register(udp, selectors.EVENT_READ, "udp")
    selector.register(server, selectors.EVENT_READ, "accept")
    pending = {}
    while True:
        for key, _ in selector.select():
            if key.data == "udp":
                data, peer = udp.recvfrom(2048)
                received = now_ns()
                udp.sendto(data.strip() + f" {received} {now_ns()}".encode(), peer)
            elif key.data == "accept":
                connection, _ = server.accept()
                pending[connection] = b""
                selector.register(connection, selectors.EVENT_READ, "tcp")
            else:
                connection = key.fileobj
                data = connection.recv(65536)
                received = now_ns()
                if not data:
                    selector.unregister(connection)
                    connection.close()
                    pending.pop(connection, None)
                    continue
                buffer = pending[connection] + data
                *lines, pending[connection] = buffer.split(b"\n")
                for line in lines:
                    connection.sendall(line + f" {received} {now_ns()}\n".encode())


def answer(line, arrived, kind):
    seq, sent, received, replied = (int(x) for x in line.split())
    return f"{kind} {seq} {(received - sent) / 1e6:.3f} {(arrived - replied) / 1e6:.3f}"


def probe(args):
    deadline = time.monotonic() + args.timeout_s
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.connect((args.host, args.udp))
    udp.settimeout(0.01)
    answers = {}
    for seq in range(args.count):
        udp.send(f"{seq} {now_ns()}".encode())
        pause_until = time.monotonic() + args.spacing_ms / 1000
        while time.monotonic() < pause_until or (seq == args.count - 1 and len(answers) < args.count
                                                 and time.monotonic() < deadline):
            try:
                data = udp.recv(2048)
            except socket.timeout:
                continue
            line = data.decode()
            answers[int(line.split()[0])] = answer(line, now_ns(), "udp")
    if len(answers) < args.count:
        sys.exit(f"relay-probe: {args.count - len(answers)} of {args.count} datagrams got no answer within {args.timeout_s} s")
    for seq in sorted(answers):
        print(answers[seq], flush=True)

    tcp = socket.create_connection((args.host, args.tcp), timeout=args.timeout_s)
    tcp.settimeout(0.01)
    buffer, got = b"", []
    for seq in range(args.count + 1):
        if seq < args.count:
            tcp.sendall(f"{seq} {now_ns()}\n".encode())
        pause_until = time.monotonic() + args.spacing_ms / 1000
        while time.monotonic() < pause_until or (seq == args.count and len(got) < args.count
                                                 and time.monotonic() < deadline):
            try:
                data = tcp.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            arrived = now_ns()
            *lines, buffer = (buffer + data).split(b"\n")
            got += [answer(line.decode(), arrived, "tcp") for line in lines]
    if len(got) < args.count:
        sys.exit(f"relay-probe: {args.count - len(got)} of {args.count} TCP lines got no answer within {args.timeout_s} s")
    for line in got:
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description="one-way delays through the delay relay")
    modes = parser.add_subparsers(dest="mode", required=True)
    e = modes.add_parser("echo")
    e.add_argument("--listen", default="127.0.0.1")
    p = modes.add_parser("probe")
    p.add_argument("--host", required=True)
    p.add_argument("--udp", type=int, required=True)
    p.add_argument("--tcp", type=int, required=True)
    p.add_argument("--count", type=int, default=30)
    p.add_argument("--spacing-ms", type=float, default=25)
    p.add_argument("--timeout-s", type=float, default=10)
    args = parser.parse_args()
    echo(args) if args.mode == "echo" else probe(args)


if __name__ == "__main__":
    main()
