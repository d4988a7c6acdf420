"""MCP latency: the official SDK's client against /mcp in a real gunicorn, per tool.

Starts a fresh installation (migrate, a user with a token, gunicorn with 2 workers, no task
cluster: memories stay pending, which is what an agent sees right after adding), fills it
with --memories notes through add_memory, then times --calls calls of each tool and prints
p50 / p95 in milliseconds. It prints numbers; it asserts nothing about speed.

    .venv/bin/python scripts/bench_mcp.py --memories 200 --calls 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")

import django  # noqa: E402

django.setup()

from tests.procs import Service  # noqa: E402
from tests.test_mcp import http_client  # noqa: E402

CALLS = {
    "add_memory": lambda i: {"text": f"Fresh note {i} about project{i % 7} with person{i % 11}."},
    "search_memories": lambda i: {"query": f"project{i % 7} person{i % 13}"},
    "ask": lambda i: {"question": f"What did I discuss about project{i % 7}?"},
    "list_memories": lambda i: {"limit": 20, "offset": i},
    "status": lambda i: {},
}


async def measure(url: str, token: str, memories: int, calls: int) -> dict[str, tuple[int, int]]:
    async with http_client(url, token) as client:
        for i in range(memories):
            await client.call_tool("add_memory", {"text": f"Note {i}: met person{i % 13} about project{i % 7}, topic{i % 5}."})
        out = {}
        for name, args in CALLS.items():
            times = []
            for i in range(calls):
                started = time.perf_counter()
                result = await client.call_tool(name, args(i))
                times.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise SystemExit(f"{name} failed: {result.content}")
            times.sort()
            out[name] = (round(statistics.median(times)), round(times[max(0, int(len(times) * 0.95) - 1)]))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--calls", type=int, default=30)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-mcp-")
    service = Service(folder).migrate()
    try:
        token = service.make_users("bench")["bench"]
        service.start_web(workers=2)
        results = asyncio.run(measure(service.url, token, options.memories, options.calls))
    finally:
        service.stop_all()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"MCP over HTTP, gunicorn 2 workers, SQLite, {options.memories} memories, {options.calls} calls each")
    print(f"{'tool':<16} {'p50 ms':>7} {'p95 ms':>7}")
    for name, (p50, p95) in results.items():
        print(f"{name:<16} {p50:>7} {p95:>7}")


if __name__ == "__main__":
    main()
