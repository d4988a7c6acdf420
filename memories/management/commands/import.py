import sys
from pathlib import Path

from django.core.management.base import CommandError

from ...services import Actor
from ...services.import_check import ImportRefused
from ...services.importer import import_space
from ._base import MemoryCommand


class _Progress:
    """A progress bar on stderr by bytes read, when stderr is a terminal; quiet otherwise."""

    def __init__(self, fh, size: int):
        self.fh, self.size = fh, size
        self.on = sys.stderr.isatty() and size > 0

    def __call__(self, counts) -> None:
        if not self.on:
            return
        done = min(1.0, self.fh.tell() / self.size)
        bar = "#" * int(done * 30)
        sys.stderr.write(f"\r[{bar:<30}] {done:4.0%}  {counts.get('memory', 0):,} memories, {counts.get('event', 0):,} events")
        sys.stderr.flush()

    def done(self) -> None:
        if self.on:
            sys.stderr.write("\n")


class Command(MemoryCommand):
    help = "Import a JSON Lines export into a user's memory space (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument(
            "file", help="An export made by `manage.py export`, the bank's download button or GET /api/export ('-': stdin)."
        )
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        if options["file"] == "-":
            fh, size = sys.stdin.buffer, 0  # a pipe: no size, so no progress bar
        else:
            path = Path(options["file"])
            try:
                fh, size = open(path, "rb"), path.stat().st_size
            except OSError as exc:
                raise CommandError(f"Cannot read {path}: {exc.strerror or exc}") from None
        with fh:
            progress = _Progress(fh, size)
            try:
                result = import_space(owner=owner, lines=fh, actor=Actor.for_command("import"), progress=progress)
            except ImportRefused as exc:
                progress.done()
                raise CommandError(str(exc)) from None
            progress.done()
        self.stdout.write(f"{result.summary()} Into {owner.get_username()}'s space.")
