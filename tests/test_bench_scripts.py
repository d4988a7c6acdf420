"""The benchmark scripts still run. Nothing else calls them, so a change to what they use
(a function that gained an argument, a setting the test client trips on) broke two of them
unnoticed until round 12. Each runs here at a toy size, in a process of its own, on a fresh
SQLite folder (never the test run's PostgreSQL: they fill the database they are given)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

# Each script with the smallest arguments that still walk all of its code, and a line of
# its output that only a full run prints.
RUNS = {
    "bench_memory_bank.py": (["--memories", "60", "--repeat", "1"], "text search + topic filter"),
    "bench_api_list.py": (["--memories", "60", "--repeat", "1"], "topic filter (50)"),
    "bench_history_import.py": (["--conversations", "5", "--turns", "3"], "re-import: 0 new"),
    "bench_import.py": (["--memories", "60"], "again into the same space"),
    "bench_visual.py": (["--memories", "60", "--repeat", "1"], "stats 365 days"),
}


@pytest.mark.parametrize("script", sorted(RUNS))
def test_benchmark_runs_at_a_toy_size(script, tmp_path):
    arguments, expected = RUNS[script]
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "MEMORY_DATA_DIR", "REDIS_URL"}}
    environment.update(MEMORY_EMBEDDINGS="off", TMPDIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected in done.stdout, done.stdout[-3000:]
