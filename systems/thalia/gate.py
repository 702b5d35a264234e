"""Stage 3, the Memory Gate: append the raw episode first, then consolidate only under the
dual key -- the Reasoner's flag r_N AND an explicit criterion (session end, novel task
class, explicit request) [SEED]. Consolidating on every turn is forbidden.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from .config import HarnessConfig
from .contracts import Episode, GateOutput
from .events import EventRelay
from .memory import Delta, MemoryFile
from .routing import explicit_memory_request, requires_consolidation, strip_cue
from .store import DuplicateEpisodeError, EpisodicStore


@dataclass(frozen=True)
class Decision:
    """Whether and how to consolidate, decided against the state before the append."""

    held: tuple[str, ...]
    delta: Delta | None
    reason: str | None
    eligible: bool = False


def gate_flags(episode: Episode) -> tuple[bool, bool]:
    """(r_N, x_N) of a stored or incoming episode: only a user's words can ask for memory."""
    if episode.role != "user" or not episode.query:
        return False, False
    return (requires_consolidation(episode.task_category, episode.query),
            explicit_memory_request(episode.query))


class MemoryGate:
    """G(q, ŷ, C_cite, b_N, c_q, t, s; Σ_G) = (e, ΔM, Σ'_G)."""

    def __init__(self, config: HarnessConfig, store: EpisodicStore, memory: MemoryFile,
                 emit: EventRelay) -> None:
        self.config = config
        self.store = store
        self.memory = memory
        self.emit = emit

    def criteria(self, episode: Episode, session_end: bool, explicit: bool) -> dict[str, bool]:
        novel = episode.role == "user" and episode.task_category not in self.store.user_categories()
        return {"session_end": session_end, "novel_class": novel, "explicit": explicit}

    def admit(self, episode: Episode, *, session_end: bool = False,
              r_n: bool | None = None, x_n: bool | None = None) -> GateOutput:
        """Append the episode, then consolidate if the dual key holds."""
        flags = gate_flags(episode)
        r_n = flags[0] if r_n is None else r_n
        x_n = flags[1] if x_n is None else x_n
        crit = self.criteria(episode, session_end, x_n)  # against Σ_G before the append
        decision = self._decide(episode, r_n, crit)
        delta = decision.delta
        stored = replace(episode, consolidation_action=delta.action if delta else "none")
        self.emit("gate.append", "eligible")
        try:
            self.store.append(stored)  # raw episode first: append before summarize
        except DuplicateEpisodeError as exc:
            self.emit("gate.append", "error", reason=str(exc), source_turn_ids=(episode.source_id,))
            raise
        self.emit("gate.append", "executed", count=1, ids=(f"turn:{stored.turn_id}",),
                  source_turn_ids=(stored.source_id,))
        self.emit("gate.append", "output", count=1, ids=(f"turn:{stored.turn_id}",),
                  source_turn_ids=(stored.source_id,))
        self._report(stored, r_n, crit, decision, "turn")
        if delta is not None:
            self._write(stored, delta, "turn", stored.timestamp)
        return GateOutput(episode=stored, criteria=crit, requires_consolidation=r_n,
                          action=delta.action if delta else "none",
                          delta=delta.bullet if delta else "",
                          replaced=delta.replaced if delta else None)

    def close_session(self, session_id: str, when: datetime) -> GateOutput | None:
        """Session end holds as a criterion: re-evaluate the session's last user turn [CHOICE]."""
        episode = self.store.last_user_episode(session_id)
        if episode is None:
            self.emit("gate.criteria", "ineligible", reason=f"no user turn in session {session_id}")
            return None
        r_n, x_n = gate_flags(episode)
        crit = self.criteria(episode, True, x_n)
        crit["novel_class"] = False  # the turn's class was stored with it; it is no longer novel
        if self.store.consolidated(episode.turn_id):
            self.emit("gate.criteria", "eligible")
            self.emit("gate.criteria", "executed", params={**crit, "r_N": r_n})
            self.emit("gate.consolidate", "ineligible", reason="turn already consolidated",
                      source_turn_ids=(episode.source_id,))
            return GateOutput(episode=None, criteria=crit, requires_consolidation=r_n, action="none")
        decision = self._decide(episode, r_n, crit)
        self._report(episode, r_n, crit, decision, "session_end")
        delta = decision.delta
        if delta is not None:
            self._write(episode, delta, "session_end", when)
        return GateOutput(episode=None, criteria=crit, requires_consolidation=r_n,
                          action=delta.action if delta else "none",
                          delta=delta.bullet if delta else "",
                          replaced=delta.replaced if delta else None)

    def preview(self, episode: Episode) -> dict[str, bool]:
        """What admit() would do for a read-only probe, without writing (`would_*`)."""
        r_n, x_n = gate_flags(episode)
        crit = self.criteria(episode, False, x_n)
        self.emit("gate.append", "eligible")
        self.emit("gate.append", "skipped", reason="read-only probe",
                  params={"would_append": True,
                          "would_consolidate": r_n and any(crit.values())
                          and not self.config.ablated("gate.consolidate"),
                          **crit, "r_N": r_n})
        return crit

    # -- internals -----------------------------------------------------------------------------
    def _decide(self, episode: Episode, r_n: bool, crit: dict[str, bool]) -> Decision:
        """The dual-key decision, computed before anything is written."""
        held = tuple(k for k, v in crit.items() if v)
        if not r_n or not held:
            return Decision(held, None, "requires_consolidation is false" if not r_n
                            else "no criterion holds")
        if self.config.ablated("gate.consolidate"):
            return Decision(held, None, "ablated", eligible=True)
        fact = strip_cue(episode.query)
        delta = self.memory.plan(fact, episode.turn_id, episode.timestamp,
                                 self.config.memory_update_jaccard)
        return Decision(held, delta, None, eligible=True)

    def _report(self, episode: Episode, r_n: bool, crit: dict[str, bool], decision: Decision,
                trigger: str) -> None:
        emit = self.emit
        emit("gate.criteria", "eligible")
        emit("gate.criteria", "executed", params={**crit, "r_N": r_n, "trigger": trigger})
        if decision.held:
            emit("gate.criteria", "output", count=len(decision.held),
                 params={"held": list(decision.held)})
        src = (episode.source_id,)
        if not decision.eligible:
            emit("gate.consolidate", "ineligible", reason=decision.reason, source_turn_ids=src)
            return
        emit("gate.consolidate", "eligible", source_turn_ids=src,
             params={"criteria": list(decision.held)})
        if decision.delta is None:
            emit("gate.consolidate", "skipped", reason=decision.reason, source_turn_ids=src)

    def _write(self, episode: Episode, delta: Delta, trigger: str, when: datetime) -> None:
        self.memory.apply(delta)
        self.store.log_consolidation(episode.turn_id, trigger, delta.action, delta.bullet, when)
        params = {"action": delta.action, "delta": delta.bullet, "source_turn": episode.turn_id,
                  "trigger": trigger}
        if delta.replaced:
            params["replaced"] = delta.replaced
        self.emit("gate.consolidate", "executed", count=1, source_turn_ids=(episode.source_id,),
                  params=params)
        self.emit("gate.consolidate", "output", count=1, ids=(f"turn:{episode.turn_id}",),
                  source_turn_ids=(episode.source_id,), params=params)
