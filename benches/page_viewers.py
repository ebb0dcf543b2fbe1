"""Viewers that stream a journal's run from its start and never read: what they cost a page
server. Starts `runlet serve` on a journal, opens N event streams of its first run with a 4 KiB
receive buffer, and reports how long `/api/runs` takes right away and 5 s later, and the
server's peak RSS (VmHWM).

    python3 benches/page_viewers.py RUNLET JOURNAL_URL N [PORT]
"""

import re
import socket
import subprocess
import sys
import time

RUNLET, JOURNAL, VIEWERS = sys.argv[1], sys.argv[2], int(sys.argv[3])
PORT = int(sys.argv[4]) if len(sys.argv) > 4 else 18555


def get(path):
    with socket.create_connection(("127.0.0.1", PORT)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data.decode(errors="replace")


def timed(path):
    started = time.monotonic()
    get(path)
    return (time.monotonic() - started) * 1000


server = subprocess.Popen([RUNLET, "serve", "--journal", JOURNAL, "--addr", f"127.0.0.1:{PORT}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            runs = get("/api/runs")
            break
        except OSError:
            time.sleep(0.1)
    run = re.search(r'"run_id":"([^"]+)"', runs).group(1)
    viewers = []
    for _ in range(VIEWERS):
        s = socket.create_connection(("127.0.0.1", PORT))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(f"GET /api/runs/{run}/events HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        viewers.append(s)
    first = timed("/api/runs")
    time.sleep(5)
    later = timed("/api/runs")
    with open(f"/proc/{server.pid}/status") as status:
        peak = int(re.search(r"VmHWM:\s+(\d+)", status.read()).group(1))
    print(f"viewers={VIEWERS}: /api/runs {first:.0f} ms at once, {later:.0f} ms 5 s later; "
          f"server peak RSS {peak / 1024:.0f} MiB")
finally:
    server.kill()
