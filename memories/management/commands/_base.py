"""Shared bits of the memory commands."""

from django.core.management.base import BaseCommand, CommandError

from ... import embeddings
from ...llm import get_provider, provider_name
from ...services import resolve_owner


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
            self.stderr.write(f"Provider: {provider.label}")
        else:
            self.stderr.write(
                f"Provider: {provider_name()} — the built-in extractive engine, not a language model "
                "(set GEMINI_API_KEY or OPENAI_BASE_URL for one)."
            )
        self.stderr.write(f"Embeddings: {embeddings.status().label}")
