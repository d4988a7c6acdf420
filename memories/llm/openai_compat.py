"""Any OpenAI-compatible chat endpoint (Ollama, llama.cpp server, vLLM, LM Studio).

POST {OPENAI_BASE_URL}/chat/completions, JSON-schema structured output for extraction and
consolidation, plain text for answers. Images travel as data-URL image parts; other binary
files cannot be sent to a chat endpoint, so the memory says which ones were not read.
The standard library's urllib is enough for one JSON POST and adds no dependency.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import socket
import urllib.error
import urllib.request

from django.conf import settings

from ..modelapi.openai import http_error
from ..modelapi.redact import scrub_secrets
from ..modelapi.retries import Retryable, call_with_retries
from . import prompts
from .base import AnswerContext, ConsolidationResult, Extraction, FilePart, MemoryNote, Provider, ProviderError, UpdateJudgement

# The image types vision models behind these servers accept as data URLs.
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
# A data URL is sent in one JSON body: keep it to what servers take in one request.
INLINE_IMAGE_LIMIT_BYTES = 20 * 1024 * 1024
# The output cap of each role, by the setting that holds it (read at call time, so a test or
# an operator's change applies to the next call).
MAX_TOKENS_SETTING = {
    "extract": "OPENAI_MAX_TOKENS_EXTRACT",
    "consolidate": "OPENAI_MAX_TOKENS_CONSOLIDATE",
    "updates": "OPENAI_MAX_TOKENS_UPDATES",
    "answer": "OPENAI_MAX_TOKENS_ANSWER",
}
TEXT_LIKE = {"application/json", "application/xml", "application/yaml", "application/x-yaml"}
# Request fields not every server takes, and what to send instead (None: leave it out).
# OpenAI's reasoning models refuse max_tokens for max_completion_tokens; a server may refuse
# a seed. Refused once by an endpoint, a field is not sent to it again by this process.
FALLBACKS = {"max_tokens": "max_completion_tokens", "seed": None}
_refused: dict[str, set[str]] = {}


class _FieldRefused(Exception):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def refused_field(status: int, message: str, body: dict) -> str:
    """The field of FALLBACKS that a 400 reply names, when this request sent it; else ""."""
    if status not in (400, 422):
        return ""
    return next((name for name in FALLBACKS if name in body and re.search(rf"\b{name}\b", message)), "")


def is_text_like(mime: str) -> bool:
    return mime.startswith("text/") or mime in TEXT_LIKE or mime.endswith(("+json", "+xml"))


class OpenAICompatProvider(Provider):
    name = "openai_compat"

    @property
    def model(self) -> str:
        return settings.OPENAI_MODEL

    def supports_files(self, mime_type: str) -> bool:
        return (mime_type or "").lower() in IMAGE_TYPES

    # -- the three roles ---------------------------------------------------------------

    def extract(self, *, text: str, files: list[FilePart], source: str) -> Extraction:
        images, lines, unreadable = [], [], []
        for f in files:
            mime = (f.mime_type or "application/octet-stream").lower()
            described = f"{f.name} ({mime}, {f.size:,} bytes)"
            if is_text_like(mime) and text.strip():
                lines.append(f"{described}: its text is the input below")
            elif self.supports_files(mime) and f.size <= INLINE_IMAGE_LIMIT_BYTES:
                data = base64.b64encode(f.read_bytes()).decode("ascii")
                images.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
                lines.append(described)
            else:
                unreadable.append((f, mime, described))
        notes = [
            f"The {mime} file {f.name} could not be read by this endpoint"
            + (" (too large to send inline)" if self.supports_files(mime) else "")
            + "; only its name and any text read from it were used."
            for f, mime, _ in unreadable
        ]
        if not text.strip() and not images:
            # Nothing the model could read: asking it would only invite a made-up summary.
            return Extraction(
                summary=" ".join(f"File {d}." for _, _, d in unreadable) + " " + " ".join(notes),
                entities=[f.name for f, _, _ in unreadable],
                topics=sorted({m.split("/")[0] for _, m, _ in unreadable}),
                importance=0.3,
            )
        cannot = [d + ": this endpoint cannot read it" for _, _, d in unreadable]
        prompt = prompts.extract_prompt(text=text, source=source, file_lines=lines, unreadable=cannot)
        # A plain string where there is no image: not every server accepts content arrays.
        content = [{"type": "text", "text": prompt}, *images] if images else prompt
        raw = self._chat(content, role="extract", system=prompts.EXTRACT_SYSTEM, schema=prompts.ExtractionSchema)
        result = prompts.to_extraction(prompts.parse_json(raw, prompts.ExtractionSchema, label=self._label))
        if notes:
            result.summary = f"{result.summary} {' '.join(notes)}".strip()
        return result

    def consolidate(self, memories: list[MemoryNote]) -> ConsolidationResult:
        raw = self._chat(
            prompts.consolidate_prompt(memories),
            role="consolidate",
            system=prompts.CONSOLIDATE_SYSTEM,
            schema=prompts.ConsolidationSchema,
            # One connection a pair at most: all a valid reply can hold.
            max_items={"connections": len(memories) * (len(memories) - 1) // 2},
        )
        return prompts.to_consolidation(prompts.parse_json(raw, prompts.ConsolidationSchema, label=self._label))

    def judge_updates(self, *, new: MemoryNote, candidates: list[MemoryNote]) -> list[UpdateJudgement]:
        if not candidates:
            return []
        raw = self._chat(
            prompts.updates_prompt(new=new, candidates=candidates),
            role="updates",
            system=prompts.UPDATES_SYSTEM,
            schema=prompts.UpdatesSchema,
            max_items={"updates": len(candidates)},
        )
        data = prompts.parse_json(raw, prompts.UpdatesSchema, label=self._label)
        return prompts.to_updates(data, allowed={c.id for c in candidates})

    def answer(self, *, question: str, context: AnswerContext) -> str:
        if not context.memories and not context.consolidations:
            return "I have no memories to answer from yet."
        reply = self._chat(prompts.answer_prompt(question=question, context=context), role="answer", system=prompts.ANSWER_SYSTEM)
        return reply.strip()

    # -- plumbing ----------------------------------------------------------------------

    @property
    def _label(self) -> str:
        return "The OpenAI-compatible endpoint"

    def _endpoint(self) -> str:
        base = (settings.OPENAI_BASE_URL or "").strip().rstrip("/")
        if not base:
            raise ProviderError("openai_compat is selected but OPENAI_BASE_URL is not set (e.g. http://localhost:11434/v1).")
        if not base.startswith(("http://", "https://")):
            raise ProviderError("OPENAI_BASE_URL must start with http:// or https://.")
        if not settings.OPENAI_MODEL:
            raise ProviderError("openai_compat is selected but OPENAI_MODEL is not set (the model name the server knows).")
        return base + "/chat/completions"

    def _chat(self, content, *, role: str, system: str, schema=None, max_items: dict[str, int] | None = None) -> str:
        url = self._endpoint()
        body = {
            "model": settings.OPENAI_MODEL,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": content}],
            "temperature": 0.2,
        }
        # Always a cap: a small local model that loops writes until its context is full,
        # minutes on a CPU, and the call times out instead of failing with a reason.
        max_tokens = getattr(settings, MAX_TOKENS_SETTING[role])
        if max_tokens > 0:
            body["max_tokens"] = max_tokens
        if settings.OPENAI_SEED is not None:
            body["seed"] = settings.OPENAI_SEED
        for name in _refused.get(url, ()):
            self._fall_back(body, name)
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.__name__.removesuffix("Schema").lower(),
                    "strict": True,
                    "schema": prompts.openai_json_schema(schema, max_items=max_items),
                },
            }
        while True:
            try:
                return self._post(url, body, role=role, structured=schema is not None)
            except _FieldRefused as refused:
                _refused.setdefault(url, set()).add(refused.name)
                self._fall_back(body, refused.name)

    @staticmethod
    def _fall_back(body: dict, name: str) -> None:
        value = body.pop(name, None)
        if value is not None and FALLBACKS[name]:
            body[FALLBACKS[name]] = value

    def _post(self, url: str, body: dict, *, role: str, structured: bool) -> str:
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if settings.OPENAI_API_KEY:
            headers["Authorization"] = f"Bearer {settings.OPENAI_API_KEY}"

        def once() -> str:
            request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=settings.MEMORY_LLM_TIMEOUT_SECONDS) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                error = self._http_error(exc)
                if name := refused_field(exc.code, str(error), body):
                    raise _FieldRefused(name) from None
                raise error from None
            except (TimeoutError, socket.timeout):
                raise Retryable(f"no reply within {settings.MEMORY_LLM_TIMEOUT_SECONDS:g}s") from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                    raise Retryable(f"no reply within {settings.MEMORY_LLM_TIMEOUT_SECONDS:g}s") from None
                reason = scrub_secrets(str(exc.reason))
                raise Retryable(f"could not connect to the endpoint ({reason})") from None
            except (http.client.HTTPException, ConnectionError) as exc:
                raise Retryable(f"the connection failed ({type(exc).__name__})") from None
            return self._reply_text(raw, role=role, structured=structured)

        return call_with_retries(once, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label=self._label)

    def _http_error(self, exc: urllib.error.HTTPError) -> Exception:
        return http_error(exc, self._label)

    def _reply_text(self, raw: bytes, *, role: str, structured: bool) -> str:
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            snippet = scrub_secrets(raw[:120].decode("utf-8", errors="replace"))
            raise ProviderError(f"{self._label} returned something other than a chat completion: {snippet!r}") from None
        if message.get("refusal"):
            raise ProviderError(f"{self._label} refused: {str(message['refusal'])[:300]}")
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts even for text
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        finish = choice.get("finish_reason") or ""
        if finish == "content_filter":
            raise ProviderError(f"{self._label} withheld its reply (content filter).")
        if finish == "length":
            # Not retried: the same prompt with the same cap is cut off again, and a model
            # that loops would fill any larger one too. A cut-off answer is never shown: its
            # last statement (and citation) may be half a sentence.
            what = "before the JSON was complete" if structured else "so the answer is not shown"
            raise ProviderError(
                f"{self._label}'s reply was cut off at its output limit ({self._cap(role)}) {what}; "
                f"raise {MAX_TOKENS_SETTING[role]} if the model needs more room."
            )
        if not content or not str(content).strip():
            raise ProviderError(f"{self._label} returned an empty reply (finish reason {finish or 'unknown'}).")
        return str(content)

    @staticmethod
    def _cap(role: str) -> str:
        max_tokens = getattr(settings, MAX_TOKENS_SETTING[role])
        return f"max_tokens {max_tokens}" if max_tokens > 0 else "the server's own limit"
