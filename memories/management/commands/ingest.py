import json
from pathlib import Path

from django.core.management.base import CommandError

from ...services import Actor, IngestError, extract_memory, ingest_file, ingest_text
from ...services.embed import embed_missing, queue_vectors, waiting_for_vectors
from ...services.history_import import KINDS, HistoryImportError, import_history
from ...services.updates import check_after_vectors, check_later, needs_update_check, queue_checks
from ._base import MemoryCommand, line_writer, progress_bar

INGEST = Actor.for_command("ingest")


class Command(MemoryCommand):
    help = "Ingest files, text or a JSONL file into memory; extraction runs here, before the command returns."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", help="Files to ingest.")
        parser.add_argument("--text", help="Text to ingest.")
        parser.add_argument("--source", default="", help="Where the input came from.")
        parser.add_argument("--occurred-at", help="When it happened (ISO 8601 date or datetime).")
        parser.add_argument(
            "--expires", help="Forget after this date (ISO 8601): it then leaves recall, kept in the bank as expired."
        )
        parser.add_argument(
            "--jsonl", help='A file with one {"text","source","occurred_at","metadata","expires_at"} object a line.'
        )
        parser.add_argument(
            "--from",
            dest="history",
            choices=KINDS,
            help="Import history: a ChatGPT or Claude export (.zip or conversations.json) or a Markdown/Obsidian folder.",
        )
        parser.add_argument("--no-extract", action="store_true", help="Only save the inputs; extract later.")
        parser.add_argument(
            "--embed-now",
            action="store_true",
            help="Make the memories' vectors here before returning (by default they follow in the background, "
            "made by the task workers; the memories are found by their words meanwhile).",
        )
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        if not (options["paths"] or options["text"] or options["jsonl"]):
            raise CommandError("Give file paths, --text or --jsonl.")
        owner = self.owner(options)
        self.say_provider()
        if options["history"]:
            return self._history(owner, options)
        results, failures = [], 0
        if options["text"]:
            results.append(
                self._try(
                    lambda: ingest_text(
                        owner=owner,
                        text=options["text"],
                        source=options["source"] or "cli",
                        occurred_at=options["occurred_at"],
                        expires_at=options["expires"],
                        actor=INGEST,
                    ),
                    "--text",
                )
            )
        for name in options["paths"]:
            path = Path(name)
            if not path.is_file():
                self.stderr.write(f"{name}: no such file")
                failures += 1
                continue
            with path.open("rb") as fh:
                results.append(
                    self._try(
                        lambda: ingest_file(
                            owner=owner,
                            fileobj=fh,
                            name=path.name,
                            source=options["source"] or path.name,
                            occurred_at=options["occurred_at"],
                            expires_at=options["expires"],
                            actor=INGEST,
                        ),
                        name,
                    )
                )
        if options["jsonl"]:
            path = Path(options["jsonl"])
            with progress_bar(total=self._line_count(path), desc="saving", unit="line") as bar:
                for result in self._jsonl(owner, path, options["expires"]):
                    results.append(result)
                    bar.update(1)
        later, checks = check_later(), []
        with progress_bar(total=len(results), desc="extracting", unit="memory") as bar:
            say = line_writer(self, bar)
            for result in results:
                bar.update(1)
                if result is None:
                    failures += 1
                    continue
                memory = result.memory
                if result.created and not options["no_extract"]:
                    # Vectors are made in batches once everything is extracted (below), and
                    # with them the update checks that search by meaning (check_later).
                    memory = extract_memory(memory.pk, actor=INGEST, embed=False, updates=not later)
                    if later and needs_update_check(memory):
                        checks.append(memory.pk)
                detail = memory.error if memory.status == "failed" else result.message
                say(f"{memory.pk}\t{memory.status}\t{detail}")
                failures += memory.status == "failed"
        if not options["no_extract"] and any(r is not None and r.created for r in results):
            if options["embed_now"]:
                outcome = embed_missing(owner=owner)
                if outcome.error and outcome.backend != "off":
                    self.stderr.write(f"embeddings: {outcome.error} (the memories are stored; `manage.py embed` retries)")
                if checks:
                    check_after_vectors(owner=owner, memory_ids=checks, actor=INGEST)
            elif checks:
                queue_checks(owner_id=owner.pk, memory_ids=checks)
                self.stderr.write(
                    f"{len(checks)} memories wait for a vector and their update check: the task workers make them "
                    "in the background (found by their words meanwhile)."
                )
            elif waiting := waiting_for_vectors(owner=owner):
                queue_vectors(owner_id=owner.pk)
                self.stderr.write(
                    f"{waiting} memories wait for a vector: the task workers make them in the background "
                    "(found by their words meanwhile; `manage.py embed` makes them now)."
                )
        if failures:
            raise CommandError(f"{failures} input(s) failed; see above.")

    def _history(self, owner, options):
        if len(options["paths"]) != 1 or options["text"] or options["jsonl"]:
            raise CommandError("--from takes one path: the export file or the notes folder.")
        path = Path(options["paths"][0])
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder")
        unit = "note" if options["history"] == "markdown" else "conversation"
        with progress_bar(total=None, desc="importing", unit=unit) as bar:

            def step(done: int, total: int | None, _name: str) -> None:
                if total and bar.total != total:
                    bar.total = total  # known once the whole export has been checked
                bar.update(1)

            try:
                result = import_history(owner=owner, kind=options["history"], path=path, actor=INGEST, progress=step)
            except HistoryImportError as exc:
                raise CommandError(str(exc)) from None
        self.stdout.write(result.summary)
        if options["no_extract"] or not result.new_ids:
            return
        failures, later, checks = 0, check_later(), []
        with progress_bar(total=len(result.new_ids), desc="extracting", unit="memory") as bar:
            for pk in result.new_ids:
                memory = extract_memory(pk, actor=INGEST, embed=False, updates=not later)
                failures += memory is not None and memory.status == "failed"
                if later and memory is not None and needs_update_check(memory):
                    checks.append(memory.pk)
                bar.update(1)
        outcome = embed_missing(owner=owner)
        if outcome.error and outcome.backend != "off":
            self.stderr.write(f"embeddings: {outcome.error} (the memories are stored; `manage.py embed` retries)")
        if checks:
            # With the vectors just made: the check by meaning searches with them.
            check_after_vectors(owner=owner, memory_ids=checks, actor=INGEST)
        if failures:
            self.stderr.write(f"{failures} memories failed to extract (kept; `manage.py retry_failed` tries them again).")

    def _try(self, make, label):
        try:
            return make()
        except IngestError as exc:
            self.stderr.write(f"{label}: {exc}")
            return None

    @staticmethod
    def _line_count(path: Path) -> int | None:
        try:
            with path.open("rb") as fh:
                return sum(1 for line in fh if line.strip())
        except OSError:
            return None  # _jsonl reports why

    def _jsonl(self, owner, path: Path, options_expires=None):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("each line must be a JSON object")
                metadata = item.get("metadata") or {}
                if not isinstance(metadata, dict):
                    raise ValueError("metadata must be an object")
            except RecursionError:
                self.stderr.write(f"{path}:{number}: the JSON is nested too deeply")
                yield None
                continue
            except ValueError as exc:
                self.stderr.write(f"{path}:{number}: {exc}")
                yield None
                continue
            yield self._try(
                lambda: ingest_text(
                    owner=owner,
                    text=item.get("text") or "",
                    source=item.get("source") or path.name,
                    occurred_at=item.get("occurred_at"),
                    metadata=metadata,
                    expires_at=item.get("expires_at") or options_expires,
                    actor=INGEST,
                ),
                f"{path}:{number}",
            )
