"""Read and validate the native files (protocol section 8).

Every check names the file, the line and the reason. Loaders read the whole
file before returning, so a bad file never yields a partial object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from lsrep.errors import InputError, pydantic_reason
from lsrep.protocol.models import Probe, ProbeSet, Trajectory, Turn

MAX_RECORD_BYTES = 256 * 1024 * 1024
"""Longest JSON Lines record accepted (a 30 MB turn is fine; a runaway line is not)."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    record: dict = {}
    for key, value in pairs:
        if key in record:
            raise _Bad(f"duplicate key {key!r} in one object")
        record[key] = value
    return record


def _no_constant(name: str) -> object:
    raise _Bad(f"{name} is not valid JSON")


class _Bad(ValueError):
    pass


def _unstorable(value: object, key: str = "") -> str | None:
    """The key of the first string holding a lone surrogate (not encodable as UTF-8), if any."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return key or "(value)"
        return None
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _unstorable(v, f"{key}[{i}]")
            if found:
                return found
        return None
    else:
        return None
    for k, v in items:
        found = _unstorable(k, f"{key}.{k}" if key else "(a key)") or _unstorable(v, f"{key}.{k}" if key else str(k))
        if found:
            return found
    return None


def json_records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file.

    Records are split on "\n" only: U+2028, U+0085 and the like are valid inside JSON
    strings. Duplicate keys, NaN/Infinity, lone surrogates (text that cannot be stored as
    UTF-8) and runaway nesting or line length are errors naming the line.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a JSON Lines file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    del data
    if text.startswith("\ufeff"):
        text = text[1:]
    seen_any = False
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_RECORD_BYTES:
            raise InputError(path, f"record is {len(line)} characters, over the {MAX_RECORD_BYTES} limit; "
                             "split the content", lineno)
        try:
            record = json.loads(line, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", lineno) from None
        except _Bad as exc:
            raise InputError(path, f"invalid JSON: {exc}", lineno) from None
        except RecursionError:
            raise InputError(path, "invalid JSON: nested too deeply", lineno) from None
        if not isinstance(record, dict):
            raise InputError(path, "each line must be a JSON object", lineno)
        if "\\u" in line:
            key = _unstorable(record)
            if key:
                raise InputError(path, f"field {key} holds a lone surrogate escape (e.g. \\ud800 without its "
                                 "pair), which cannot be stored as UTF-8 text; fix or remove the escape", lineno)
        seen_any = True
        yield lineno, record
    if not seen_any:
        raise InputError(path, "file has no records")


_json_lines = json_records


def load_trajectory(path: Path | str, trajectory_id: str | None = None) -> Trajectory:
    """Load a trajectory file; checks unique ids, zones, non-decreasing time, contiguous sessions."""
    path = Path(path)
    turns: list[Turn] = []
    line_of: dict[str, int] = {}
    closed_sessions: set[str] = set()
    for lineno, record in _json_lines(path):
        try:
            turn = Turn.model_validate(record)
        except ValidationError as exc:
            raise InputError(path, f"bad turn: {pydantic_reason(exc)}", lineno) from None
        if turn.turn_id in line_of:
            raise InputError(
                path, f"duplicate turn_id {turn.turn_id!r} (first on line {line_of[turn.turn_id]})", lineno
            )
        if turns:
            prev = turns[-1]
            if turn.timestamp < prev.timestamp:
                raise InputError(
                    path,
                    f"timestamp {turn.timestamp.isoformat()} is earlier than the previous turn's "
                    f"{prev.timestamp.isoformat()}",
                    lineno,
                )
            if turn.session_id != prev.session_id:
                closed_sessions.add(prev.session_id)
                if turn.session_id in closed_sessions:
                    raise InputError(
                        path, f"session {turn.session_id!r} resumes after it ended; sessions must be contiguous", lineno
                    )
        line_of[turn.turn_id] = lineno
        turns.append(turn)
    return Trajectory(trajectory_id=trajectory_id or path.name.split(".")[0], turns=tuple(turns))


def load_probes(path: Path | str, trajectory: Trajectory) -> ProbeSet:
    """Load a probe set and check it against its trajectory."""
    path = Path(path)
    index = trajectory.index_of()
    probes: list[Probe] = []
    seen: dict[str, int] = {}
    for lineno, record in _json_lines(path):
        try:
            probe = Probe.model_validate(record)
        except ValidationError as exc:
            raise InputError(path, f"bad probe: {pydantic_reason(exc)}", lineno) from None
        if probe.probe_id in seen:
            raise InputError(
                path, f"duplicate probe_id {probe.probe_id!r} (first on line {seen[probe.probe_id]})", lineno
            )
        for turn_id in probe.named_turn_ids():
            if turn_id not in index:
                raise InputError(
                    path,
                    f"probe {probe.probe_id!r} names turn {turn_id!r}, which is not in trajectory "
                    f"{trajectory.trajectory_id!r}",
                    lineno,
                )
        _check_versions(path, lineno, probe, index)
        seen[probe.probe_id] = lineno
        probes.append(probe)
    return ProbeSet(probes=tuple(probes))


def _check_versions(path: Path, lineno: int, probe: Probe, index: dict[str, int]) -> None:
    spans: list[tuple[int, float, str]] = []
    for version in probe.references:
        start = index[version.valid_from]
        end = index[version.valid_until] if version.valid_until is not None else float("inf")
        if end <= start:
            raise InputError(
                path,
                f"probe {probe.probe_id!r}: version {version.answer!r} ends ({version.valid_until}) "
                f"before or when it starts ({version.valid_from})",
                lineno,
            )
        spans.append((start, end, version.answer))
    spans.sort()
    for (_s1, e1, a1), (s2, _e2, a2) in zip(spans, spans[1:], strict=False):
        if s2 < e1:
            raise InputError(
                path, f"probe {probe.probe_id!r}: versions {a1!r} and {a2!r} overlap in validity", lineno
            )
