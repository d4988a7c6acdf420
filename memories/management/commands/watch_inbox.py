import logging
import signal
import time

from django.conf import settings
from django.db import close_old_connections

from ...services.inbox import SETTLE_SECONDS, scan_inbox
from ._base import MemoryCommand, note

log = logging.getLogger(__name__)


class Command(MemoryCommand):
    help = "Watch MEMORY_INBOX_DIR and ingest every new file (inbox/<username>/ for other users)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Scan once and exit.")
        parser.add_argument("--interval", type=float, default=5.0, help="Seconds between scans.")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="Hand extraction to the task cluster (as `serve` does) instead of extracting here.",
        )

    def on_sigterm(self, *args):
        self.stopping = True

    def handle(self, *args, **options):
        self.stopping = False
        signal.signal(signal.SIGTERM, self.on_sigterm)
        signal.signal(signal.SIGINT, self.on_sigterm)
        note(self, f"Watching {settings.MEMORY_INBOX_DIR}")
        self.say_provider()
        while not self.stopping:
            try:
                # A one-off scan takes every file as it is; the loop waits for files to settle.
                report = scan_inbox(
                    settle_seconds=0 if options["once"] else SETTLE_SECONDS,
                    extract="queue" if options["queue"] else "inline",
                )
            except Exception:  # a bad pass must not stop an always-on watcher
                log.exception("inbox scan failed; trying again next pass")
                report = None
            if report and report.found_work:
                self.stdout.write(
                    f"ingested {len(report.ingested)} {report.ingested}, duplicates {report.duplicates}, failed {report.failed}"
                )
            if options["once"]:
                break
            close_old_connections()
            deadline = time.monotonic() + options["interval"]
            while not self.stopping and time.monotonic() < deadline:
                time.sleep(0.2)
