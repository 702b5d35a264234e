"""Errors the CLI turns into one clear line and a non-zero exit."""

from __future__ import annotations

from pathlib import Path


class LsrepError(Exception):
    """Base for errors shown to users without a traceback."""


class InputError(LsrepError):
    """A user file is malformed: names the file, the line (or record) and the reason."""

    def __init__(self, path: Path | str, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class ConfigError(LsrepError):
    """A campaign or option is inconsistent with what is registered or declared."""


def pydantic_reason(exc: Exception) -> str:
    """Condense a pydantic ValidationError into one readable clause."""
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    parts = []
    for err in errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__")
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


class CampaignConfigError(InputError, ConfigError):
    """A ConfigError found while checking a campaign, reported with the campaign file's path."""
