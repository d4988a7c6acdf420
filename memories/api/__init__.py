"""The JSON API under /api/, built with django-ninja, one module per resource: memories,
consolidations, recall, space (status, export, clear) and visual (graph, timeline, stats);
original.py keeps the original design's endpoints as thin aliases into them, and auth.py
says who is calling (an API token or the browser's session).

Why ninja: the request and response shapes are pydantic models (already a dependency for
structured model output), so validation errors become 422s with the field named, and the
OpenAPI schema is generated from the same types the views use — the schema the fuzz test
reads cannot drift from the code. It routes through plain Django views (sessions, CSRF,
the ORM and middleware work unchanged), and it ships Swagger UI and Redoc inside the
package, so the interactive docs are served locally with no CDN.

Every error body is {"detail": "<a sentence>"}; validation errors add "errors" (field by field).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, TooManyFieldsSent, TooManyFilesSent
from django.db import OperationalError
from django.http import Http404, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.template import engines
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError

from .. import __version__
from ..llm import ProviderError
from ..models import Memory
from ..services import RefusedError, RejectedContentError, busy
from .auth import session_auth, token_auth
from .common import RateLimited
from .consolidations import router as consolidations_router
from .history import router as history_router
from .memories import router as memories_router
from .original import router as original_router
from .recall import router as recall_router
from .space import router as space_router
from .visual import router as visual_router

log = logging.getLogger(__name__)

OFFLINE_DOCS = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} — API</title></head>
<body>
<h1>{{ title }}</h1>
<p>The OpenAPI schema is at <a href="{{ schema_url }}">{{ schema_url }}</a>.
Authenticate with <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<p>The interactive docs are served from django-ninja's own static files; they appear here once
<code>"ninja"</code> is in <code>INSTALLED_APPS</code>.</p>
</body></html>"""


class LocalSwagger(Swagger):
    """Swagger UI from the files inside the ninja package, never from a CDN.

    Ninja falls back to a CDN page when it is not an installed app (its templates and
    static files are then not found); this renders a plain local page in that case instead.
    """

    def render_page(self, request, api, **kwargs):
        if "ninja" in settings.INSTALLED_APPS:
            response = super().render_page(request, api, **kwargs)
            # Ninja's page has no viewport tag, so a phone lays it out as a shrunken desktop.
            if b'name="viewport"' not in response.content:
                response.content = response.content.replace(
                    b"<head>", b'<head>\n    <meta name="viewport" content="width=device-width, initial-scale=1">', 1
                )
            return response
        template = engines["django"].from_string(OFFLINE_DOCS)
        return HttpResponse(template.render({"title": api.title, "schema_url": self.get_openapi_url(api, kwargs)}, request))


api = NinjaAPI(
    title="Always-On Memory",
    version=__version__,
    description=(
        "Ingest notes and files, consolidate them, and ask questions answered from your own memories only. "
        "Send `Authorization: Bearer <token>` (make one on /settings/tokens/ or with `manage.py create_token USERNAME`); "
        "a signed-in browser session works too, with the X-CSRFToken header on writes."
    ),
    auth=[token_auth, session_auth],
    docs=LocalSwagger(settings={"persistAuthorization": False}),
    urls_namespace="api",
)
# One router per resource; the original design's endpoints are thin aliases into them.
api.add_router("", original_router)
api.add_router("", memories_router)
api.add_router("", history_router)
api.add_router("", consolidations_router)
api.add_router("", recall_router)
api.add_router("", space_router)
api.add_router("", visual_router)


def _error(request, status: int, detail: str, **extra) -> HttpResponse:
    return api.create_response(request, {"detail": detail, **extra}, status=status)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    message = (
        str(exc) if str(exc) != "Unauthorized" else ("Authentication required: send 'Authorization: Bearer <token>' or sign in.")
    )
    response = _error(request, 401, message)
    response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


# Parts of an error's location that name where ninja read a value, not the field itself.
WRAPPERS = {"query", "body", "path", "payload", "params", "filters", "paging"}


@api.exception_handler(ValidationError)
def _invalid(request, exc):
    errors = []
    for error in exc.errors:
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in WRAPPERS)
        errors.append({"field": where or "body", "message": error.get("msg", "invalid")})
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or "Invalid request."
    return _error(request, 422, detail, errors=errors)


@api.exception_handler(HttpError)
def _http_error(request, exc):
    message = str(exc)
    if message.startswith("Cannot parse request body"):  # ninja's words for broken JSON
        message = "The request body is not valid JSON."
    return _error(request, exc.status_code, message)


@api.exception_handler(RateLimited)
def _rate_limited(request, exc):
    response = _error(request, 429, str(exc))
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Http404)
def _not_found(request, exc):
    return _error(request, 404, "Not found.")


@api.exception_handler(Memory.DoesNotExist)
def _no_such_memory(request, exc):
    # access_memory's refusal, alike for a missing memory and someone else's: "No memory N."
    return _error(request, 404, str(exc))


@api.exception_handler(RefusedError)
def _refused(request, exc):
    # Content deleted before stays out until restored: a conflict with a recorded decision.
    return _error(request, 409 if isinstance(exc, RejectedContentError) else 400, str(exc))


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc):
    limit_mb = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // (1024 * 1024)
    return _error(request, 413, f"The request body is larger than {limit_mb} MB; upload big inputs as a file (multipart).")


@api.exception_handler(TooManyFilesSent)
def _too_many_files(request, exc):
    return _error(
        request, 413, f"The request carries more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files; send one file a request."
    )


@api.exception_handler(TooManyFieldsSent)
def _too_many_fields(request, exc):
    return _error(request, 413, f"The request carries more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} form fields.")


@api.exception_handler(SuspiciousOperation)
def _suspicious(request, exc):
    # Anything else Django refuses while reading a request: a JSON 400, like every API error.
    return _error(request, 400, "The request could not be read.")


@api.exception_handler(MultiPartParserError)
def _bad_multipart(request, exc):
    return _error(request, 400, f"The multipart body could not be read: {exc}")


@api.exception_handler(ProviderError)
def _provider_failed(request, exc):
    log.warning("API call failed at the provider: %s", exc)
    return _error(request, 502, f"The model provider failed: {exc}")


@api.exception_handler(OperationalError)
def _database_busy(request, exc):
    if not busy.is_busy(exc):
        raise exc  # a real fault: the server's 500 and its log, not a message that hides it
    log.warning("API call refused: the database stayed busy (%s)", exc)
    response = _error(request, 503, busy.MESSAGE)
    response["Retry-After"] = str(busy.RETRY_AFTER_SECONDS)
    return response
