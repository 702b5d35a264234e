"""Model-backed judges over stored observations: during a campaign, and by `lsrep score`.

Every model call goes through one response cache beside the run store and one
concurrency limit per endpoint shared by every process on the machine (slot lock
files), so re-scoring a finished run makes no endpoint calls and N workers never
exceed the endpoint's declared concurrency. A judge that cannot give a label
(unparseable output after retries, a failed call) writes a failed judgement row
with its reason; nothing is guessed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsrep.judge.verdict import JudgeCase, VersionView
from lsrep.protocol.campaign import EndpointRef, JudgeSpec

CACHE_FILE = "llm-cache.sqlite"
LOCKS_DIR = ".llm-locks"


def cache_path_for(store_path: Path) -> Path:
    """The response cache shared by every run in a store's folder."""
    return Path(store_path).resolve().parent / CACHE_FILE


def shared_limit(store_path: Path | str, endpoint: EndpointRef):
    """A cross-process concurrency bound for one endpoint and model."""
    from lsrep.llm.limits import FileLockLimit

    key = hashlib.sha256(f"{endpoint.base_url}\0{endpoint.model}".encode()).hexdigest()[:16]
    return FileLockLimit(Path(store_path).resolve().parent / LOCKS_DIR / key, endpoint.concurrency)


def make_client(endpoint: EndpointRef, store_path: Path | str | None, *, refresh_before: str | None = None):
    """A client caching beside the store; `refresh_before` ignores cache entries older than it."""
    from lsrep.llm.cache import ResponseCache
    from lsrep.llm.client import LLMClient
    from lsrep.llm.config import EndpointSpec

    if store_path is None:
        return LLMClient(EndpointSpec.of(endpoint))
    cache = ResponseCache(cache_path_for(Path(store_path)), not_before=refresh_before)
    return LLMClient(EndpointSpec.of(endpoint), cache=cache,
                     limit=shared_limit(store_path, endpoint))


def build_judge(spec: JudgeSpec, store_path: Path | str | None, *, refresh_before: str | None = None):
    """A model judge (or a multi-pass panel) for a campaign's judge table."""
    from lsrep.judge.model import EvolvingReferenceJudge, MultiPassJudge

    if spec.kind == "deterministic":
        return None
    if spec.endpoint is None:
        from lsrep.errors import ConfigError

        raise ConfigError(f"judge {spec.name!r} ({spec.kind}) needs an endpoint table")
    if spec.kind == "longmemeval":
        from lsrep.judge.longmemeval import OfficialLongMemEvalJudge, official_endpoint

        judge = OfficialLongMemEvalJudge(make_client(official_endpoint(spec.endpoint), store_path, refresh_before=refresh_before))
        return judge if spec.passes == 1 else MultiPassJudge([judge], passes=spec.passes)
    client = make_client(spec.endpoint, store_path, refresh_before=refresh_before)
    judge = EvolvingReferenceJudge(client)
    return judge if spec.passes == 1 else MultiPassJudge([judge], passes=spec.passes)


def case_from_row(row: dict[str, Any]) -> JudgeCase:
    """A judge case from a stored observation row alone (its `expected` JSON holds the versions)."""
    raw = row["expected"]
    abstain, in_force, superseded, later = (_expected_views(raw) if isinstance(raw, str)
                                            else _views_of(raw))
    return JudgeCase(
        question=row["question"], answer=row["answer"] or "", kind=row["kind"], category=row["category"],
        expect_abstain=abstain, in_force=in_force, superseded=superseded, later=later, now=row["sim_time"],
    )


@functools.lru_cache(maxsize=4096)
def _expected_views(expected_json: str) -> tuple[bool, tuple[VersionView, ...], ...]:
    # A probe's expectation repeats across checkpoints until a version changes: parsed once
    # (the views are frozen, so sharing them is safe).
    return _views_of(json.loads(expected_json))


def _views_of(expected: dict[str, Any]) -> tuple[bool, tuple[VersionView, ...], ...]:
    def views(key: str) -> tuple[VersionView, ...]:
        return tuple(VersionView(answer=v["answer"], aliases=tuple(v.get("aliases") or ()),
                                 valid_from=v["valid_from"], valid_until=v.get("valid_until"))
                     for v in expected.get(key, ()))

    return bool(expected.get("expect_abstain")), views("in_force"), views("superseded"), views("later")


def call_row(record: dict[str, Any], run_id: str, obs_id: str | None) -> dict[str, Any]:
    """A CallRecord (as a dict) flattened to an `llm_calls` row. Keys never reach it."""
    usage = record.get("usage") or {}
    return {
        "call_id": record["call_id"], "run_id": run_id, "obs_id": obs_id, "purpose": record["purpose"],
        "endpoint": record["base_url"], "model": record["model"], "request_sha256": record["request_digest"],
        "attempts": record["attempts"], "faults": json.dumps(list(record.get("faults") or ())),
        "status": record["status"], "cached": int(bool(record.get("cached"))),
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
        "cost": record.get("cost_usd"), "latency_ms": 1000 * float(record.get("latency_s") or 0.0),
        "error": " ".join(x for x in (record.get("reason"), record.get("error")) if x) or None,
    }


def judge_observations(name: str, judge: Any, rows: Sequence[dict[str, Any]], *,
                       workers: int = 4, case_for=case_from_row,
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Label observation rows with one judge: (judgement rows, llm_calls rows)."""
    from lsrep.judge.model import JudgeError

    def one(row: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        base = {"obs_id": row["obs_id"], "judge": name, "run_id": row["run_id"], "judge_version": judge.version,
                "prompt_digest": judge.prompt_digest, "rubric": None, "exact": None, "f1": None,
                "passes": None, "agreement": None, "rationale": None, "error": None}
        if row["status"] != "ok" or row["answer"] is None:
            return {**base, "outcome": "error", "correct": 0, "status": "ok"}, []
        try:
            result = judge.assess(case_for(row))
        except JudgeError as exc:
            calls = [call_row(r.model_dump(mode="json"), row["run_id"], row["obs_id"]) for r in exc.records]
            return {**base, "outcome": None, "correct": None, "status": "failed",
                    "error": f"{exc.reason}: {exc}"}, calls
        verdict = result.verdict
        calls = [call_row(r.model_dump(mode="json"), row["run_id"], row["obs_id"]) for r in result.records]
        passes = json.dumps([p.model_dump(mode="json") for p in result.passes]) if result.passes else None
        return {**base, "outcome": verdict.outcome, "correct": int(verdict.correct), "rubric": verdict.rubric,
                "rationale": verdict.rationale, "passes": passes, "agreement": result.agreement,
                "status": "ok"}, calls

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(one, rows))
    judgements = [r for r, _ in results]
    calls = [c for _, cs in results for c in cs]
    return judgements, calls


def judge_unit_tables(tables: dict[str, list[dict[str, Any]]], judges: Iterable[tuple[JudgeSpec, Any]]) -> None:
    """Add every campaign judge's labels to a finished unit's rows (in the driver)."""
    for spec, judge in judges:
        rows, calls = judge_observations(spec.name, judge, tables.get("observations", []),
                                         workers=spec.endpoint.concurrency if spec.endpoint else 1)
        tables.setdefault("judgements", []).extend(rows)
        tables.setdefault("llm_calls", []).extend(calls)
