"""Campaign files: one TOML file fully determines a run."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lsrep.errors import InputError, pydantic_reason
from lsrep.protocol.schedule import ScheduleSpec


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrajectorySpec(Spec):
    """A trajectory and the probe set asked of it: native files, or a LoCoMo conversation."""

    id: str = Field(min_length=1)
    """Name used in results."""
    trajectory: Path | None = None
    """Trajectory JSON Lines (relative to the campaign file)."""
    probes: Path | None = None
    """Probe set JSON Lines (relative to the campaign file)."""
    locomo: Path | None = None
    """A LoCoMo file (locomo10.json schema), converted in memory instead of native files."""
    conversation: str | None = None
    """With `locomo`: the sample id to replay (default: the trajectory id)."""
    generate: dict[str, Any] | None = None
    """Generator settings (`probes.generator.GeneratorSpec` fields): a seeded synthetic trajectory."""

    @model_validator(mode="after")
    def _one_source(self) -> TrajectorySpec:
        native = self.trajectory is not None or self.probes is not None
        sources = int(native) + int(self.locomo is not None) + int(self.generate is not None)
        if sources != 1:
            raise ValueError(
                f"trajectory {self.id!r}: give exactly one source: trajectory+probes, locomo, or generate"
            )
        if native and (self.trajectory is None or self.probes is None):
            raise ValueError(f"trajectory {self.id!r}: needs both trajectory and probes")
        return self


class MemoryModelSpec(Spec):
    """A memory system's own model (`[memory_llm]`, `[memory_embedder]`): an endpoint, or `offline`.

    The same keys as an answerer's endpoint table, plus `kind`; `kind = "offline"` selects the
    built-in deterministic responder (`lsrep.memory_model.offline`), a labelled test instrument.
    `api_key_env = ""` is a keyless local server. See docs/memory-model.md.
    """

    kind: Literal["endpoint", "offline"] = "endpoint"
    """`endpoint`: an OpenAI-compatible server reached through LSREP's client; `offline`: the responder."""
    base_url: str | None = None
    """Endpoint root including the version path (kind `endpoint`)."""
    model: str | None = None
    """Model name sent upstream (kind `endpoint`); for `offline`, the name the gateway reports."""
    api_key_env: str = "OPENAI_API_KEY"
    """Variable holding the key (read by the harness only); empty for a server without auth."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature when the library sends none."""
    max_tokens: int = Field(default=1024, ge=1)
    """Completion limit reserved out of `context_window`."""
    seed: int | None = None
    """Seed added to requests that carry none."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    concurrency: int = Field(default=4, ge=1)
    context_window: int | None = Field(default=None, ge=1)
    """The model's window, if known (recorded; requests are passed as the library built them)."""
    price_prompt_per_1k: float | None = Field(default=None, ge=0)
    price_completion_per_1k: float | None = Field(default=None, ge=0)
    dimensions: int | None = Field(default=None, ge=1)
    """Embedder only: vector size when the request names none (offline default 1536)."""

    @model_validator(mode="after")
    def _endpoint_or_offline(self) -> MemoryModelSpec:
        if self.kind == "endpoint":
            missing = [k for k in ("base_url", "model") if not getattr(self, k)]
            if missing:
                raise ValueError(f"kind 'endpoint' needs {' and '.join(missing)} "
                                 "(or kind = \"offline\" for the built-in deterministic responder)")
        elif self.base_url is not None:
            raise ValueError("base_url is for kind 'endpoint'; kind 'offline' calls no server")
        return self


class ConditionSpec(Spec):
    """A system, its options and ablations: one arm of the experiment."""

    name: str = Field(min_length=1)
    """Condition name shown in reports."""
    system: str = Field(min_length=1)
    """Registered adapter name or `module:Class`."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Adapter options, validated against its `Options` model."""
    disable: tuple[str, ...] = ()
    """Mechanisms switched off (must be declared and switchable)."""
    schedule: Path | ScheduleSpec | None = None
    """This condition's own schedule (schedules as an experimental factor)."""
    answer_mode: Literal["context", "system"] | None = None
    """Override the campaign's answer mode for this condition."""
    context_format: Literal["harness", "system"] | None = None
    """Override the campaign's context format for this condition."""
    memory_llm: MemoryModelSpec | None = None
    """This condition's own memory-side chat model (overrides the campaign's `[memory_llm]`)."""
    memory_embedder: MemoryModelSpec | None = None
    """This condition's own memory-side embedder (overrides the campaign's `[memory_embedder]`)."""


class EndpointRef(Spec):
    """An OpenAI-compatible endpoint; the key comes from the named environment variable."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=1)
    seed: int | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    concurrency: int = Field(default=4, ge=1)
    context_window: int = Field(default=8192, ge=1)
    overflow: Literal["fail", "truncate_oldest"] = "fail"
    price_prompt_per_1k: float | None = Field(default=None, ge=0)
    price_completion_per_1k: float | None = Field(default=None, ge=0)


class AnswererSpec(Spec):
    """Who answers in context mode."""

    kind: Literal["extractive", "llm"] = "extractive"
    """`extractive`: the deterministic offline answerer; `llm`: a model endpoint."""
    context_window: int = Field(default=32768, ge=1)
    """The answerer's context window in tokens (the harness's estimate)."""
    overflow: Literal["fail", "truncate_oldest"] = "fail"
    """What to do with a prompt over the window: a failure row, or drop the oldest context."""
    endpoint: EndpointRef | None = None
    """Endpoint for `llm`."""
    min_overlap: int = Field(default=2, ge=1)
    """Extractive answerer: shared content words a context line needs to be given as the answer."""

    @model_validator(mode="after")
    def _endpoint_for_llm(self) -> AnswererSpec:
        if self.kind == "llm" and self.endpoint is None:
            raise ValueError("answerer kind 'llm' needs an [answerer.endpoint] table")
        return self


class JudgeSpec(Spec):
    """A judge run on every observation (the deterministic judge always runs too)."""

    name: str
    """Name in results."""
    kind: Literal["deterministic", "evolving", "longmemeval"] = "deterministic"
    """Which judge."""
    passes: int = Field(default=1, ge=1)
    """Passes per observation (majority vote)."""
    endpoint: EndpointRef | None = None
    """Endpoint for model-backed judges."""


class EmbedderSpec(Spec):
    """The embedder shared by every system that embeds."""

    kind: Literal["hashing", "openai", "minilm"] = "hashing"
    dim: int = Field(default=512, ge=1)
    endpoint: EndpointRef | None = None
    text: Literal["content", "speaker", "date-speaker"] = "content"
    """What of a turn every embedding system embeds: its content alone, `Speaker: content`, or
    `[YYYY-MM-DD HH:MM] Speaker (role): content` (adapters/formatting.py). One policy per
    campaign, so the arms compare retrieval, not text rendering; recorded in the manifest."""


class CampaignSpec(Spec):
    """A whole campaign as authored."""

    name: str = Field(min_length=1)
    """Campaign name."""
    description: str = ""
    """Free text shown in reports."""
    seed: int = 0
    """Master seed; each unit's seed derives from it."""
    repetitions: int = Field(default=1, ge=1)
    """Repetitions of every (condition, trajectory)."""
    store: Path = Path("runs/lsrep.sqlite")
    """Run store (relative to the campaign file)."""
    answer_mode: Literal["context", "system"] = "context"
    """Who answers: the harness's answerer (context) or each system (system)."""
    context_format: Literal["harness", "system"] = "harness"
    """What the answer prompt's memory context is: the harness's numbered fragment texts, the same
    template for every system (`harness`, matched arms), or the block the system itself would
    inject where it returns one (`system`: e.g. EXIA's `<memory-context>` fence with its tool JSON),
    counted in the prompt's tokens."""
    retrieval_budget: int | None = Field(default=None, ge=1)
    """Context-token budget given to every system (the same for all)."""
    enforce_budget: bool = False
    """Cut every returned context to `retrieval_budget` before the answerer sees it (greedy in
    rank order; the tokens cut are recorded per observation as `budget_truncated_tokens`)."""
    schedule: Path | ScheduleSpec = ScheduleSpec()
    """The default schedule: a TOML file path or an inline table."""
    trajectories: tuple[TrajectorySpec, ...] = Field(min_length=1)
    """What is replayed."""
    conditions: tuple[ConditionSpec, ...] = Field(min_length=1)
    """Systems and their configurations."""
    answerer: AnswererSpec = AnswererSpec()
    judges: tuple[JudgeSpec, ...] = ()
    embedder: EmbedderSpec = EmbedderSpec()
    memory_llm: MemoryModelSpec | None = None
    """The memory systems' own chat model, distinct from answerer and judge (None: none given)."""
    memory_embedder: MemoryModelSpec | None = None
    """The memory systems' own embedding model, served by the same gateway (None: none given)."""
    compare: tuple[tuple[str, str], ...] = ()
    """Declared paired comparisons (condition A, condition B); default: all pairs."""
    adapter_host: Literal["process", "in-process"] = "process"
    """Where adapters run: each unit's own host process (default), or `in-process` for debugging."""
    simulated_clock: bool | Literal["ticking"] = True
    """In the adapter host, wall-clock reads (`datetime.now`, `time.time`, ...) return the call's simulated
    `now`, frozen during the call (lsrep.host.clock); `"ticking"`: starting at `now` and running during
    the call (for libraries that wait on the wall clock; stamps then vary by the call's duration);
    `false` leaves the machine's clock (to show what a system does with it)."""
    judge_of_record: str = "deterministic"
    """Judge whose labels the headline numbers use; `human` = adjudicated human labels where they
    exist (sampled observations), the deterministic judge elsewhere."""

    @model_validator(mode="after")
    def _unique_names(self) -> CampaignSpec:
        for label, names in (
            ("condition", [c.name for c in self.conditions]),
            ("trajectory", [t.id for t in self.trajectories]),
        ):
            dupes = {n for n in names if names.count(n) > 1}
            if dupes:
                raise ValueError(f"duplicate {label} name(s): {', '.join(sorted(dupes))}")
        if self.enforce_budget and self.retrieval_budget is None:
            raise ValueError("enforce_budget = true needs a retrieval_budget")
        judges = [j.name for j in self.judges]
        dupes = {n for n in judges if judges.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate judge name(s): {', '.join(sorted(dupes))}")
        allowed = {"deterministic", "human", *judges}
        if self.judge_of_record not in allowed:
            raise ValueError(f"judge_of_record {self.judge_of_record!r} is not a judge of this campaign "
                             f"(known: {', '.join(sorted(allowed))})")
        known = {c.name for c in self.conditions}
        for a, b in self.compare:
            for n in (a, b):
                if n not in known:
                    raise ValueError(f"compare names unknown condition {n!r}")
        return self


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; a missing, unreadable, non-UTF-8, malformed or empty file is an InputError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a TOML file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8", line) from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        if line is None and (found := re.search(r"\(at line (\d+)", str(exc))):
            line = int(found.group(1))
        raise InputError(path, f"invalid TOML: {exc}", line) from None
    except RecursionError:
        raise InputError(path, "invalid TOML: nested too deeply") from None
    if not table:
        raise InputError(path, "file is empty: a campaign needs [[trajectories]] and [[conditions]], "
                         "a schedule at least one setting")
    return table


_read_toml = read_toml


def load_schedule(path: Path | str) -> ScheduleSpec:
    """Load a schedule TOML file (its fields under a `[schedule]` table or at top level)."""
    path = Path(path)
    data = _read_toml(path)
    data = data.get("schedule", data) if set(data) <= {"schedule"} else data
    try:
        return ScheduleSpec.model_validate(data)
    except ValidationError as exc:
        raise InputError(path, f"bad schedule: {pydantic_reason(exc)}") from None


class LoadedCampaign(BaseModel):
    """A campaign with its paths resolved and its schedules loaded."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: Path
    spec: CampaignSpec
    schedule: ScheduleSpec
    condition_schedules: dict[str, ScheduleSpec]
    store_path: Path
    input_files: dict[str, Path]
    """Every input file by role, for the manifest's SHA-256 list."""
    overrides: tuple[str, ...] = ()
    """The `-S key=value` overrides applied to the file (recorded in the manifest)."""


def _option_paths(value: Any, resolve: Callable[[Path], Path], path: Path, condition: str, key: str = "") -> Any:
    """Adapter options with every string that starts with `./` or `../` read as a file relative to
    the campaign file (e.g. ICE's `documents`): the adapter gets the absolute path, since its host
    runs in a folder of its own. A named file that does not exist is an input error."""
    if isinstance(value, str) and value.startswith(("./", "../")):
        file = resolve(Path(value))
        if not file.exists():
            raise InputError(path, f"condition {condition!r}: option {key!r} names {value!r}, and {file} is not found")
        return str(file)
    if isinstance(value, dict):
        return {k: _option_paths(v, resolve, path, condition, f"{key}.{k}" if key else k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_option_paths(v, resolve, path, condition, key) for v in value)
    return value


def load_campaign(path: Path | str, *, overrides: Sequence[str] = (), conditions: Sequence[str] | None = None,
                  trajectories: Sequence[str] | None = None) -> LoadedCampaign:
    """Read a campaign TOML file, resolve relative paths and load its schedules.

    `overrides` (`key=value`) and the condition/trajectory filters apply to the file's data
    before it is validated (`lsrep.protocol.overrides`).
    """
    from lsrep.protocol.overrides import apply_overrides, select

    path = Path(path).resolve()
    raw = read_toml(path)
    if raw.get("diagnostic") == "longmemeval" or ("trajectories" not in raw and "data" in raw):
        raise InputError(path, "this is a LongMemEval diagnostic campaign, not a trajectory campaign: run it with "
                               f"`lsrep longmemeval --campaign {path.name} --data PATH` (`lsrep validate` checks it)")
    data = select(apply_overrides(raw, overrides), conditions=conditions, trajectories=trajectories)
    try:
        spec = CampaignSpec.model_validate(data)
    except ValidationError as exc:
        after = " (after the -S overrides)" if overrides else ""
        raise InputError(path, f"bad campaign{after}: {pydantic_reason(exc)}") from None
    base = path.parent
    inputs: dict[str, Path] = {"campaign": path}

    def resolve(p: Path) -> Path:
        return p if p.is_absolute() else (base / p).resolve()

    trajectories = []
    for t in spec.trajectories:
        if t.generate is not None:
            trajectories.append(t)
            continue
        if t.locomo is not None:
            source = resolve(t.locomo)
            if not source.exists():
                raise InputError(path, f"trajectory {t.id!r}: locomo file {source} not found")
            inputs[f"locomo:{t.id}"] = source
            trajectories.append(t.model_copy(update={"locomo": source}))
            continue
        traj, probes = resolve(t.trajectory), resolve(t.probes)
        for role, p in (("trajectory", traj), ("probes", probes)):
            if not p.exists():
                raise InputError(path, f"trajectory {t.id!r}: {role} file {p} not found")
            inputs[f"{role}:{t.id}"] = p
        trajectories.append(t.model_copy(update={"trajectory": traj, "probes": probes}))

    def schedule_of(value: Path | ScheduleSpec, role: str) -> ScheduleSpec:
        if isinstance(value, ScheduleSpec):
            return value
        file = resolve(value)
        inputs[role] = file
        return load_schedule(file)

    spec = spec.model_copy(update={"conditions": tuple(
        c.model_copy(update={"options": _option_paths(c.options, resolve, path, c.name)}) for c in spec.conditions)})
    schedule = schedule_of(spec.schedule, "schedule")
    per_condition = {
        c.name: schedule_of(c.schedule, f"schedule:{c.name}") if c.schedule is not None else schedule
        for c in spec.conditions
    }
    spec = spec.model_copy(update={"trajectories": tuple(trajectories)})
    return LoadedCampaign(
        path=path,
        spec=spec,
        schedule=schedule,
        condition_schedules=per_condition,
        store_path=resolve(spec.store),
        input_files=inputs,
        overrides=tuple(overrides),
    )
