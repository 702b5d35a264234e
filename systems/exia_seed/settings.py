"""The provider's `memory.exia_seed` settings: SEED values, chosen numbers and repair flags.

Every number the seed leaves open is a field here (README lists which are SEED and which are
CHOICE). `Fixes` holds the `fix.*` flags: each one repairs a code path the runtime report
describes as the system's actual behaviour; all are off by default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Fixes:
    """Repair flags (`fix.*`). Off = the seed's code path, on = the repaired behaviour."""

    primary_only_notes: bool = False
    """E-1: the note tool and native-memory mirroring refuse non-primary contexts."""
    phase2_ceiling: bool = False
    """E-3: phase-2 summaries and pointers stay inside the recall budget."""
    trail_date_filter: bool = False
    """E-4: the read tool's neighbour trail and fallback drop future-dated facts."""
    search_expiry_filter: bool = False
    """E-5: the search tool drops expired prospective facts."""
    strict_citations: bool = False
    """E-6: every cited ref must exist, and mixed agent/user facts must be supported by user text."""
    journal_only_admitted: bool = False
    """E-9: inputs behind rejected facts (and uncited notes) stay pending, up to `max_retries`."""
    cache_key_pages: bool = False
    """E-10: the recall cache also rebuilds when any page changes, not only `aretes.json`."""
    queue_when_busy: bool = False
    """E-13: a trigger that arrives while consolidation is busy is queued, not dropped."""
    enforce_privacy: bool = False
    """E-15: confidential and private facts are withheld from recall, search and read."""
    summary_lock: bool = False
    """E-16: the summary writer takes the consolidation lock and rebuilds the graph."""


@dataclass(frozen=True)
class Settings:
    """Provider settings. Defaults are the seed's where it gives one, else a documented choice."""

    memory_dir: str = "exia_seed"
    """Directory under `hermes_home` that holds all state."""
    language: str = "en"
    """`en` or `fr`: speaker labels, prompt doctrine, tool replies."""
    phase: int = 1
    """Automatic recall phase: 1 computes and journals but returns "", 2 returns `_souvenirs`."""
    auto_recall: bool = True
    """Whether primary contexts run automatic recall at all."""
    recall_budget_tokens: int = 1200
    """Generic recall ceiling in estimated tokens (chars/4)."""
    facts_per_subject: int = 3
    """Per-node cap (`faits_par_sujet`)."""
    fcm_iterations: int = 3
    activation_threshold: float = 0.2
    priming_minutes: float = 10.0
    priming_bonus: float = 0.3
    batch_max_lines: int = 400
    batch_max_chars: int = 60_000
    consolidation_budget_chars: int = 24_000
    summary_excerpt_chars: int = 2_000
    summary_max_chars: int = 500
    summaries_on_consolidate: bool = True
    checker_root_chars: int = 5
    checker_min_overlap: float = 0.5
    checker_min_roots: int = 2
    search_pool: int = 50
    search_limit: int = 10
    concept_credit: float = 1.0
    trail_facts_per_neighbour: int = 3
    fallback_facts: int = 5
    auto_consolidate: bool = True
    """Closure triggers a consolidation (the seed's background subprocess, run inline here)."""
    busy_minutes: float = 0.0
    """Simulated minutes a triggered consolidation counts as running (0 = never busy)."""
    no_agent_speaker: bool = False
    """LoCoMo mode: no speaker is the agent, so no source is agent-only."""
    standin_min_words: int = 4
    """Content words a sentence needs before the offline stand-in proposes it as a fact."""
    max_retries: int = 3
    """With `fix.journal_only_admitted`: attempts before a rejected input is given up."""
    disabled: frozenset[str] = frozenset()
    """Mechanisms switched off (ablation), by provider mechanism name, e.g. `recall.graph`."""
    fix: Fixes = field(default_factory=Fixes)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Settings:
        """Build from a plain mapping (config file); unknown keys are errors."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown memory.exia_seed settings: {', '.join(unknown)}")
        values = dict(data)
        if "fix" in values:
            values["fix"] = replace(Fixes(), **dict(values["fix"]))
        if "disabled" in values:
            values["disabled"] = frozenset(values["disabled"])
        return cls(**values)

    def on(self, mechanism: str) -> bool:
        """Whether a mechanism runs in this condition."""
        return mechanism not in self.disabled


def load_settings(hermes_home: Path) -> Settings:
    """Read `memory.exia_seed` from `<hermes_home>/config.json`, or return the defaults.

    Hermes keeps its configuration in YAML; this re-implementation reads the same key from
    JSON so that it needs no YAML parser.
    """
    path = Path(hermes_home) / "config.json"
    if not path.exists():
        return Settings()
    config = json.loads(path.read_text(encoding="utf-8"))
    return Settings.from_mapping(config.get("memory", {}).get("exia_seed", {}))
