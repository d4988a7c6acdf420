"""Gemini through google-genai: structured output, multimodal parts, retries.

Files up to INLINE_LIMIT_BYTES travel inline in the request; bigger ones go through the
Files API (upload, wait until ACTIVE, use, delete) so the model sees the whole file.
The SDK's own retries stay off: ours honour Retry-After and MEMORY_LLM_MAX_RETRIES.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from google import genai
from google.genai import types

from ..modelapi import gemini as api
from ..modelapi import retries
from . import prompts
from .base import AnswerContext, ConsolidationResult, Extraction, FilePart, MemoryNote, Provider, ProviderError, UpdateJudgement

log = logging.getLogger(__name__)

# The documented request limit for inline data; above it the Files API is the only way.
INLINE_LIMIT_BYTES = 20 * 1024 * 1024
# The Files API's per-file limit.
FILES_API_LIMIT_BYTES = 2 * 1024 * 1024 * 1024
# How often to ask whether an uploaded file is ready, and for how long at most.
FILE_POLL_SECONDS = 2.0
FILE_ACTIVE_TIMEOUT_SECONDS = 600.0

BLOCKING_FINISH_REASONS = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"}
FILE_FAMILIES = ("image/", "audio/", "video/", "text/")
TEXT_LIKE = {"application/json", "application/xml", "application/yaml", "application/x-yaml"}


def is_text_like(mime: str) -> bool:
    return mime.startswith("text/") or mime in TEXT_LIKE or mime.endswith(("+json", "+xml"))


def _enum_name(value) -> str:
    return str(getattr(value, "value", value) or "")


class GeminiProvider(Provider):
    name = "gemini"

    def __init__(self):
        self._client: genai.Client | None = None

    @property
    def model(self) -> str:
        return settings.GEMINI_MODEL

    def supports_files(self, mime_type: str) -> bool:
        mime = (mime_type or "").lower()
        return mime.startswith(FILE_FAMILIES) or mime == "application/pdf" or is_text_like(mime)

    # -- the three roles ---------------------------------------------------------------

    def extract(self, *, text: str, files: list[FilePart], source: str) -> Extraction:
        client = self._get_client()
        uploaded: list[str] = []
        try:
            parts, file_lines, unreadable = self._file_parts(client, files, text=text, uploaded=uploaded)
            prompt = prompts.extract_prompt(text=text, source=source, file_lines=file_lines, unreadable=unreadable)
            contents = [types.Content(role="user", parts=[types.Part.from_text(text=prompt), *parts])]
            raw = self._generate(contents, system=prompts.EXTRACT_SYSTEM, schema=prompts.ExtractionSchema)
        finally:
            self._delete_uploads(client, uploaded)
        return prompts.to_extraction(prompts.parse_json(raw, prompts.ExtractionSchema, label="Gemini"))

    def consolidate(self, memories: list[MemoryNote]) -> ConsolidationResult:
        raw = self._generate(
            prompts.consolidate_prompt(memories), system=prompts.CONSOLIDATE_SYSTEM, schema=prompts.ConsolidationSchema
        )
        return prompts.to_consolidation(prompts.parse_json(raw, prompts.ConsolidationSchema, label="Gemini"))

    def judge_updates(self, *, new: MemoryNote, candidates: list[MemoryNote]) -> list[UpdateJudgement]:
        if not candidates:
            return []
        raw = self._generate(
            prompts.updates_prompt(new=new, candidates=candidates), system=prompts.UPDATES_SYSTEM, schema=prompts.UpdatesSchema
        )
        data = prompts.parse_json(raw, prompts.UpdatesSchema, label="Gemini")
        return prompts.to_updates(data, allowed={c.id for c in candidates})

    def answer(self, *, question: str, context: AnswerContext) -> str:
        if not context.memories and not context.consolidations:
            return "I have no memories to answer from yet."
        return self._generate(prompts.answer_prompt(question=question, context=context), system=prompts.ANSWER_SYSTEM).strip()

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    # -- plumbing ----------------------------------------------------------------------

    def _get_client(self) -> genai.Client:
        # Built on first use, not in __init__: a missing key must fail the call (and so
        # mark the memory failed with a reason), not the code that picked the provider.
        if self._client is None:
            self._client = api.client()
        return self._client

    def _generate(self, contents, *, system: str, schema=None) -> str:
        client = self._get_client()
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=0.2,
            **({"response_mime_type": "application/json", "response_schema": schema} if schema else {}),
        )

        def once() -> str:
            try:
                response = client.models.generate_content(model=self.model, contents=contents, config=config)
            except Exception as exc:
                raise self._translate(exc) from None
            return self._reply_text(response, structured=schema is not None)

        return retries.call_with_retries(once, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label="Gemini")

    def _translate(self, exc: Exception) -> Exception:
        return api.translate(exc)

    @staticmethod
    def _reply_text(response: types.GenerateContentResponse, *, structured: bool) -> str:
        if not response.candidates:
            feedback = response.prompt_feedback
            reason = _enum_name(feedback.block_reason) if feedback else ""
            if reason:
                raise ProviderError(f"Gemini blocked the request ({reason}); the input was not processed.")
            raise ProviderError("Gemini returned no candidates.")
        candidate = response.candidates[0]
        finish = _enum_name(candidate.finish_reason)
        if finish in BLOCKING_FINISH_REASONS:
            raise ProviderError(f"Gemini stopped its reply for {finish.lower().replace('_', ' ')} reasons.")
        text = response.text or ""
        if not text.strip():
            raise ProviderError(f"Gemini returned an empty reply (finish reason {finish or 'unknown'}).")
        if structured and finish == "MAX_TOKENS":
            raise ProviderError("Gemini's reply was cut off at its output limit before the JSON was complete.")
        return text

    def _file_parts(self, client, files: list[FilePart], *, text: str, uploaded: list[str]):
        """Parts to send, a line per attached file for the prompt, and a line per file
        the model will not see (so the summary can say so)."""
        parts, lines, unreadable = [], [], []
        for f in files:
            mime = (f.mime_type or "application/octet-stream").lower()
            described = f"{f.name} ({mime}, {f.size:,} bytes)"
            if is_text_like(mime) and text.strip():
                lines.append(f"{described}: its text is the input below")
                continue
            if not self.supports_files(mime):
                unreadable.append(f"{described}: Gemini cannot read this file type")
                continue
            if f.size > FILES_API_LIMIT_BYTES:
                unreadable.append(f"{described}: larger than the Files API limit")
                continue
            # Text formats go as plain text: Gemini reads text/plain whatever the dialect.
            send_mime = "text/plain" if is_text_like(mime) else mime
            if f.size <= INLINE_LIMIT_BYTES:
                parts.append(types.Part.from_bytes(data=f.read_bytes(), mime_type=send_mime))
            else:
                parts.append(self._upload(client, f, send_mime, uploaded))
            lines.append(described)
        return parts, lines, unreadable

    def _upload(self, client, f: FilePart, mime: str, uploaded: list[str]) -> types.Part:
        def once():
            try:
                return client.files.upload(
                    file=str(f.path), config=types.UploadFileConfig(mime_type=mime, display_name=f.name[:500])
                )
            except Exception as exc:
                raise self._translate(exc) from None

        remote = retries.call_with_retries(once, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label="Gemini file upload")
        uploaded.append(remote.name)
        deadline = time.monotonic() + FILE_ACTIVE_TIMEOUT_SECONDS
        while _enum_name(remote.state) != "ACTIVE":
            if _enum_name(remote.state) == "FAILED":
                why = remote.error.message if remote.error and remote.error.message else "no reason given"
                raise ProviderError(f"Gemini could not process the uploaded file {f.name}: {why}")
            if time.monotonic() > deadline:
                raise ProviderError(
                    f"Gemini was still processing the uploaded file {f.name} after {FILE_ACTIVE_TIMEOUT_SECONDS:.0f}s.",
                    retryable=True,
                )
            retries.sleep(FILE_POLL_SECONDS)
            name = remote.name

            def poll(name=name):
                try:
                    return client.files.get(name=name)
                except Exception as exc:
                    raise self._translate(exc) from None

            remote = retries.call_with_retries(poll, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label="Gemini file status")
        return types.Part.from_uri(file_uri=remote.uri, mime_type=remote.mime_type or mime)

    @staticmethod
    def _delete_uploads(client, names: list[str]) -> None:
        # The Files API expires uploads after two days anyway: a failed delete is logged, not raised.
        for name in names:
            try:
                client.files.delete(name=name)
            except Exception as exc:
                log.warning("could not delete uploaded Gemini file %s: %s", name, type(exc).__name__)
