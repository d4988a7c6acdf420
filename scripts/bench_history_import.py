"""Benchmark: importing a large ChatGPT export (manage.py ingest --from chatgpt), streamed.

    .venv/bin/python scripts/bench_history_import.py [--conversations 2000] [--turns 20] [--chars 600]

Writes a made-up conversations.json (each conversation with a system node, a regenerated
reply on a second branch and an image part, as real exports have) into a temporary data
dir with a throwaway SQLite database, imports it without extraction, then imports it
again. Prints the file's size, the time of each import, memories a second, the peak memory
of the process against its size before the import, and the longest and median write
transaction (one batch each).
"""

import argparse
import json
import random
import resource
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchlib import fresh_django  # noqa: E402

WORDS = (
    "lisbon trip sister garden budget meeting knee doctor flight hotel recipe sourdough starter project deadline "
    "python database memory piano lesson birthday marathon training plan train ticket museum river coffee"
).split()


def sentence(rng, chars: int) -> str:
    words = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize() + "."


def write_export(path: Path, conversations: int, turns: int, chars: int) -> None:
    rng = random.Random(7)
    t0 = 1_700_000_000.0
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for c in range(conversations):
            mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["sys"]}}
            sys_msg = {"id": "sys", "author": {"role": "system"}, "content": {"content_type": "text", "parts": [""]}}
            mapping["sys"] = {"id": "sys", "message": sys_msg, "parent": "root", "children": []}
            parent = "sys"
            for t in range(turns):
                node_id = f"m{c}-{t}"
                role = "user" if t % 2 == 0 else "assistant"
                parts = [sentence(rng, chars)]
                if t == 2:
                    parts.insert(0, {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"})
                message = {
                    "id": node_id,
                    "author": {"role": role},
                    "create_time": t0 + c * 3600 + t * 30,
                    "content": {"content_type": "multimodal_text" if t == 2 else "text", "parts": parts},
                    "recipient": "all",
                    "metadata": {},
                }
                mapping[parent]["children"].append(node_id)
                mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
                if t == 1:  # a regenerated reply the person did not keep
                    old = dict(message, id=f"{node_id}-old")
                    mapping[parent]["children"].insert(0, f"{node_id}-old")
                    mapping[f"{node_id}-old"] = {"id": f"{node_id}-old", "message": old, "parent": parent, "children": []}
                parent = node_id
            conversation = {
                "title": f"Conversation {c}",
                "create_time": t0 + c * 3600,
                "mapping": mapping,
                "current_node": parent,
                "conversation_id": f"conv-{c}",
                "id": f"conv-{c}",
            }
            fh.write(("," if c else "") + json.dumps(conversation))
        fh.write("]")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--chars", type=int, default=600, help="characters a message")
    parser.add_argument("--batch", type=int, default=0, help="memories a write transaction (default: the service's)")
    args = parser.parse_args()

    data_dir = fresh_django("bench-history-", LOG_LEVEL="WARNING")
    from django.contrib.auth import get_user_model

    from memories.services import history_import

    owner = get_user_model().objects.create_user("bench", password="bench-password-123")
    export = Path(data_dir) / "conversations.json"
    write_export(export, args.conversations, args.turns, args.chars)
    size_mb = export.stat().st_size / 1024**2

    # Each batch's write transaction, timed from its BEGIN to its COMMIT.
    flushes: list[float] = []
    real_atomic = history_import.transaction.atomic

    @contextmanager
    def timed_atomic(*args, **kwargs):
        started = time.perf_counter()
        with real_atomic(*args, **kwargs):
            yield
        flushes.append((time.perf_counter() - started) * 1000)

    history_import.transaction = SimpleNamespace(atomic=timed_atomic)
    before = rss_mb()
    started = time.perf_counter()
    batch = {"batch_size": args.batch} if args.batch else {}
    result = history_import.import_history(owner=owner, kind="chatgpt", path=export, **batch)
    first = time.perf_counter() - started
    peak = rss_mb()
    writes = list(flushes)
    flushes.clear()
    started = time.perf_counter()
    again = history_import.import_history(owner=owner, kind="chatgpt", path=export)
    second = time.perf_counter() - started

    print(f"export: {args.conversations:,} conversations, {size_mb:.1f} MB")
    print(
        f"import: {result.messages:,} memories in {first:.1f} s ({result.messages / first:,.0f}/s), skipped {dict(result.skipped)}"
    )
    print(f"write transactions: {len(writes)}, longest {max(writes):.0f} ms, median {statistics.median(writes):.0f} ms")
    print(f"peak memory: {peak:.0f} MB (before the import {before:.0f} MB; the export is {size_mb:.0f} MB)")
    print(f"re-import: {again.messages} new, {again.already:,} already here, in {second:.1f} s")


if __name__ == "__main__":
    main()
