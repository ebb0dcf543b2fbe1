"""Treelang, the Python peer Runlet's design descends from, on the per-call figures' shape: a
validated tree that maps a no-op tool over the list another tool returns, executed by Treelang's
own evaluator against its in-process `FakeToolProvider`.

Needs Python 3.12 or newer and Treelang 1.4.3 from PyPI (`benches/treelang-requirements.txt`):

    python3.12 -m venv /tmp/treelang && /tmp/treelang/bin/pip install -r benches/treelang-requirements.txt
    /tmp/treelang/bin/python benches/treelang_map.py process N    # N calls, once (time the process)
    /tmp/treelang/bin/python benches/treelang_map.py figure-a     # 1,000 calls per run, median of 60

The tree is `map(lambda n: inc(n), numbers())`: Treelang's `map` awaits its calls one after
another, so it has no `limit`; the tools answer at once, as `runlet run --tools` fixtures do.
"""
import asyncio
import statistics
import sys
import time

from treelang import AST
from treelang.testing import FakeToolProvider


def tree():
    call = {"type": "function", "name": "inc", "params": [{"type": "value", "name": "n", "value": 0}]}
    loop = {
        "type": "map",
        "function": {"type": "lambda", "params": ["n"], "body": call},
        "iterable": {"type": "function", "name": "numbers", "params": []},
    }
    return AST.parse({"type": "program", "mode": "single", "body": [loop]})


def provider(calls):
    return FakeToolProvider(
        tools=[
            {"name": "numbers", "description": "0 .. N-1", "properties": {}},
            {"name": "inc", "description": "n + 1", "properties": {"n": {"type": "integer"}}},
        ],
        results={"numbers": list(range(calls)), "inc": lambda args: args["n"] + 1},
    )


async def run(calls):
    result = await AST.eval(tree(), provider(calls))
    assert len(result) == calls and result[-1] == calls, result[-3:]
    return result


def figure_a():
    runs = []
    for _ in range(60):
        started = time.perf_counter()
        asyncio.run(run(1000))
        runs.append(time.perf_counter() - started)
    median = statistics.median(runs)
    print(f"treelang map, 1000 no-op calls, median of 60 runs: {median * 1e3:.3f} ms "
          f"({median * 1e6 / 1000:.2f} µs per call)")


def process(calls):
    asyncio.run(run(calls))
    print(f"treelang map, {calls} no-op calls")


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["figure-a"]:
            figure_a()
        case ["process", calls]:
            process(int(calls))
        case _:
            sys.exit("usage: treelang_map.py figure-a | process N")
