#!/usr/bin/env python3
"""A minimal HTTPS forward proxy (HTTP CONNECT) for the refresher's tests:
proves the refresher honours https_proxy from its environment. Tunnels
bytes both ways and appends "CONNECT <host:port>" to LOG for every tunnel.

Usage: connect_proxy.py LOG   (prints "proxy listening port=N")
"""
import socket
import sys
import threading

LOG = sys.argv[1]


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(4096)
        if not chunk:
            client.close()
            return
        head += chunk
    line = head.split(b"\r\n", 1)[0].decode()
    method, target, _ = line.split(" ", 2)
    if method != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    with open(LOG, "a") as f:
        f.write("CONNECT %s\n" % target)
    host, port = target.rsplit(":", 1)
    upstream = socket.create_connection((host, int(port)), timeout=10)
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)


def main():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    print("proxy listening port=%d" % server.getsockname()[1], flush=True)
    while True:
        client, _ = server.accept()
        threading.Thread(target=handle, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
