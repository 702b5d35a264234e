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


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    seen_any = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", lineno) from None
        if not isinstance(record, dict):
            raise InputError(path, "each line must be a JSON object", lineno)
        seen_any = True
        yield lineno, record
    if not seen_any:
        raise InputError(path, "file has no records")


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
