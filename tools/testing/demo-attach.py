#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Attach the mpa ULP to one end of a TCP connection and report it.

usage: demo-attach.py server|client ADDRESS PORT
"""
import socket
import sys

TCP_ULP = 31


def attach(sock, who):
    sock.setsockopt(socket.SOL_TCP, TCP_ULP, b"mpa")
    name = sock.getsockopt(socket.SOL_TCP, TCP_ULP, 16).rstrip(b"\0").decode()
    local = "%s:%d" % sock.getsockname()[:2]
    peer = "%s:%d" % sock.getpeername()[:2]
    print(f"{who}: {local} -> {peer}: TCP_ULP = \"{name}\"", flush=True)
    return name == "mpa"


def main():
    role, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if role == "server":
        with socket.create_server((addr, port)) as lsock:
            conn, _ = lsock.accept()
            with conn:
                ok = attach(conn, "server")
                conn.recv(1)  # hold the connection until the client is done
    else:
        with socket.create_connection((addr, port), timeout=10) as conn:
            ok = attach(conn, "client")
            conn.sendall(b"x")
    sys.exit(0 if ok else 1)


main()
