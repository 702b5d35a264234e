"""The adapter contract: the only surface where a memory system meets the harness.

An adapter subclasses :class:`MemoryAdapter`. Three operations are required
(:meth:`reset`, :meth:`ingest`, :meth:`query`); the rest have honest defaults
(no maintenance operations, no snapshot support). Capabilities are class
attributes. The harness wraps every call (timing, failures, event capture);
adapters only translate.

What an adapter never sees: reference answers, evidence labels, probe kinds or
anything else from the probe set beyond the question text. The harness builds
the arguments below itself, so that cannot happen by accident.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

Stage = Literal[
    "eligible", "ineligible", "executed", "skipped", "error", "output", "selected", "in_prompt"
]
"""Fidelity stages (protocol section 5) plus their negative twins."""

STAGES: tuple[str, ...] = (
    "eligible", "ineligible", "executed", "skipped", "error", "output", "selected", "in_prompt"
)


class ReplayTurn(BaseModel):
    """A turn as the adapter receives it: the trajectory's turn on the simulated clock."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn_id: str
    """Turn id; fragments cite it as their source."""
    session_id: str
    """Session the turn belongs to."""
    conversation_id: str
    """The trajectory (conversation) the turn belongs to."""
    index: int
    """0-based position in the trajectory's replay order."""
    timestamp: datetime
    """Simulated time the turn was said (after clock compression)."""
    role: str
    """Speaker role (`user`, `assistant`, ...)."""
    speaker: str | None = None
    """Speaker name, where the trajectory has one."""
    content: str
    """What was said."""


class Fragment(BaseModel):
    """One piece of context a system returns for a query, in prompt order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """Text that would be placed in the answer prompt."""
    source_turn_ids: tuple[str, ...] = ()
    """Turns this fragment was derived from. Empty means unattributed."""
    tokens: int | None = None
    """The system's own token estimate for the fragment (harness recounts anyway)."""
    mechanisms: tuple[str, ...] = ()
    """Mechanisms that contributed this fragment (its attribution)."""
    score: float | None = None
    """The system's ranking score, if it has one."""
    kind: str = "memory"
    """Free label: `memory`, `recent`, `slot`, `summary`, ... . Kinds in
    `lsrep.provenance.DERIVED_KINDS` (`summary`, `fact`, ...) declare derived text."""
    derived: bool = False
    """The text is derived (extracted, summarised, rewritten), not a turn's words, whatever `kind`
    says: judged by content, exempt from `unsourced`; its citations are checked by content too."""


class Speaker(BaseModel):
    """One speaker of a conversation, as `reset` announces it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The turns' `speaker`, or their `role` when they name none."""
    role: str
    """The role of this speaker's first turn (`user`, `assistant`, ...)."""


class Participants(BaseModel):
    """Who a conversation is between, and whose memory it is (given to `reset` when it asks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    owner: str | None
    """The memory's owner / user identity: the speaker of the first `user`-role turn (else the first
    speaker); libraries keyed by user (mem0's `user_id`, LangMem's namespace) use it."""
    speakers: tuple[Speaker, ...] = ()
    """Every speaker, in order of first appearance."""

    @classmethod
    def of_turns(cls, turns) -> Participants:
        seen: dict[str, Speaker] = {}
        for t in turns:
            name = t.speaker or t.role
            seen.setdefault(name, Speaker(name=name, role=t.role))
        users = [s.name for s in seen.values() if s.role == "user"]
        owner = users[0] if users else next(iter(seen), None)
        return cls(owner=owner, speakers=tuple(seen.values()))


def accepts_participants(cls: type) -> bool:
    """Whether a class's `reset` takes `participants=` (named, or through **kwargs)."""
    import inspect

    try:
        params = inspect.signature(cls.reset).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return "participants" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class QueryResult(BaseModel):
    """What a system gives back for a probe question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fragments: tuple[Fragment, ...] = ()
    """Context the system would give a model, in order."""
    answer: str | None = None
    """The system's own answer, where it owns an answering stage (system mode)."""
    context_text: str | None = None
    """The exact context block the system would inject, if it formats one itself."""
    truncated_tokens: int = 0
    """Tokens the system dropped to respect a context limit (0 = none)."""


class MechanismSpec(BaseModel):
    """A mechanism a system claims, and whether it can be switched off."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Dotted name, e.g. `thalia.retriever.semantic`."""
    description: str
    """One line on what it does."""
    can_disable: bool = True
    """Whether a condition may switch it off for an ablation."""
    stages: tuple[Stage, ...] | None = None
    """Stages this mechanism is expected to reach when it has work (docs/fidelity.md), e.g. a
    retrieval leg `("eligible", "executed", "output", "selected", "in_prompt")`, a provider that
    only executes `("eligible", "executed")`. None: `eligible` and `executed` only, so the audit
    never calls it defective for producing no output."""


class FidelityEvent(BaseModel):
    """A mechanism reporting one stage of its work (protocol section 5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: Literal["fidelity"] = "fidelity"
    """Discriminator for the trace-event union."""
    mechanism: str
    """Dotted mechanism name, one the adapter declares."""
    stage: Stage
    """Which stage this event reports."""
    reason: str | None = None
    """Why (for `ineligible`, `skipped`, `error`, or a note)."""
    count: int | None = None
    """How many items (candidates, fragments, facts...)."""
    ids: tuple[str, ...] = ()
    """Item ids the stage concerns (fragment or candidate ids)."""
    source_turn_ids: tuple[str, ...] = ()
    """Turn ids the items derive from."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Effective parameters, JSON-serialisable."""


class LanguageModel(Protocol):
    """One-method model protocol injected into systems that call a model."""

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        """Return the assistant text for OpenAI-style chat messages."""
        ...


class Embedder(Protocol):
    """Text embedder; every row of the result is one input's vector."""

    name: str

    def embed(self, texts: Sequence[str]) -> Any:
        """Return a 2-D float array with one L2-normalised row per text."""
        ...


@dataclass(frozen=True)
class AdapterSetup:
    """Everything the harness hands an adapter when it builds it."""

    options: BaseModel
    """The adapter's validated `Options` instance."""
    disabled: frozenset[str] = frozenset()
    """Mechanisms switched off for this condition (ablation)."""
    state_dir: Path | None = None
    """A private directory the adapter may keep files in."""
    retrieval_budget: int | None = None
    """Context-token budget the campaign gives every system, if it declares one."""
    embedder: Embedder | None = None
    """The campaign's embedder, for systems that embed."""
    embedding_text: str = "content"
    """The campaign's embedding-text policy (`content`, `speaker`, `date-speaker`): what text of
    a turn a system embeds (`lsrep.adapters.formatting.embedding_text`)."""
    llm: LanguageModel | None = None
    """Model for system-internal calls and system-mode answers (None: offline stand-ins)."""
    seed: int = 0
    """Seed for anything random inside the system."""
    memory_llm: Any = None
    """The condition's memory-side chat model (`lsrep.memory_model.handles.MemoryLLM`: `base_url`,
    `api_key`, `model`, `chat(...)`), a local OpenAI-compatible gateway; None when it has none."""
    memory_embedder: Any = None
    """The condition's memory-side embedder (`lsrep.memory_model.handles.MemoryEmbedder`: `base_url`,
    `api_key`, `model`, `dimensions`, `embed(texts)`), on the same gateway; None when it has none."""


class SnapshotNotSupported(RuntimeError):
    """Raised by adapters that cannot snapshot their state."""


class EmptyOptions(BaseModel):
    """Options model for adapters that take none."""

    model_config = ConfigDict(extra="forbid")


EventSink = Callable[[FidelityEvent], None]


WHEN_MODEL_IS = "when-model-is"
"""A `deterministic` value: the system is deterministic when its models are (offline, or temperature 0)."""
DETERMINISM_VALUES = (True, False, WHEN_MODEL_IS)


def expects_determinism(declared: bool | str, *, models_deterministic: bool) -> bool:
    """Whether identical replays must agree: as declared, or, for `WHEN_MODEL_IS`, as the models are."""
    if declared not in DETERMINISM_VALUES:
        raise ValueError(f"deterministic = {declared!r}: expected True, False or {WHEN_MODEL_IS!r}")
    return models_deterministic if declared == WHEN_MODEL_IS else bool(declared)


class MemoryAdapter:
    """Base class for adapters. Subclass it and implement reset, ingest and query."""

    name: ClassVar[str] = ""
    """Registry name (set by the registry entry)."""
    version: ClassVar[str] = "0"
    """Adapter version, recorded in the run manifest."""
    Options: ClassVar[type[BaseModel]] = EmptyOptions
    """Pydantic model of the adapter's options; validated from `key=value` or TOML."""
    mechanisms: ClassVar[tuple[MechanismSpec, ...]] = ()
    """Mechanisms the system claims."""
    maintenance_operations: ClassVar[frozenset[str]] = frozenset()
    """Named maintenance operations the system supports."""
    supports_snapshot: ClassVar[bool] = False
    """Whether snapshot()/restore() work (required for the isolated access policy)."""
    deterministic: ClassVar[bool | str] = True
    """Same inputs give the same outputs (checked by the conformance suite). `WHEN_MODEL_IS`
    (`"when-model-is"`): deterministic exactly when the models it is given are (see `expects_determinism`)."""
    answers: ClassVar[bool] = False
    """The system owns an answering stage (system mode)."""
    context_limit: ClassVar[int | None] = None
    """Largest context (tokens) the system returns, if it declares one."""
    honours_budget: ClassVar[bool] = False
    """The system keeps its returned context within `AdapterSetup.retrieval_budget` (checked by conformance)."""
    embeds: ClassVar[str | None] = None
    """What text of a turn the system embeds with the campaign's embedder: None (it embeds nothing with
    it), `"campaign"` (the campaign's `[embedder] text` policy, `AdapterSetup.embedding_text`), or a
    description of the text it embeds instead, and the report then shows the arm as unmatched."""
    distributions: ClassVar[tuple[str, ...]] = ()
    """Distributions (PyPI names) the adapter wraps, e.g. `("mem0ai", "qdrant-client")`: their installed
    versions are recorded in the run manifest."""
    host_reusable: ClassVar[bool] = False
    """The adapter keeps all its state in its instance and its `state_dir` (no module-level state, no
    thread or process outliving `close`), so the harness may build a later unit's instance in the same
    adapter host once this one is closed (the host first drops the instance, its snapshots, its query
    cache, the last simulated time and every file in its folder). Only for units that give the adapter
    no model and no remote embedder. False (the default): every unit gets a new host process."""

    def __init__(self, setup: AdapterSetup) -> None:
        self.setup = setup
        self._sink: EventSink | None = None

    # -- required -------------------------------------------------------------------------
    def reset(self, *, conversation_id: str, now: datetime) -> None:
        """Empty all state; the next ingest starts a new history. An adapter whose `reset` also takes
        `participants: Participants | None = None` is given the conversation's speakers and owner."""
        raise NotImplementedError

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        """Add one turn to memory."""
        raise NotImplementedError

    def query(self, question: str, *, now: datetime) -> QueryResult:
        """Return the context (and optionally the answer) for a question."""
        raise NotImplementedError

    # -- optional, with honest defaults -----------------------------------------------------
    def end_session(self, session_id: str, *, now: datetime) -> None:
        """A session boundary was reached (default: nothing to do)."""

    def maintain(self, operation: str, *, now: datetime) -> None:
        """Run a named maintenance operation listed in `maintenance_operations`."""
        raise NotImplementedError(f"{type(self).__name__} supports no maintenance operation")

    def snapshot(self) -> Any:
        """Return an opaque snapshot of the whole state."""
        raise SnapshotNotSupported(f"{type(self).__name__} cannot snapshot its state")

    def restore(self, snapshot: Any) -> None:
        """Restore a snapshot returned by :meth:`snapshot`."""
        raise SnapshotNotSupported(f"{type(self).__name__} cannot restore a snapshot")

    def state_digest(self) -> str:
        """SHA-256 over the whole state; default hashes `setup.state_dir`."""
        if self.setup.state_dir is None:
            raise SnapshotNotSupported(f"{type(self).__name__} exposes no state to hash")
        return digest_directory(self.setup.state_dir)

    def close(self) -> None:
        """Release files and connections (default: nothing)."""

    # -- events -----------------------------------------------------------------------------
    def bind_events(self, sink: EventSink | None) -> None:
        """Harness hook: where emitted events go."""
        self._sink = sink

    def emit(self, mechanism: str, stage: Stage, **fields: Any) -> None:
        """Report one fidelity stage of a mechanism."""
        if self._sink is not None:
            self._sink(FidelityEvent(mechanism=mechanism, stage=stage, **fields))

    def enabled(self, mechanism: str) -> bool:
        """Whether a mechanism is on in this condition."""
        return mechanism not in self.setup.disabled

    @classmethod
    def mechanism_names(cls) -> tuple[str, ...]:
        return tuple(m.name for m in cls.mechanisms)


def digest_directory(root: Path) -> str:
    """SHA-256 over relative paths and bytes of every file below root, in sorted order."""
    h = hashlib.sha256()
    root = Path(root)
    if not root.exists():
        return h.hexdigest()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class DirectorySnapshot:
    """A copy of a state directory, for systems whose whole state lives in files."""

    path: Path
    _tmp: tempfile.TemporaryDirectory = field(repr=False)

    @classmethod
    def take(cls, state_dir: Path) -> DirectorySnapshot:
        tmp = tempfile.TemporaryDirectory(prefix="lsrep-snap-")
        dest = Path(tmp.name) / "state"
        shutil.copytree(state_dir, dest)
        return cls(path=dest, _tmp=tmp)

    def restore_into(self, state_dir: Path) -> None:
        """Replace state_dir's contents with the snapshot's."""
        shutil.rmtree(state_dir, ignore_errors=True)
        shutil.copytree(self.path, state_dir)
