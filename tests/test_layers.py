"""The layers run one way (STYLE.md 11): models and small helpers, then recall, embeddings,
llm and extract, then services, then everything a person or program calls (views, api,
mcp, admin, commands, tasks). A lower layer never imports a higher one, not even inside a
function; what it needs is passed in. Read from the source with ast, like
test_configuration.py reads the settings."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "memories"

# The layer of each first part of a module's name under memories/ (higher calls lower).
BASE = {"models", "textutil", "ratelimit", "logredact", "logs", "schedule", "modelapi"}
CORE = {"recall", "embeddings", "llm", "extract"}
SERVICES = {"services"}
LAYER = {**{name: 0 for name in BASE}, **{name: 1 for name in CORE}, **{name: 2 for name in SERVICES}}
TOP = 3  # views, api, mcp, admin, management, tasks, forms, signin, middleware, apps, ...
# Among the core packages, only recall may use another one: the meaning arm embeds the
# question. The model boundary (llm) and the vectors (embeddings) stay apart: an offline
# provider that needs meaning is handed an embedder (apps.py wires it).
CORE_MAY_USE = {("recall", "embeddings")}


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


# The provider boundary's vocabulary (the interface and its dataclasses, DESIGN.md): recall
# hands the model MemoryNote and AnswerContext, so it is read below the providers.
VOCABULARY = {"memories.llm.base"}


def layer_of(part: str) -> int:
    return LAYER.get(part, TOP)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import of a memories module in the file, at any depth."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target] if node.module else [f"{target}.{alias.name}" for alias in node.names]
            else:
                names = [node.module] if (node.module or "").startswith("memories") else []
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("memories")]
    return found


def violations(files=None) -> list[str]:
    out = []
    for path in files or sorted(APP.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        source = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        src = part_of(source)
        for line, target in imports(path):
            dst = part_of(target)
            if not dst or dst == src or target in VOCABULARY:
                continue
            upward = layer_of(dst) > layer_of(src)
            sideways = src in CORE and dst in CORE and (src, dst) not in CORE_MAY_USE
            if upward or sideways:
                out.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    return out


def test_no_layer_imports_a_higher_one_or_a_core_neighbour():
    assert violations() == []


def test_the_check_catches_a_doctored_import(tmp_path):
    doctored = tmp_path / "memories" / "llm" / "doctored.py"
    doctored.parent.mkdir(parents=True)
    doctored.write_text("def f():\n    from ..services import ingest_text\n    from memories.embeddings import get_embedder\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = violations([doctored])
    finally:
        ROOT = saved
    assert found == [
        "memories/llm/doctored.py:2 imports memories.services",
        "memories/llm/doctored.py:3 imports memories.embeddings",
    ]
