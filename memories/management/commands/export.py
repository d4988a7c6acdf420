import sys
from pathlib import Path

from django.core.management.base import CommandError

from ...services.export import export_space
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Write one user's whole memory space as a JSON Lines export (to FILE, or to stdout)."

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", help="The file to write (default: stdout).")
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        output = options.get("output")
        target = Path(output) if output else None
        # Progress only on a terminal, and never mixed into the data on stdout.
        show = target is not None and sys.stderr.isatty()
        partial = target.with_name(target.name + ".partial") if target else None
        lines = 0
        try:
            out = open(partial, "wb") if partial else sys.stdout.buffer
            try:
                for line in export_space(owner=owner):
                    out.write(line)
                    lines += 1
                    if show and lines % 500 == 0:
                        sys.stderr.write(f"\r{lines:,} lines written…")
                        sys.stderr.flush()
            finally:
                if partial:
                    out.close()
                else:
                    out.flush()
        except OSError as exc:
            raise CommandError(f"Could not write the export: {exc}") from None
        if partial:
            # A finished export appears under its name at once; a failed one never does.
            partial.replace(target)
            if show:
                sys.stderr.write("\r")
            self.stdout.write(f"Exported {owner.get_username()}'s memory to {target} ({lines:,} lines).")
