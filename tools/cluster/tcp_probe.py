"""Raw TCP throughput between two namespace nodes: the ceiling any collective across the link can
reach. `serve ADDR PORT` accepts one connection, reads until the sender closes, and prints the
bytes per second it received (from the first byte to the last); `send ADDR PORT SECONDS` writes
as fast as the socket takes it for SECONDS and closes. Run by cluster.sh (Debian's python3)."""
import socket
import sys
import time


def serve(addr, port):
    with socket.create_server((addr, port)) as server:
        server.settimeout(10)
        conn, _ = server.accept()
        with conn:
            conn.settimeout(10)
            total, first = 0, None
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                if first is None:
                    first = time.perf_counter()
                total += len(chunk)
            elapsed = time.perf_counter() - first if first is not None else 0
    print(int(total / elapsed) if elapsed > 0 else 0)


def send(addr, port, seconds):
    payload = b"\x5a" * (1 << 20)
    with socket.create_connection((addr, port), timeout=10) as conn:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            conn.sendall(payload)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit("usage: tcp_probe.py serve ADDR PORT | send ADDR PORT SECONDS")
