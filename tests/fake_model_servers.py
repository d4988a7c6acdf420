"""Fake model APIs on 127.0.0.1 for provider tests: the real SDK / HTTP client code runs,
only the far end of the socket is ours.

Each server answers model calls from a queue of scripted responses (status, body, headers,
optional delay) and records every request it saw. The fake Gemini also speaks the Files API
(resumable upload, get, delete) the way google-genai drives it.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body or b"null")

    @property
    def route(self) -> str:
        return urlsplit(self.path).path


@dataclass
class Scripted:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic stand-in embedding: words hashed into dim buckets (texts sharing
    words are close), so tests can tell a vector of one text from another's."""
    import hashlib
    import math

    out = [0.0] * dim
    for word in text.lower().split():
        h = int.from_bytes(hashlib.blake2b(word.strip(".,!?").encode(), digest_size=8).digest(), "big")
        out[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    # Not unit length on purpose (as gemini-embedding-001 below 3072 dimensions): the client normalises.
    return [3.0 * x / norm for x in out]


class EmbeddingFailures:
    """Embedding endpoints answer from fake_vector unless a failure status is queued."""

    def __init__(self):
        self.embed_failures: deque[int] = deque()
        self.embed_requests: list[dict] = []

    def fail_embeddings(self, *statuses: int):
        self.embed_failures.extend(statuses)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A handler still sleeping through a scripted delay must not hold up shutdown.
    block_on_close = False


class FakeServer:
    """Base: a threaded HTTP server with a response queue and a request log."""

    def __init__(self):
        self.requests: list[Recorded] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without this each reply waits on a delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # keep test output quiet
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                record = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with owner._lock:
                    owner.requests.append(record)
                reply = owner.respond(record)
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    headers = {"Content-Type": "application/json", **reply.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_DELETE = _handle

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- scripting -----------------------------------------------------------------------

    def enqueue(self, status: int = 200, body=b"", headers: dict | None = None, delay: float = 0.0):
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self._queue.append(Scripted(status, body, dict(headers or {}), delay))

    def next_scripted(self) -> Scripted:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Scripted(500, json.dumps({"error": {"code": 500, "message": "fake server: nothing scripted"}}).encode())

    def respond(self, record: Recorded) -> Scripted:
        return self.next_scripted()

    def calls(self, suffix: str) -> list[Recorded]:
        """Recorded requests whose path ends with suffix (query string ignored)."""
        return [r for r in self.requests if r.route.endswith(suffix)]


# ------------------------------------------------------------------------------------------
# Gemini


class FakeGemini(FakeServer, EmbeddingFailures):
    """generateContent from the queue; the Files API built in.

    `file_states` is the sequence of states files.get reports for an uploaded file
    (the upload itself answers with the first one), so polling can be exercised.
    """

    def __init__(self):
        super().__init__()
        EmbeddingFailures.__init__(self)
        self.file_states: list[str] = ["PROCESSING", "ACTIVE"]
        self.uploads: dict[str, dict] = {}  # upload id -> {"meta", "data", "name"}
        self.files: dict[str, dict] = {}  # "files/x" -> {"meta", "data", "polls", "deleted"}
        self._ids = itertools.count(1)

    # Replies shaped like the real API's GenerateContentResponse.
    def enqueue_text(self, text: str, *, finish_reason: str = "STOP", **kwargs):
        self.enqueue(200, self.generate_body(text, finish_reason=finish_reason), **kwargs)

    def enqueue_json(self, obj, **kwargs):
        self.enqueue_text(json.dumps(obj), **kwargs)

    def enqueue_error(self, status: int, message: str, *, api_status: str = "", headers: dict | None = None):
        self.enqueue(status, {"error": {"code": status, "message": message, "status": api_status or "ERROR"}}, headers)

    @staticmethod
    def generate_body(text: str, *, finish_reason: str = "STOP") -> dict:
        return {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": finish_reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "fake-gemini",
        }

    def generate_calls(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.route.endswith(":generateContent")]

    def _file_json(self, name: str, state: str) -> dict:
        meta = self.files[name]["meta"]
        return {
            "name": name,
            "displayName": meta.get("displayName") or meta.get("display_name") or "",
            "mimeType": meta.get("mimeType") or meta.get("mime_type") or "application/octet-stream",
            "sizeBytes": str(len(self.files[name]["data"])),
            "uri": f"{self.url}/v1beta/{name}",
            "state": state,
        }

    def respond(self, record: Recorded) -> Scripted:
        route = record.route
        if record.method == "POST" and route.endswith(":generateContent"):
            return self.next_scripted()
        if record.method == "POST" and route.endswith(":batchEmbedContents"):
            return self._embed(record)
        if record.method == "POST" and route.startswith("/upload/") and route.endswith("/files"):
            return self._upload(record)
        if route.startswith("/v1") and "/files/" in route:
            name = "files/" + route.rsplit("/files/", 1)[1]
            entry = self.files.get(name)
            if entry is None or entry["deleted"]:
                missing = {"error": {"code": 404, "message": f"{name} not found", "status": "NOT_FOUND"}}
                return Scripted(404, json.dumps(missing).encode())
            if record.method == "DELETE":
                entry["deleted"] = True
                return Scripted(200, b"{}")
            entry["polls"] += 1
            state = self.file_states[min(entry["polls"], len(self.file_states) - 1)]
            return Scripted(200, json.dumps(self._file_json(name, state)).encode())
        return Scripted(404, json.dumps({"error": {"code": 404, "message": f"no route {record.method} {route}"}}).encode())

    def _embed(self, record: Recorded) -> Scripted:
        body = record.json()
        self.embed_requests.append(body)
        if self.embed_failures:
            status = self.embed_failures.popleft()
            return Scripted(
                status, json.dumps({"error": {"code": status, "message": "fake embed failure", "status": "UNAVAILABLE"}}).encode()
            )
        if len(body["requests"]) > 100:
            return Scripted(
                400, b'{"error": {"code": 400, "message": "at most 100 requests in a batch", "status": "INVALID_ARGUMENT"}}'
            )
        out = []
        for request in body["requests"]:
            text = " ".join(p.get("text", "") for p in request["content"]["parts"])
            out.append({"values": fake_vector(text, int(request.get("outputDimensionality") or 3072))})
        return Scripted(200, json.dumps({"embeddings": out}).encode())

    def _upload(self, record: Recorded) -> Scripted:
        command = record.headers.get("x-goog-upload-command", "")
        query = parse_qs(urlsplit(record.path).query)
        if command == "start":
            upload_id = f"up{next(self._ids)}"
            self.uploads[upload_id] = {"meta": (record.json() or {}).get("file") or {}, "data": b""}
            self.uploads[upload_id]["meta"].setdefault("mimeType", record.headers.get("x-goog-upload-header-content-type"))
            location = f"{self.url}{urlsplit(record.path).path}?upload_id={upload_id}&upload_protocol=resumable"
            return Scripted(200, b"", {"x-goog-upload-url": location, "x-goog-upload-status": "active"})
        upload_id = (query.get("upload_id") or [""])[0]
        upload = self.uploads.get(upload_id)
        if upload is None:
            return Scripted(404, b'{"error": {"code": 404, "message": "unknown upload"}}', {"x-goog-upload-status": "final"})
        offset = int(record.headers.get("x-goog-upload-offset") or 0)
        if offset != len(upload["data"]):
            return Scripted(400, b'{"error": {"code": 400, "message": "bad offset"}}', {"x-goog-upload-status": "final"})
        upload["data"] += record.body
        if "finalize" not in command:
            return Scripted(200, b"", {"x-goog-upload-status": "active"})
        name = f"files/fake{upload_id}"
        self.files[name] = {"meta": upload["meta"], "data": upload["data"], "polls": 0, "deleted": False}
        return Scripted(
            200, json.dumps({"file": self._file_json(name, self.file_states[0])}).encode(), {"x-goog-upload-status": "final"}
        )


def inline_parts(record: Recorded) -> list[dict]:
    """The inlineData parts of a generateContent request, bytes decoded."""
    found = []
    for content in record.json().get("contents", []):
        for part in content.get("parts", []):
            if "inlineData" in part:
                blob = part["inlineData"]
                # Proto JSON accepts either spelling; google-genai sends mime_type.
                mime = blob.get("mimeType") or blob.get("mime_type")
                found.append({"mimeType": mime, "data": base64.b64decode(blob["data"])})
    return found


def text_of_request(record: Recorded) -> str:
    """All text parts of a generateContent request's contents, joined."""
    return "\n".join(
        part["text"] for content in record.json().get("contents", []) for part in content.get("parts", []) if "text" in part
    )


# ------------------------------------------------------------------------------------------
# OpenAI-compatible


class FakeOpenAI(FakeServer, EmbeddingFailures):
    """POST /v1/chat/completions from the queue (the base URL includes /v1, as for Ollama);
    POST /v1/embeddings answers with fake_vector (EMBED_DIM), or a queued failure."""

    EMBED_DIM = 48
    MAX_EMBED_INPUTS = 64

    def __init__(self):
        super().__init__()
        EmbeddingFailures.__init__(self)

    def respond(self, record: Recorded) -> Scripted:
        if record.method == "POST" and record.route == "/v1/chat/completions":
            return self.next_scripted()
        if record.method == "POST" and record.route == "/v1/embeddings":
            body = record.json()
            self.embed_requests.append(body)
            if self.embed_failures:
                status = self.embed_failures.popleft()
                return Scripted(status, json.dumps({"error": {"message": "fake embed failure", "code": status}}).encode())
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if len(inputs) > self.MAX_EMBED_INPUTS:
                return Scripted(400, b'{"error": {"message": "too many inputs"}}')
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t, self.EMBED_DIM)} for i, t in enumerate(inputs)
            ]
            return Scripted(200, json.dumps({"object": "list", "data": data[::-1], "model": body.get("model")}).encode())
        return Scripted(404, json.dumps({"error": {"message": f"no route {record.method} {record.route}"}}).encode())

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def enqueue_text(self, text: str, *, finish_reason: str = "stop", **kwargs):
        self.enqueue(200, self.completion_body(text, finish_reason=finish_reason), **kwargs)

    def enqueue_json(self, obj, **kwargs):
        self.enqueue_text(json.dumps(obj), **kwargs)

    def enqueue_error(self, status: int, message: str, *, headers: dict | None = None):
        self.enqueue(status, {"error": {"message": message, "type": "server_error", "code": status}}, headers)

    @staticmethod
    def completion_body(text: str, *, finish_reason: str = "stop") -> dict:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def completion_calls(self) -> list[Recorded]:
        return self.calls("/chat/completions")
