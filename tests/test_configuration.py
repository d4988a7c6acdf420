"""Settings you can find: the environment is read in settings.py alone, and the
configuration table (docs/configuration.md, linked from the README) lists every variable
settings.py reads."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "memoryagent" / "settings.py"
TABLE = ROOT / "docs" / "configuration.md"  # the settings table the README links to


def _is_os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    )


def _first_string(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def environment_reads(source: str) -> set[str]:
    """Names of the environment variables a module reads: os.getenv("X"), os.environ.get("X"),
    os.environ["X"], and settings.py's own helpers (env_bool("X"), env_list("X"), ...)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            reads = (
                (isinstance(func, ast.Attribute) and func.attr == "getenv")
                or (isinstance(func, ast.Attribute) and func.attr == "get" and _is_os_environ(func.value))
                or (isinstance(func, ast.Name) and func.id.startswith("env_"))
            )
            if reads and (name := _first_string(node)):
                names.add(name)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_os_environ(node.value):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                names.add(node.slice.value)
    return names


def documented(readme: str) -> set[str]:
    """The variables named in the first column of docs/configuration.md."""
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("|"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1]))
    return names


def undocumented(settings_source: str, readme: str) -> list[str]:
    return sorted(environment_reads(settings_source) - documented(readme))


def test_every_variable_settings_reads_has_a_line_in_the_readme():
    missing = undocumented(SETTINGS.read_text(), TABLE.read_text())
    assert missing == [], f"Add these to docs/configuration.md: {missing}"


def test_every_variable_in_the_readme_table_is_read_by_settings():
    stale = sorted(documented(TABLE.read_text()) - environment_reads(SETTINGS.read_text()))
    assert stale == [], f"docs/configuration.md documents variables settings.py does not read: {stale}"


def test_the_check_catches_a_setting_added_without_its_readme_line():
    readme = TABLE.read_text()
    for line in (
        'MEMORY_NEW_LIMIT = int(os.getenv("MEMORY_NEW_LIMIT", "5"))',
        'MEMORY_NEW_FLAG = env_bool("MEMORY_NEW_FLAG")',
        'MEMORY_NEW_URL = os.environ["MEMORY_NEW_URL"]',
    ):
        doctored = SETTINGS.read_text() + "\n" + line + "\n"
        assert undocumented(doctored, readme) == [line.split(" =")[0]]


def test_the_check_catches_a_readme_line_removed():
    readme = TABLE.read_text()
    assert "`MEMORY_TASKS_SYNC`" in readme
    doctored = "\n".join(line for line in readme.splitlines() if "`MEMORY_TASKS_SYNC`" not in line)
    assert undocumented(SETTINGS.read_text(), doctored) == ["MEMORY_TASKS_SYNC"]


def test_the_app_reads_the_environment_only_through_settings():
    # Writing a default for a library (os.environ.setdefault) is not reading a setting.
    readers = {
        str(path.relative_to(ROOT)): sorted(names)
        for path in sorted((ROOT / "memories").rglob("*.py"))
        if (names := environment_reads(path.read_text()))
    }
    assert readers == {}


def _check(env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, "MEMORY_DATA_DIR": env.pop("data"), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_a_yes_no_setting_it_cannot_read_stops_start_up_with_its_name(tmp_path):
    done = _check({"data": str(tmp_path), "MEMORY_REVIEW_MODE": "ture"})
    assert done.returncode != 0 and "MEMORY_REVIEW_MODE='ture' is not a yes/no value" in done.stderr
    assert _check({"data": str(tmp_path), "MEMORY_REVIEW_MODE": "off"}).returncode == 0


@pytest.mark.slow
def test_a_misspelt_provider_embeddings_or_strategy_is_named_at_start_up(tmp_path):
    done = _check(
        {"data": str(tmp_path), "MEMORY_LLM_PROVIDER": "gemni", "MEMORY_EMBEDDINGS": "loacl", "MEMORY_RECALL_STRATEGY": "hybird"}
    )
    assert done.returncode != 0
    for check_id, words in (("E101", "gemni"), ("E102", "loacl"), ("E103", "hybird")):
        assert f"memories.{check_id}" in done.stderr and words in done.stderr
