"""The Python baseline of BENCHMARKS.md's per-call figures: no-op coroutine calls run through
asyncio.gather under a semaphore, the shape of Runlet's `for n in numbers() limit 64 { return
noop(n) }`.

    python3 benches/asyncio_gather.py figure-a     # 1,000 calls per run, median of 60 runs
    python3 benches/asyncio_gather.py process N    # N calls with limit 16, once (time the process)

The first is engine figure (a)'s counterpart; the second, timed as a whole process, is the
counterpart of `runlet run` of an N-call loop (`runlet-cli/tests/probes/long_loop.run`).
"""
import asyncio
import statistics
import sys
import time


async def noop(n):
    return n


async def bounded(limit, calls):
    gate = asyncio.Semaphore(limit)

    async def call(n):
        async with gate:
            return await noop(n)

    return await asyncio.gather(*(call(n) for n in range(calls)))


def figure_a():
    runs = []
    for _ in range(60):
        started = time.perf_counter()
        asyncio.run(bounded(64, 1000))
        runs.append(time.perf_counter() - started)
    median = statistics.median(runs)
    print(f"asyncio.gather, 1000 no-op calls, limit 64, median of 60 runs: {median * 1e3:.3f} ms "
          f"({median * 1e6 / 1000:.2f} µs per call)")


def process(calls):
    done = asyncio.run(bounded(16, calls))
    print(len(done))


if __name__ == "__main__":
    if sys.argv[1:2] == ["figure-a"]:
        figure_a()
    elif sys.argv[1:2] == ["process"] and len(sys.argv) == 3:
        process(int(sys.argv[2]))
    else:
        sys.exit(__doc__)
