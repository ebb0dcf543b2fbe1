"""An MCP peer that breaks the protocol in one way per mode, speaking JSON-RPC over standard input
and output with nothing but the standard library, for the tests of what Runlet does with a
server it cannot trust:

    rogue_server.py pages-for-ever      `tools/list` always gives a new `nextCursor`
    rogue_server.py same-cursor         `tools/list` gives the same `nextCursor` every time
    rogue_server.py too-many-tools      one page of 10,001 tools
    rogue_server.py huge-result         `tools/call` answers with a 17 MiB message
    rogue_server.py deep-result N       `tools/call` answers with a message N + 3 levels deep: its
                                        structured content `{"v": [[…]]}` with N nested lists
    rogue_server.py deep-tools          `tools/list` answers with a message 200 levels deep

Each mode lists one tool, `echo`, and otherwise answers as a server should.
"""

import json
import sys

MODE = sys.argv[1]
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 0
ECHO = {"name": "echo", "inputSchema": {"type": "object"}}


def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def tools_page(request_id, params):
    page = int((params or {}).get("cursor") or "0")
    if MODE == "pages-for-ever":
        answer(request_id, {"tools": [ECHO] if page == 0 else [], "nextCursor": str(page + 1)})
    elif MODE == "same-cursor":
        answer(request_id, {"tools": [ECHO] if page == 0 else [], "nextCursor": "1"})
    elif MODE == "deep-tools":
        deep = "[" * 200 + "]" * 200
        send('{"jsonrpc": "2.0", "id": %s, "result": {"tools": %s}}' % (json.dumps(request_id), deep))
    elif MODE == "too-many-tools":
        tools = [ECHO] + [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(10_000)]
        answer(request_id, {"tools": tools})
    else:
        answer(request_id, {"tools": [ECHO]})


def call(request_id):
    if MODE == "huge-result":
        answer(request_id, {"content": [{"type": "text", "text": "x" * (17 << 20)}]})
    elif MODE == "deep-result":
        deep = "[" * DEPTH + "]" * DEPTH
        send('{"jsonrpc": "2.0", "id": %s, "result": {"content": [], "structuredContent": {"v": %s}}}'
             % (json.dumps(request_id), deep))
    else:
        answer(request_id, {"content": [{"type": "text", "text": "ok"}]})


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        answer(request_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "rogue", "version": "1"},
        })
    elif method == "tools/list":
        tools_page(request_id, message.get("params"))
    elif method == "tools/call":
        call(request_id)
    elif request_id is not None:
        send(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}}))
