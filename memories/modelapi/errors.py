"""The one error a model API call ends in, whichever API and whatever went wrong."""

from __future__ import annotations


class ProviderError(Exception):
    """A model call failed; the message is shown to the user next to the kept input."""

    def __init__(self, message: str, *, retryable: bool = False):
        # Every provider failure reaches people (the sidebar, error pages, memory.error) and
        # logs: keys, endpoint addresses and credentials in URLs are masked here, once, for all.
        from .redact import scrub_secrets

        super().__init__(scrub_secrets(str(message)))
        self.retryable = retryable
