"""Secret masking for raw capture and the note tool's secret refusal.

Recognised patterns only. IBANs and telephone numbers are deliberately left alone (SEED).
"""

from __future__ import annotations

import re

MASK = "[secret masqué]"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{10,}"),
    re.compile(r"\bghp_[A-Za-z0-9]{10,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{10,}"),
    re.compile(r"\bAKIA[A-Z0-9]{16}\b"),
    re.compile(r"\bxox[bp]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+"),
    re.compile(r"(?<=\bBearer )[A-Za-z0-9._\-]{8,}", re.IGNORECASE),
)

_KEYWORD_VALUE = re.compile(
    r"\b(password|mot de passe|passwd|secret|token)(\s*[:=]\s*)(?!\[secret)([^\s,;]+)", re.IGNORECASE
)
_HIGH_ENTROPY = re.compile(r"(?<![A-Za-z0-9_\-])(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}")


def mask_secrets(text: str) -> tuple[str, int]:
    """Return the text with recognised secrets replaced, and how many were replaced."""
    count = 0

    def sub(pattern: re.Pattern[str], repl, value: str) -> str:
        nonlocal count
        value, n = pattern.subn(repl, value)
        count += n
        return value

    for pattern in _PATTERNS:
        text = sub(pattern, MASK, text)
    text = sub(_KEYWORD_VALUE, lambda m: m.group(1) + m.group(2) + MASK, text)
    text = sub(_HIGH_ENTROPY, MASK, text)
    return text, count


def contains_secret(text: str) -> bool:
    """Whether any recognised secret pattern occurs in the text."""
    return mask_secrets(text)[1] > 0
