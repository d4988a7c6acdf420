"""What the benchmark scripts share: a fresh Django in a data folder of its own, a free
loopback port and a percentile of timings. The scripts run as `python scripts/NAME.py`, so
this folder is on their path."""

from __future__ import annotations

import os
import socket
import tempfile


def fresh_django(prefix: str, **environment: str) -> str:
    """Set Django up on a new, empty data folder (a new SQLite database unless
    `DATABASE_URL` is set) and migrate it; returns the folder. `environment` is set first
    (e.g. LOG_LEVEL="WARNING", MEMORY_EMBEDDINGS="off"): settings read it at import."""
    data_dir = tempfile.mkdtemp(prefix=prefix)
    os.environ["MEMORY_DATA_DIR"] = data_dir
    os.environ.update(environment)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return data_dir


def free_port(low: int | None = None, high: int | None = None) -> int:
    """A loopback port nothing listens on: the first free one in low..high when a range is
    given (a session's own ports), else one the system picks."""
    if low is not None and high is not None:
        for port in range(low, high + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile by nearest rank; NaN for no values (printed as such, never 0)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class _Revision:
    """An import hook that serves `memories._at_<rev>.<package>...` from a git revision's
    source (for the packages named) and every other `memories._at_<rev>.X` as the current
    `memories.X`: the revision's recall code runs in this process beside today's, on the
    same database and models, so a benchmark can time both question by question."""

    def __init__(self, root, rev: str, packages: tuple[str, ...]):
        import subprocess

        self.root, self.packages = root, packages
        self.commit = subprocess.check_output(["git", "-C", str(root), "rev-parse", "--short", rev], text=True).strip()
        self.prefix = f"memories._at_{self.commit}"

    def _source(self, path: str) -> str | None:
        import subprocess

        done = subprocess.run(["git", "-C", str(self.root), "show", f"{self.commit}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    def find_spec(self, fullname, path=None, target=None):
        import importlib
        import importlib.util

        if fullname != self.prefix and not fullname.startswith(self.prefix + "."):
            return None
        rest = fullname[len(self.prefix) + 1 :].split(".") if fullname != self.prefix else []
        if rest and rest[0] in self.packages:
            base = "memories/" + "/".join(rest)
            for candidate, package in ((base + "/__init__.py", True), (base + ".py", False)):
                source = self._source(candidate)
                if source is not None:
                    return importlib.util.spec_from_loader(fullname, _SourceLoader(source, candidate), is_package=package)
            return None
        if not rest:
            return importlib.util.spec_from_loader(fullname, _SourceLoader("", "memories/__init__.py"), is_package=True)
        real = importlib.import_module("memories." + ".".join(rest))
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real), is_package=hasattr(real, "__path__"))


class _SourceLoader:
    def __init__(self, source: str, path: str):
        self.source, self.path = source, path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile(self.source, f"<rev>/{self.path}", "exec"), module.__dict__)


class _AliasLoader:
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


def code_at(root, rev: str, packages: tuple[str, ...] = ("recall", "embeddings")):
    """The `memories` package as it was at git revision `rev` for these subpackages (the
    rest as it is now), imported beside the current one: `code_at(ROOT, "main").recall`."""
    import importlib
    import sys

    hook = _Revision(root, rev, packages)
    sys.meta_path.insert(0, hook)
    base = importlib.import_module(hook.prefix)
    for package in packages:
        importlib.import_module(f"{hook.prefix}.{package}")
    base.commit = hook.commit
    return base
