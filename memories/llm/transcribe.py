"""Speech to text through an OpenAI-compatible transcription endpoint.

POST {MEMORY_TRANSCRIBE_BASE_URL}/audio/transcriptions (multipart: file, model,
response_format=json) -> {"text": "..."}. whisper.cpp's server, faster-whisper servers
and OpenAI speak it. The standard library is enough for one multipart POST.
Without a URL nothing is sent anywhere: recordings keep their metadata only.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings

from .base import ProviderError

# Larger recordings are left to a multimodal provider (OpenAI's own endpoint takes 25 MB).
MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_TRANSCRIPT_CHARS = 500_000


def configured() -> bool:
    return bool(settings.MEMORY_TRANSCRIBE_BASE_URL)


def label() -> str:
    host = urlsplit(settings.MEMORY_TRANSCRIBE_BASE_URL).netloc or settings.MEMORY_TRANSCRIBE_BASE_URL
    return f"speech-to-text at {host} ({settings.MEMORY_TRANSCRIBE_MODEL})"


def transcribe(path: Path, *, name: str, mime_type: str) -> str:
    """The words spoken in a recording. ProviderError (retryable for 429/5xx/timeouts)
    when the endpoint fails; the recording stays as it was."""
    size = path.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise ProviderError(f"The recording is {size:,} bytes, more than the {MAX_UPLOAD_BYTES:,} a transcription request takes.")
    boundary = uuid.uuid4().hex
    safe_name = name.replace('"', "").replace("\r", "").replace("\n", "") or "audio"
    parts = [
        _field(boundary, "model", settings.MEMORY_TRANSCRIBE_MODEL),
        _field(boundary, "response_format", "json"),
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe_name}"\r\n'
            f"Content-Type: {mime_type or 'application/octet-stream'}\r\n\r\n"
        ).encode()
        + path.read_bytes()
        + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ]
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Accept": "application/json"}
    if settings.MEMORY_TRANSCRIBE_API_KEY:
        headers["Authorization"] = f"Bearer {settings.MEMORY_TRANSCRIBE_API_KEY}"
    url = settings.MEMORY_TRANSCRIBE_BASE_URL.rstrip("/") + "/audio/transcriptions"
    request = urllib.request.Request(url, data=b"".join(parts), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.MEMORY_LLM_TIMEOUT_SECONDS) as response:
            body = response.read(MAX_TRANSCRIPT_CHARS * 4 + 1024)
    except urllib.error.HTTPError as exc:
        retryable = exc.code in (408, 409, 425, 429) or exc.code >= 500
        raise ProviderError(f"The transcription endpoint answered {exc.code}.", retryable=retryable) from None
    except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        raise ProviderError(f"The transcription endpoint could not be reached ({exc}).", retryable=True) from None
    try:
        text = json.loads(body).get("text", "")
    except (ValueError, AttributeError):
        raise ProviderError("The transcription endpoint sent something other than JSON with a text field.") from None
    if not isinstance(text, str):
        raise ProviderError("The transcription endpoint sent a text field that is not text.")
    return " ".join(text.split())[:MAX_TRANSCRIPT_CHARS]


def _field(boundary: str, name: str, value: str) -> bytes:
    return f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
