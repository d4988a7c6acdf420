"""A logging filter that keeps one-time sign-in links out of log lines. Django logs the
path of every refused request ("Bad Request: /welcome/<token>/"); gunicorn's access log
is handled by memoryagent/gunicorn.conf.py's logger class, which uses the same function."""

from __future__ import annotations

import logging
import re

WELCOME_TOKEN_RE = re.compile(r"(/welcome/)[^/\s?\"']+")


def redact(text: str) -> str:
    return WELCOME_TOKEN_RE.sub(r"\1[redacted]", text)


class RedactFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
