"""An MCP peer that breaks the protocol in one way per mode, speaking JSON-RPC with nothing but the
standard library, for the tests of what Runlet does with a server it cannot trust:

    rogue_server.py pages-for-ever      `tools/list` always gives a new `nextCursor`
    rogue_server.py same-cursor         `tools/list` gives the same `nextCursor` every time
    rogue_server.py too-many-tools      one page of 10,001 tools
    rogue_server.py huge-result         `tools/call` answers with a 17 MiB message
    rogue_server.py deep-result N       `tools/call` answers with a message N + 3 levels deep: its
                                        structured content `{"v": [[…]]}` with N nested lists
    rogue_server.py deep-tools          `tools/list` answers with a message 200 levels deep
    rogue_server.py garbled-result      `tools/call` answers with a line that is not JSON
    rogue_server.py progress N          `tools/call` reports progress N times, 0.2 s apart, then
                                        answers
    rogue_server.py slow-start N        answers nothing for N seconds after it starts
    rogue_server.py crash-once FILE     exits (status 3) at its first `tools/call` when FILE does
                                        not exist, creating it; answers when it does
    rogue_server.py crash-upgraded FILE as crash-once, and says it is version 2 once FILE exists
    rogue_server.py bad-annotation      lists beside `echo` a tool `shady` whose `readOnlyHint` is the
                                        string "true", which makes the page no valid `ListToolsResult`,
                                        and a tool `vendor` with a field MCP does not define
    rogue_server.py leaves-child FILE   starts `sleep 600` in its process group, writes its pid to
                                        FILE, and exits at the end of its input without stopping it

over standard input and output, or over Streamable HTTP (each answer a JSON response to its POST,
no event stream, so `progress` sends no notifications and `garbled-result` fails at once) at
http://127.0.0.1:PORT/mcp with

    rogue_server.py http PORT MODE [N]

Each mode lists one tool, `echo`, and otherwise answers as a server should.
"""

import http.server
import json
import sys
import time

HTTP = sys.argv[1] == "http"
ARGS = sys.argv[3:] if HTTP else sys.argv[1:]
MODE = ARGS[0]
N = int(ARGS[1]) if len(ARGS) > 1 and ARGS[1].isdigit() else 0
MARKER = ARGS[1] if MODE in ("crash-once", "crash-upgraded") else None
ECHO = {"name": "echo", "inputSchema": {"type": "object"}}


def answer(request_id, result):
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def tools_page(request_id, params):
    page = int((params or {}).get("cursor") or "0")
    if MODE == "pages-for-ever":
        return answer(request_id, {"tools": [ECHO] if page == 0 else [], "nextCursor": str(page + 1)})
    if MODE == "same-cursor":
        return answer(request_id, {"tools": [ECHO] if page == 0 else [], "nextCursor": "1"})
    if MODE == "deep-tools":
        deep = "[" * 200 + "]" * 200
        return '{"jsonrpc": "2.0", "id": %s, "result": {"tools": %s}}' % (json.dumps(request_id), deep)
    if MODE == "bad-annotation":
        shady = {"name": "shady", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "true"}}
        vendor = {"name": "vendor", "inputSchema": {"type": "object"}, "x-acme": {}, "title": None}
        return answer(request_id, {"tools": [ECHO, shady, vendor]})
    if MODE == "too-many-tools":
        tools = [ECHO] + [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(10_000)]
        return answer(request_id, {"tools": tools})
    return answer(request_id, {"tools": [ECHO]})


def crashed_before():
    try:
        with open(MARKER, "x"):
            return False
    except FileExistsError:
        return True


def call(request_id, params):
    if MARKER is not None and not crashed_before():
        sys.exit(3)
    if MODE == "garbled-result":
        return '{"jsonrpc": "2.0", "id": %s, "result": {"content": [' % json.dumps(request_id)
    if MODE == "progress":
        token = ((params or {}).get("_meta") or {}).get("progressToken")
        for step in range(N):
            time.sleep(0.2)
            write(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": token, "progress": step + 1, "total": N}}))
        return answer(request_id, {"content": [{"type": "text", "text": "ok"}]})
    if MODE == "huge-result":
        return answer(request_id, {"content": [{"type": "text", "text": "x" * (17 << 20)}]})
    if MODE == "deep-result":
        deep = "[" * N + "]" * N
        return ('{"jsonrpc": "2.0", "id": %s, "result": {"content": [], "structuredContent": {"v": %s}}}'
                % (json.dumps(request_id), deep))
    return answer(request_id, {"content": [{"type": "text", "text": "ok"}]})


def version():
    import os
    return "2" if MODE == "crash-upgraded" and os.path.exists(MARKER) else "1"


VERSION = version()


def handle(message):
    """The answer to one JSON-RPC message, or None for a notification."""
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        return answer(request_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "rogue", "version": VERSION},
        })
    if method == "tools/list":
        return tools_page(request_id, message.get("params"))
    if method == "tools/call":
        return call(request_id, message.get("params"))
    if request_id is not None:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})
    return None


class Endpoint(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        text = handle(json.loads(body))
        if text is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, *_):
        pass


def write(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if MODE == "slow-start":
    time.sleep(N)

if MODE == "leaves-child":
    import subprocess
    child = subprocess.Popen(["sleep", "600"])
    with open(ARGS[1], "w") as pid_file:
        pid_file.write(str(child.pid))

if HTTP:
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Endpoint).serve_forever()
else:
    for line in sys.stdin:
        text = handle(json.loads(line))
        if text is not None:
            write(text)
