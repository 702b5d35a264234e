"""Write the native trajectory and probe-set files (protocol section 8).

Every builder in this package ends here, so the files they produce look the
same: one JSON object per line, keys in the order the spec lists them, optional
fields left out when they hold nothing (``speaker``, ``category``, ``aliases``,
``valid_until``, ``evidence``, an abstention probe's empty ``references``, and
``ask_at`` when it is the default ``"every_checkpoint"``), UTF-8 without
escaping, ``\\n`` line ends. ``before_first`` is always written: the spec asks
each probe to declare it. The same records give the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from lsrep.protocol.models import Probe, ReferenceVersion, Trajectory, Turn


def turn_record(turn: Turn) -> dict[str, Any]:
    """A turn as its native JSON object, keys in spec order."""
    record: dict[str, Any] = {
        "turn_id": turn.turn_id,
        "session_id": turn.session_id,
        "timestamp": turn.timestamp.isoformat(),
        "role": turn.role,
    }
    if turn.speaker is not None:
        record["speaker"] = turn.speaker
    record["content"] = turn.content
    return record


def version_record(version: ReferenceVersion) -> dict[str, Any]:
    """A reference version as its native JSON object, keys in spec order."""
    record: dict[str, Any] = {"answer": version.answer}
    if version.aliases:
        record["aliases"] = list(version.aliases)
    record["valid_from"] = version.valid_from
    if version.valid_until is not None:
        record["valid_until"] = version.valid_until
    if version.evidence:
        record["evidence"] = list(version.evidence)
    return record


def probe_record(probe: Probe) -> dict[str, Any]:
    """A probe as its native JSON object, keys in spec order."""
    record: dict[str, Any] = {
        "probe_id": probe.probe_id,
        "question": probe.question,
        "kind": probe.kind,
    }
    if probe.category is not None:
        record["category"] = probe.category
    record["before_first"] = probe.before_first
    if probe.references:
        record["references"] = [version_record(v) for v in probe.references]
    if probe.ask_at != "every_checkpoint":
        record["ask_at"] = list(probe.ask_at)
    return record


def dumps_line(record: dict[str, Any]) -> str:
    """One JSON Lines line (with its newline) in the native style."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_trajectory(path: Path | str, turns: Iterable[Turn] | Trajectory) -> Path:
    """Write a trajectory file; refuses duplicate turn ids and decreasing timestamps."""
    items = turns.turns if isinstance(turns, Trajectory) else turns
    lines: list[str] = []
    seen: set[str] = set()
    previous: Turn | None = None
    for turn in items:
        if turn.turn_id in seen:
            raise ValueError(f"duplicate turn_id {turn.turn_id!r}")
        if previous is not None and turn.timestamp < previous.timestamp:
            raise ValueError(
                f"turn {turn.turn_id!r} at {turn.timestamp.isoformat()} is earlier than "
                f"turn {previous.turn_id!r} at {previous.timestamp.isoformat()}"
            )
        seen.add(turn.turn_id)
        previous = turn
        lines.append(dumps_line(turn_record(turn)))
    return _write_atomically(Path(path), lines)


def write_probes(path: Path | str, probes: Iterable[Probe]) -> Path:
    """Write a probe-set file; refuses duplicate probe ids."""
    lines: list[str] = []
    seen: set[str] = set()
    for probe in probes:
        if probe.probe_id in seen:
            raise ValueError(f"duplicate probe_id {probe.probe_id!r}")
        seen.add(probe.probe_id)
        lines.append(dumps_line(probe_record(probe)))
    return _write_atomically(Path(path), lines)


def dangling_turn_ids(probes: Iterable[Probe], turns: Iterable[Turn]) -> dict[str, list[str]]:
    """Probe id -> the turn ids it names that are not in ``turns`` (empty when all resolve)."""
    known = {turn.turn_id for turn in turns}
    missing: dict[str, list[str]] = {}
    for probe in probes:
        absent = [turn_id for turn_id in probe.named_turn_ids() if turn_id not in known]
        if absent:
            missing[probe.probe_id] = absent
    return missing


def session_turn_times(
    start: datetime,
    count: int,
    *,
    next_start: datetime | None = None,
    step: timedelta = timedelta(minutes=1),
) -> list[datetime]:
    """Timestamps for a session's ``count`` turns: ``start`` plus ``step`` per turn.

    Datasets date sessions, not turns. When the session's turns would reach
    ``next_start`` (the next session's start, or the question time), the step
    shrinks to whole seconds so the last turn stays before it; when there is no
    room at all every turn gets ``start``. Timestamps never decrease.
    """
    if count <= 0:
        return []
    if next_start is not None and start + step * count > next_start:
        room = max(0, int((next_start - start).total_seconds()))
        step = timedelta(seconds=room // (count + 1))
    return [start + step * i for i in range(count)]


def _write_atomically(path: Path, lines: list[str]) -> Path:
    # A half-written native file would later fail as "malformed": write aside, then rename.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(lines)
    os.replace(partial, path)
    return path
