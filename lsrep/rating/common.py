"""Rating constants, result records and small store helpers shared by the rating modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

RATER_LABELS: tuple[str, ...] = ("correct", "stale", "future", "abstained", "wrong")
RUBRIC_SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)
HUMAN_JUDGE = "human"
HUMAN_JUDGE_VERSION = "1"
RATINGS_FORMAT = "lsrep-ratings/1"
KEY_DIR = "KEY-do-not-share"
TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "rating"
PER_LABEL_METHOD = "one-vs-rest: Cohen's kappa and percent agreement on 'this label vs any other'"


# -- results ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PacketFiles:
    """What an export wrote."""

    packet_id: str
    """The packet's id (also in every ratings file)."""
    kind: str
    """`rating` or `adjudication`."""
    items: int
    """Items in the packet."""
    html: Path | None
    """The HTML form (None when there was nothing to write)."""
    csv: Path | None
    """The CSV twin."""
    key: Path | None
    """The key, kept apart from what raters see."""
    agreed: int = 0
    """Adjudication: items the raters agreed on (recorded without an adjudicator)."""


@dataclass(frozen=True)
class RatingsImport:
    """What an import stored."""

    packet_id: str
    raters: tuple[str, ...]
    items: int


@dataclass(frozen=True)
class RaterPair:
    """Agreement between two raters over the items both rated."""

    rater_a: str
    rater_b: str
    n: int
    label_percent: float
    label_kappa: float
    rubric_weighted_kappa: float
    """Linearly weighted kappa over the 1-5 scale."""


@dataclass(frozen=True)
class LabelAgreement:
    """One-vs-rest agreement of a judge with the human label for one outcome label."""

    label: str
    n_human: int
    """Items the adjudicated human label gives this label."""
    n_judge: int
    n_both: int
    percent: float
    kappa: float


@dataclass(frozen=True)
class JudgeAgreement:
    """An automatic judge against the adjudicated human labels."""

    judge: str
    n: int
    percent: float
    kappa: float
    per_label: tuple[LabelAgreement, ...]


@dataclass(frozen=True)
class AgreementReport:
    """Rater-rater and judge-vs-human agreement for one rating packet."""

    packet_id: str
    items: int
    raters: tuple[str, ...]
    rater_pairs: tuple[RaterPair, ...]
    adjudicated: int
    by_source: dict[str, int]
    """Adjudicated items by source (`agreement`, `adjudicator`)."""
    pending: int
    """Items the raters disagree on with no adjudication yet."""
    judges: tuple[JudgeAgreement, ...]
    per_label_method: str = PER_LABEL_METHOD


@dataclass(frozen=True)
class HeadlineLabel:
    """The label that counts for one observation."""

    judge: str
    outcome: str | None
    correct: int | None


@dataclass(frozen=True)
class HeadlineJudges:
    """Which judge's labels the headline numbers use, per observation."""

    judge_of_record: str
    labels: dict[str, HeadlineLabel]
    """obs_id -> the label that counts."""
    by_judge: dict[str, int] = field(default_factory=dict)
    """Observations per judge whose label counts."""

    @property
    def human(self) -> int:
        return self.by_judge.get(HUMAN_JUDGE, 0)



def _now() -> str:
    # Wall-clock time for bookkeeping only.
    return datetime.now(UTC).isoformat(timespec="seconds")
