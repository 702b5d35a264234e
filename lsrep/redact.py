"""Secrets out of every error text: configured keys, auth header values, bearer tokens, key-shaped strings.

Applied where error text is made (the LLM client) and again where it is stored, printed or
reported, so an endpoint that echoes the request headers cannot put the key anywhere.
"""

from __future__ import annotations

import re

MASK = "[REDACTED]"
_SECRETS: set[str] = set()

_PATTERNS = (
    # A header or field named like a credential, in JSON, Python repr or HTTP form, whose value
    # looks like one (8+ characters with a digit: "api_key: unknown field" is left alone).
    re.compile(r"""(?i)((?:proxy-)?authorization|api[-_]?key|x-api-key|access[-_]?token|secret)"""
               r"""(["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?(?!\[REDACTED\])(?=[^"'\s,;}\]]*\d)([^"'\s,;}\]]{8,})"""),
    re.compile(r"(?i)\b(bearer|basic)\s+(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{4,}"),
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
)


def register_secret(value: str | None) -> None:
    """Remember a secret value (e.g. an API key read from the environment) to mask it everywhere."""
    if value and len(value) >= 4 and value != "no-key":
        _SECRETS.add(value)


def redact(text: str | None) -> str | None:
    """`text` with every known secret and credential-shaped substring masked."""
    if not text:
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _PATTERNS[2].sub(MASK, text)
