"""Structured logs: one JSON object a line (MEMORY_LOG_FORMAT=json), for a log collector."""

import json
import logging
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else was passed in `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        return json.dumps(entry, ensure_ascii=False)
