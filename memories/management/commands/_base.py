"""Shared bits of the memory commands."""

import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ... import embeddings
from ...llm import get_provider, provider_name
from ...services import resolve_owner


def note(command: BaseCommand, message: str) -> None:
    """An informational line on stderr (stdout stays for the output a script reads), in
    plain colours: Django styles everything on stderr as an error, and red start-up lines
    teach people to ignore red."""
    command.stderr.write(message, style_func=lambda text: text)


class MemoryCommand(BaseCommand):
    def add_user_argument(self, parser):
        parser.add_argument("--user", help="Whose memory space to use (default: MEMORY_INBOX_USER or the first superuser).")

    def owner(self, options):
        try:
            return resolve_owner(options.get("user"))
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def say_provider(self):
        """Tell the user plainly which engine is working for them."""
        provider = get_provider()
        if provider.is_language_model:
            note(self, f"Provider: {provider.label}")
        else:
            note(
                self,
                f"Provider: {provider_name()} — the built-in extractive engine, not a language model "
                "(set GEMINI_API_KEY or OPENAI_BASE_URL for one).",
            )
        note(self, f"Embeddings: {embeddings.status().label}")


def progress_bar(*, total: int | None, desc: str, unit: str = "it", stream=None) -> tqdm:
    """A progress bar with counts, rate and time left on stderr; silent when stderr is not a
    terminal (cron, pipes, tests), so logs get no carriage-return noise."""
    stream = stream or sys.stderr
    return tqdm(total=total, desc=desc, unit=unit, file=stream, disable=None, dynamic_ncols=True, leave=False)


def line_writer(command: BaseCommand, bar: tqdm):
    """Print result lines to stdout without tearing the bar: tqdm clears it, prints, redraws."""
    if bar.disable:
        return command.stdout.write
    return lambda text: bar.write(text, file=command.stdout._out)
