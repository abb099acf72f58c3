"""Redaction of credentials in settings and log lines (pure stdlib).

Secrets belong in environment variables named by config (``api_key_env``); whatever a config
file holds anyway is redacted before it is stored (``lineage_runs.config_json``) or logged:

- a value whose key names a credential (:data:`SECRET_KEY_PATTERN`: ``password``,
  ``sasl.password``, ``fs.s3a.secret.key``, ``api_key``, ``token`` …), and every value of a
  header mapping (``custom_headers``, ``headers``);
- in any string: a URL's userinfo (``https://user:pw@host``), credential parameters of a URL's
  query or a JDBC URL (``?token=…``, ``;password=…``), ``Authorization``/``Bearer`` values and
  ``key=value`` pairs whose key names a credential.

Examples:
    >>> redact_text("posting to https://bob:pw@marquez:5000/api?api_key=abc&x=1")
    'posting to https://***@marquez:5000/api?api_key=***&x=1'
    >>> redact_config({"url": "jdbc:sqlserver://h;user=a;password=p", "sasl.password": "p"})
    {'url': 'jdbc:sqlserver://h;user=a;password=***', 'sasl.password': '***'}
    >>> redact_config({"api_key_env": "OL_KEY", "custom_headers": {"X-Tenant": "t"}})
    {'api_key_env': 'OL_KEY', 'custom_headers': {'X-Tenant': '***'}}
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "***"

SECRET_KEY_PATTERN = (
    r"(?i)(?:^|[._\- ])(?:pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|jaas|cookie"
    r"|api[._\-]?key|access[._\-]?key|private[._\-]?key|account[._\-]?key|client[._\-]?secret"
    r"|sas|signature|sig|auth|authorization|session[._\-]?key|key)(?:$|[._\- ])"
)
"""A setting or parameter name that holds a credential (``password``, ``sasl.password``,
``fs.s3a.secret.key``, ``fs.azure.account.key.acct.blob.core.windows.net``, ``X-Api-Key``)."""

ENV_NAME_SUFFIX = "_env"
"""Settings ending in this name an environment variable: the name is kept, never the value."""

HEADER_KEYS: tuple[str, ...] = ("custom_headers", "headers", "http_headers")
"""Mappings whose every value is redacted (headers carry tokens under any name)."""

_SECRET_KEY_RE = re.compile(SECRET_KEY_PATTERN)
_USERINFO_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@'\"]+@")
_PAIR_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9_])((?:[A-Za-z0-9]+[._\-])*(?:pass(?:word|wd|phrase)?|pwd|secret|token"
    r"|credentials?|api[._\-]?key|access[._\-]?key|private[._\-]?key|account[._\-]?key"
    r"|client[._\-]?secret|sas[._\-]?token|sig|signature|auth)"
    r"[\"']?\s*[=:]\s*[\"']?)([^\s&;,'\"}{)]+)"
)
_BEARER_RE = re.compile(
    r"(?i)\b((?:authorization\s*[:=]\s*)?(?:bearer|basic)|authorization\s*[:=])(\s*)([^\s'\",]+)"
)


def is_secret_key(name: str) -> bool:
    """True when a setting named ``name`` holds a credential (``*_env`` names never do).

    Examples:
        >>> [is_secret_key(k) for k in ("password", "sasl.password", "api_key_env", "topic")]
        [True, True, False, False]
    """
    if name.lower().endswith(ENV_NAME_SUFFIX):
        return False
    return _SECRET_KEY_RE.search(name) is not None


def redact_text(text: str) -> str:
    """``text`` with URL userinfo, credential parameters and bearer tokens replaced."""
    text = _USERINFO_RE.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _PAIR_RE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _BEARER_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def redact_config(value: Any, key: str = "") -> Any:
    """A copy of a settings dump (``model_dump()``) with every credential redacted."""
    if isinstance(value, Mapping):
        if key.lower() in HEADER_KEYS:
            return {str(k): REDACTED for k in value}
        return {str(k): redact_config(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_config(v, key) for v in value]
    if key and value is not None and is_secret_key(key) and not isinstance(value, bool):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    return value


def settings_json(settings: Any) -> str:
    """A pydantic settings model as the JSON stored in ``lineage_runs.config_json``, redacted."""
    return json.dumps(redact_config(settings.model_dump(mode="json")), sort_keys=True)


class RedactingFormatter(logging.Formatter):
    """A formatter whose every line (message, arguments, traceback) goes through
    :func:`redact_text`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))
