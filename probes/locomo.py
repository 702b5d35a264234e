"""LoCoMo (``locomo10.json`` and cuts of it) to native trajectory and probe files.

Decisions, each visible in the output or the conversion report:

- **Turns.** ``turn_id`` is LoCoMo's ``dia_id`` (``D3:7``), so evidence maps
  one to one; ``session_id`` is ``session_3``. Only ``session_N`` lists that
  exist are read (conv-26 declares dates for sessions it does not have).
- **Roles.** Both speakers are people, neither an assistant: every turn has
  role ``user`` and ``speaker`` = the name. A system that mines only user turns
  still sees both people's facts; the name tells them apart.
- **Images.** A shared image's BLIP caption is kept as text, appended as
  ``[shares an image: <caption>]`` (the release has no images, only captions).
- **Timestamps.** A session's date string (``"1:56 pm on 8 May, 2023"``) is its
  first turn's time, read as UTC (LoCoMo gives no zone). Each next turn is one
  minute later, compressed to whole seconds if that would reach the next
  session's start (:func:`probes.native.session_turn_times`).
- **Probes.** One per QA, id ``<sample_id>:q<index>`` (0-based index in ``qa``).
  A probe is asked from the checkpoint after its latest evidence turn onward:
  its single version is valid from that turn, ``before_first`` is ``skip``.
  Every answerable question is ``current``: LoCoMo facts have one version and
  no revisions, where ``historical`` would score identically but claim a
  revision structure LoCoMo lacks; the category keeps the temporal label.
  Category 5 (adversarial) becomes ``abstention`` (the official scorer credits
  "not mentioned"), asked from its latest evidence turn via ``ask_at``.
  A QA without usable evidence is asked at the final checkpoint only, like the
  original endpoint QA.
- **Answers.** Ints become strings. Category 3 answers are cut at the first
  ``;`` as the official scorer does; the full text stays as an alias.
- **Evidence quirks.** Lists packed into one string (``'D8:6; D9:17'``, space
  separated) are split, ``'D:11:26'`` is read as ``D11:26``, leading zeros are
  dropped; each repair is reported. A token naming no turn (``'D'``) or an id
  absent from the conversation (``D10:19`` in a 16-turn session) makes the QA
  dropped by default (``on_bad_evidence="drop"``), since the missing turn may
  be the latest evidence; ``"discard"`` keeps the QA on its remaining evidence.
  Either way the report names the QA and the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, Literal

from lsrep.probes.native import session_turn_times, write_probes, write_trajectory
from pydantic import BaseModel, ConfigDict

from lsrep.errors import InputError
from lsrep.protocol.models import Probe, ReferenceVersion, Trajectory, Turn

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo category numbers as the official ``task_eval/evaluation_stats.py`` uses them."""

BadEvidencePolicy = Literal["drop", "discard"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")],
        start=1,
    )
    for name in names
}
_SESSION_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_DIA_ID_EXTRA_COLON = re.compile(r"^D:(\d+):(\d+)$")
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")


class QANote(BaseModel):
    """What happened to one QA item that did not convert plainly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe_id: str
    """The probe id the QA has (or would have had)."""
    category: str
    """LoCoMo category name."""
    action: Literal["dropped", "repaired", "noted"]
    """Dropped (no probe written), repaired (written after a fix), noted (written as is)."""
    reason: str
    """What was wrong and what was done."""


class SampleReport(BaseModel):
    """The conversion of one LoCoMo sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample_id: str
    """LoCoMo sample id (``conv-26``)."""
    sessions: int
    """Sessions with turns."""
    turns: int
    """Turns written."""
    captioned_turns: int
    """Turns whose image caption was appended to the content."""
    qa_total: int
    """QA items in the source."""
    probes_written: int
    """Probes written (QA items minus dropped ones)."""
    written_by_category: dict[str, int]
    """Probes written, per category name."""
    source_by_category: dict[str, int]
    """QA items in the source, per category name."""
    notes: tuple[QANote, ...] = ()
    """Every dropped, repaired or noted QA item."""
    remarks: tuple[str, ...] = ()
    """Conversation-level observations (declared sessions without turns, clamped dates)."""

    @property
    def dropped(self) -> tuple[QANote, ...]:
        """Notes for QA items that produced no probe."""
        return tuple(n for n in self.notes if n.action == "dropped")


class ConversionReport(BaseModel):
    """The conversion of a LoCoMo file: what was kept, repaired and dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    """Path of the file read."""
    source_sha256: str
    """SHA-256 of its bytes."""
    on_bad_evidence: BadEvidencePolicy
    """Policy applied to evidence naming no existing turn."""
    samples: tuple[SampleReport, ...]
    """One entry per converted sample, in file order."""

    @property
    def qa_total(self) -> int:
        """QA items read."""
        return sum(s.qa_total for s in self.samples)

    @property
    def probes_written(self) -> int:
        """Probes written."""
        return sum(s.probes_written for s in self.samples)

    @property
    def dropped(self) -> tuple[QANote, ...]:
        """Every dropped QA item, across samples."""
        return tuple(n for s in self.samples for n in s.dropped)


@dataclass(frozen=True)
class LocomoConversation:
    """One converted sample: its turns, probes and report."""

    sample_id: str
    """LoCoMo sample id; also the trajectory id."""
    turns: tuple[Turn, ...]
    """Turns in replay order."""
    probes: tuple[Probe, ...]
    """One probe per QA item that survived conversion."""
    report: SampleReport
    """What was kept, repaired and dropped."""

    def trajectory(self) -> Trajectory:
        """The turns as a validated :class:`Trajectory`."""
        return Trajectory(trajectory_id=self.sample_id, turns=self.turns)


def build_locomo(
    path: Path | str,
    conversation_ids: list[str] | None = None,
    *,
    on_bad_evidence: BadEvidencePolicy = "drop",
    zone: tzinfo = UTC,
) -> list[LocomoConversation]:
    """Convert the samples of a LoCoMo file (all, or those named, in file order)."""
    conversations, _ = _build(Path(path), conversation_ids, on_bad_evidence, zone)
    return conversations


def convert_locomo(
    path: Path | str,
    out_dir: Path | str,
    conversation_ids: list[str] | None = None,
    *,
    on_bad_evidence: BadEvidencePolicy = "drop",
    zone: tzinfo = UTC,
    write_report: bool = True,
) -> ConversionReport:
    """Write ``<sample_id>.trajectory.jsonl`` and ``<sample_id>.probes.jsonl`` per sample.

    With ``write_report`` the report also goes to ``locomo-conversion.json``.
    """
    path, out = Path(path), Path(out_dir)
    conversations, digest = _build(path, conversation_ids, on_bad_evidence, zone)
    for conversation in conversations:
        write_trajectory(out / f"{conversation.sample_id}.trajectory.jsonl", conversation.turns)
        write_probes(out / f"{conversation.sample_id}.probes.jsonl", conversation.probes)
    report = ConversionReport(
        source=str(path),
        source_sha256=digest,
        on_bad_evidence=on_bad_evidence,
        samples=tuple(c.report for c in conversations),
    )
    if write_report:
        text = json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
        (out / "locomo-conversion.json").write_text(text, encoding="utf-8")
    return report


def parse_session_date(text: str, zone: tzinfo = UTC) -> datetime:
    """Parse a LoCoMo session date such as ``"1:56 pm on 8 May, 2023"``."""
    match = _SESSION_DATE.match(text)
    if match is None:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}")
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None or not 1 <= int(hour) <= 12:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}")
    hour24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), hour24, int(minute), tzinfo=zone)


def _build(
    path: Path, wanted: list[str] | None, policy: BadEvidencePolicy, zone: tzinfo
) -> tuple[list[LocomoConversation], str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a LoCoMo JSON file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror})") from None
    try:
        samples = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not a LoCoMo JSON file: {exc}") from None
    except RecursionError:
        raise InputError(path, "not a LoCoMo JSON file: nested too deeply") from None
    if not isinstance(samples, list):
        raise InputError(path, "expected a JSON list of samples")
    available = [str(s.get("sample_id")) for s in samples if isinstance(s, dict)]
    if wanted is not None:
        unknown = [w for w in wanted if w not in available]
        if unknown:
            raise InputError(path, f"no sample(s) {unknown} (the file has {available})")
    conversations = []
    for number, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise InputError(path, f"sample {number} is not an object")
        if wanted is not None and sample.get("sample_id") not in wanted:
            continue
        try:
            conversations.append(_convert_sample(sample, policy, zone))
        except (KeyError, TypeError, ValueError) as exc:
            name = sample.get("sample_id", f"#{number}")
            raise InputError(path, f"sample {name}: {exc}") from None
    return conversations, hashlib.sha256(raw).hexdigest()


def _convert_sample(sample: dict[str, Any], policy: BadEvidencePolicy, zone: tzinfo) -> LocomoConversation:
    sample_id = str(sample["sample_id"])
    turns, captioned, remarks = _sample_turns(sample["conversation"], zone)
    index = {turn.turn_id: i for i, turn in enumerate(turns)}
    probes: list[Probe] = []
    notes: list[QANote] = []
    source_counts: dict[str, int] = {}
    written_counts: dict[str, int] = {}
    for number, qa in enumerate(sample.get("qa", [])):
        category = CATEGORY_NAMES.get(qa.get("category"), f"category-{qa.get('category')}")
        source_counts[category] = source_counts.get(category, 0) + 1
        probe_id = f"{sample_id}:q{number:04d}"
        probe, qa_notes = _qa_probe(probe_id, category, qa, turns, index, policy)
        notes.extend(qa_notes)
        if probe is not None:
            probes.append(probe)
            written_counts[category] = written_counts.get(category, 0) + 1
    report = SampleReport(
        sample_id=sample_id,
        sessions=len({t.session_id for t in turns}),
        turns=len(turns),
        captioned_turns=captioned,
        qa_total=len(sample.get("qa", [])),
        probes_written=len(probes),
        written_by_category=_in_category_order(written_counts),
        source_by_category=_in_category_order(source_counts),
        notes=tuple(notes),
        remarks=tuple(remarks),
    )
    return LocomoConversation(sample_id, tuple(turns), tuple(probes), report)


def _in_category_order(counts: dict[str, int]) -> dict[str, int]:
    order = list(CATEGORY_NAMES.values())
    return dict(sorted(counts.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else 99, kv[0])))


def _sample_turns(conversation: dict[str, Any], zone: tzinfo) -> tuple[list[Turn], int, list[str]]:
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
    declared = sorted(
        int(key.split("_")[1])
        for key in conversation
        if re.fullmatch(r"session_\d+_date_time", key)
    )
    remarks: list[str] = []
    orphans = [n for n in declared if n not in numbers]
    if orphans:
        remarks.append(f"dates declared for sessions without turns, ignored: {orphans}")
    starts = [parse_session_date(conversation[f"session_{n}_date_time"], zone) for n in numbers]
    turns: list[Turn] = []
    seen: set[str] = set()
    captioned = 0
    for position, number in enumerate(numbers):
        start = starts[position]
        if turns and start < turns[-1].timestamp:
            remarks.append(
                f"session_{number} is dated {start.isoformat()}, before the previous session's "
                f"last turn; moved to {turns[-1].timestamp.isoformat()}"
            )
            start = turns[-1].timestamp
        following = starts[position + 1] if position + 1 < len(numbers) else None
        raw_turns = conversation[f"session_{number}"]
        times = session_turn_times(start, len(raw_turns), next_start=following)
        for raw, when in zip(raw_turns, times, strict=True):
            content = str(raw.get("text", "")).strip()
            caption = raw.get("blip_caption")
            if caption:
                content = f"{content} [shares an image: {caption}]".strip()
                captioned += 1
            if str(raw["dia_id"]) in seen:
                raise ValueError(f"duplicate dia_id {raw['dia_id']!r}")
            seen.add(str(raw["dia_id"]))
            turns.append(
                Turn(
                    turn_id=str(raw["dia_id"]),
                    session_id=f"session_{number}",
                    timestamp=when,
                    role="user",
                    speaker=str(raw["speaker"]),
                    content=content,
                )
            )
    return turns, captioned, remarks


def _qa_probe(
    probe_id: str,
    category: str,
    qa: dict[str, Any],
    turns: list[Turn],
    index: dict[str, int],
    policy: BadEvidencePolicy,
) -> tuple[Probe | None, list[QANote]]:
    notes: list[QANote] = []

    def note(action: Literal["dropped", "repaired", "noted"], reason: str) -> None:
        notes.append(QANote(probe_id=probe_id, category=category, action=action, reason=reason))

    evidence, repairs, unusable = _parse_evidence(qa.get("evidence") or [], index)
    for repair in repairs:
        note("repaired", repair)
    if unusable:
        if policy == "drop":
            note("dropped", "; ".join(unusable))
            return None, notes
        note("repaired", "discarded " + "; ".join(unusable))
    if evidence:
        anchor = max(evidence, key=index.__getitem__)
    else:
        anchor = turns[-1].turn_id
        note("noted", "no usable evidence: asked at the final checkpoint only")

    question = str(qa["question"]).strip()
    if category == "adversarial":
        if "answer" in qa:
            note("noted", f"adversarial QA also has answer {qa['answer']!r}; kept as abstention "
                          "as the official scorer does")
        probe = Probe(
            probe_id=probe_id, question=question, kind="abstention", category=category,
            ask_at=(anchor,),
        )
        return probe, notes

    if "answer" not in qa or str(qa["answer"]).strip() == "":
        note("dropped", "no answer")
        return None, notes
    answer, aliases = _answer_text(qa["answer"], category)
    version = ReferenceVersion(
        answer=answer, aliases=aliases, valid_from=anchor, evidence=tuple(evidence)
    )
    probe = Probe(
        probe_id=probe_id, question=question, kind="current", category=category,
        before_first="skip", references=(version,),
    )
    return probe, notes


def _answer_text(raw: Any, category: str) -> tuple[str, tuple[str, ...]]:
    text = str(raw).strip()
    if category == "open-domain" and ";" in text:
        head = text.split(";", 1)[0].strip()
        if head:
            return head, (text,)
    return text, ()


def _parse_evidence(
    raw_items: list[Any], index: dict[str, int]
) -> tuple[list[str], list[str], list[str]]:
    """Resolve evidence strings to turn ids: (ids in source order, repairs, unusable tokens)."""
    ids: list[str] = []
    repairs: list[str] = []
    unusable: list[str] = []
    for raw in raw_items:
        text = str(raw)
        pieces = [p for p in _EVIDENCE_SEPARATORS.split(text.strip()) if p]
        if len(pieces) > 1:
            repairs.append(f"split evidence {text!r} into {pieces}")
        for piece in pieces:
            canonical = _canonical_dia_id(piece)
            if canonical is None:
                unusable.append(f"evidence {piece!r} names no turn")
                continue
            if canonical != piece:
                repairs.append(f"read evidence {piece!r} as {canonical!r}")
            if canonical not in index:
                session, turn = _DIA_ID.match(canonical).groups()  # type: ignore[union-attr]
                in_session = sum(1 for t in index if t.startswith(f"D{session}:"))
                unusable.append(
                    f"evidence {canonical!r} is not a turn of this conversation "
                    f"(session {session} has {in_session} turns)"
                )
                continue
            if canonical not in ids:
                ids.append(canonical)
    return ids, repairs, unusable


def _canonical_dia_id(piece: str) -> str | None:
    match = _DIA_ID.match(piece) or _DIA_ID_EXTRA_COLON.match(piece)
    if match is None:
        return None
    session, turn = match.groups()
    return f"D{int(session)}:{int(turn)}"

