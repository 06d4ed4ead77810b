#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, guest side: throughput of MPA sockets against plain TCP.

Each line sends the same octets over loopback in the same guest, once over
a plain TCP connection (the baseline) and once over MPA sockets, and prints
the ratio. Under TCG emulation the absolute figures mean little; the ratios
compare like with like.
"""
import os
import socket
import sys
import time

SOL_MPA = 0x4d5041
MPA_ROLE, MPA_MARKERS, MPA_START, MPA_ACCEPT = 1, 2, 9, 12
TCP_ULP = 31  # linux/tcp.h
TOTAL = int(os.environ.get("MPA_BENCH_MB", "32")) << 20


def tcp_pair():
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    cli = socket.socket()
    cli.connect(lst.getsockname())
    srv, _ = lst.accept()
    lst.close()
    return cli, srv


def run(mpa, size, markers):
    """Send TOTAL octets in sends of size; return MB/s."""
    cli, srv = tcp_pair()
    if mpa:
        for sock, role in ((cli, 1), (srv, 2)):
            sock.setsockopt(socket.SOL_TCP, TCP_ULP, b"mpa")
            sock.setsockopt(SOL_MPA, MPA_ROLE, role)
            sock.setsockopt(SOL_MPA, MPA_MARKERS, int(markers))
    pid = os.fork()
    if pid == 0:
        cli.close()
        if mpa:
            srv.setsockopt(SOL_MPA, MPA_START, b"")
            srv.setsockopt(SOL_MPA, MPA_ACCEPT, b"")
        buf = bytearray(1 << 16)
        got = 0
        while True:
            n = srv.recv_into(buf)
            if not n:
                break
            got += n
        os._exit(0 if got == TOTAL else 1)
    srv.close()
    if mpa:
        cli.setsockopt(SOL_MPA, MPA_START, b"")
    msg = memoryview(os.urandom(size))
    sent = 0
    start = time.monotonic()
    while sent < TOTAL:
        n = min(size, TOTAL - sent)
        cli.sendall(msg[:n])  # one ULPDU per call on MPA
        sent += n
    cli.close()
    _, status = os.waitpid(pid, 0)
    secs = time.monotonic() - start
    if status:
        sys.exit("bench: the receiver did not get every octet")
    return TOTAL / secs / 1e6


def main():
    print("bench: %d MiB per run over loopback; MB/s and ratio to plain TCP"
          % (TOTAL >> 20))
    print("%-8s %10s %22s %22s" % ("send", "TCP", "MPA, CRC", "MPA, CRC+Markers"))
    for size in (512, 1448, 16384, 64768):
        base = run(False, size, False)
        crc = run(True, size, False)
        mark = run(True, size, True)
        print("%-8d %10.1f %13.1f (%5.2fx) %13.1f (%5.2fx)"
              % (size, base, crc, crc / base, mark, mark / base), flush=True)


if __name__ == "__main__":
    main()
