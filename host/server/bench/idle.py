"""Memory per idle connection of `verdict serve`: open N keep-alive
connections (each sends one request, then idles), and compare the server's
resident memory before and after. Usage: idle.py PORT PID N"""
import socket
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def main():
    port, pid, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    # Warm the server's allocator and threads with a few connections first.
    warm = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
    for s in warm:
        s.sendall(request)
        s.recv(4096)
    time.sleep(0.5)
    before = rss_kib(pid)
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(request)
        conns.append(s)
    for s in conns:
        if not s.recv(4096).startswith(b"HTTP/1.1 200"):
            raise SystemExit("a connection was refused")
    time.sleep(1.0)
    after = rss_kib(pid)
    per = (after - before) / n
    print(f"idle connections: {n} open, server RSS {before} KiB -> {after} KiB, "
          f"{per:.1f} KiB per idle connection")
    # Still open after the wait (not cut as idle).
    alive = 0
    for s in conns:
        s.sendall(request)
        try:
            if s.recv(4096).startswith(b"HTTP/1.1 200"):
                alive += 1
        except OSError:
            pass
    print(f"idle connections still served after the wait: {alive}/{n}")
    for s in conns + warm:
        s.close()


main()
