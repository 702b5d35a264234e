"""A table of malformed inputs: each is a clean one-line error naming the file (and line or key),
exit 2, no traceback, the store untouched, and `lsrep validate` and `lsrep run` agree."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsrep.cli import main

REPO = Path(__file__).resolve().parents[2]
TRAJ_LINE = json.loads((REPO / "campaigns/quickstart/trajectory.jsonl").read_text().splitlines()[0])


@dataclass
class Workspace:
    root: Path
    campaign: Path
    traj: Path
    probes: Path
    schedule: Path
    store: Path

    def edit_campaign(self, old: str, new: str) -> None:
        text = self.campaign.read_text()
        assert old in text, old
        self.campaign.write_text(text.replace(old, new, 1))

    def add_campaign(self, text: str) -> None:
        self.campaign.write_text(self.campaign.read_text() + "\n" + text + "\n")

    def top(self, text: str) -> None:
        # Top-level keys go before the first table.
        body = self.campaign.read_text()
        self.campaign.write_text(body.replace("[[trajectories]]", text + "\n\n[[trajectories]]", 1))

    def set_line(self, path: Path, lineno: int, text: str | bytes) -> None:
        lines = path.read_bytes().split(b"\n")
        lines[lineno - 1] = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        path.write_bytes(b"\n".join(lines))

    def turn(self, lineno: int, **changes) -> None:
        record = json.loads(self.traj.read_text().split("\n")[lineno - 1])
        record.update(changes)
        for key, value in list(record.items()):
            if value is _DROP:
                del record[key]
        self.set_line(self.traj, lineno, json.dumps(record))

    def probe(self, lineno: int, **changes) -> None:
        record = json.loads(self.probes.read_text().split("\n")[lineno - 1])
        record.update(changes)
        for key, value in list(record.items()):
            if value is _DROP:
                del record[key]
        self.set_line(self.probes, lineno, json.dumps(record))

    def sched(self, text: str) -> None:
        self.schedule.write_text(text)


_DROP = object()
SCHED = (REPO / "schedules/session-end.toml").read_text()


def _ws(tmp: Path) -> Workspace:
    shutil.copytree(REPO / "campaigns/quickstart", tmp / "quickstart")
    schedule = tmp / "schedule.toml"
    schedule.write_text(SCHED)
    campaign = tmp / "campaign.toml"
    text = (REPO / "campaigns/quickstart.toml").read_text()
    text = text.replace('store = "../runs/lsrep.sqlite"', 'store = "store.sqlite"')
    text = text.replace('schedule = "../schedules/session-end.toml"', 'schedule = "schedule.toml"')
    campaign.write_text(text)
    return Workspace(tmp, campaign, tmp / "quickstart/trajectory.jsonl", tmp / "quickstart/probes.jsonl",
                     schedule, tmp / "store.sqlite")


# (case id, edit, file the message must name, line (None: none required), reason pattern)
C, T, P, S, ST = "campaign.toml", "trajectory.jsonl", "probes.jsonl", "schedule.toml", "store.sqlite"
CASES: list[tuple[str, object, str, int | None, str]] = [
    # -- trajectory JSON Lines ---------------------------------------------------------------
    ("traj-invalid-json", lambda w: w.set_line(w.traj, 3, '{"turn_id": "t0003",'), T, 3, "invalid JSON"),
    ("traj-array", lambda w: w.set_line(w.traj, 2, "[1, 2]"), T, 2, "JSON object"),
    ("traj-string", lambda w: w.set_line(w.traj, 2, '"hello"'), T, 2, "JSON object"),
    ("traj-true", lambda w: w.set_line(w.traj, 4, "true"), T, 4, "JSON object"),
    ("traj-duplicate-key", lambda w: w.set_line(
        w.traj, 2, json.dumps(TRAJ_LINE | {"turn_id": "tX"})[:-1] + ', "role": "user"}'), T, 2, "duplicate key 'role'"),
    ("traj-nan", lambda w: w.set_line(w.traj, 2, json.dumps(TRAJ_LINE | {"turn_id": "tX"})[:-1] + ', "n": NaN}'),
     T, 2, "NaN is not valid JSON"),
    ("traj-infinity", lambda w: w.set_line(
        w.traj, 2, json.dumps(TRAJ_LINE | {"turn_id": "tX"})[:-1] + ', "n": -Infinity}'), T, 2, "Infinity"),
    ("traj-int-timestamp", lambda w: w.turn(5, timestamp=1772442000), T, 5, "ISO 8601"),
    ("traj-float-timestamp", lambda w: w.turn(5, timestamp=1772442000.5), T, 5, "ISO 8601"),
    ("traj-bool-timestamp", lambda w: w.turn(5, timestamp=True), T, 5, "ISO 8601"),
    ("traj-list-timestamp", lambda w: w.turn(5, timestamp=["2026-03-02"]), T, 5, "ISO 8601"),
    ("traj-naive-timestamp", lambda w: w.turn(5, timestamp="2026-03-02T09:08:00"), T, 5, "time zone"),
    ("traj-bad-timestamp", lambda w: w.turn(5, timestamp="yesterday"), T, 5, "timestamp"),
    ("traj-missing-turn-id", lambda w: w.turn(6, turn_id=_DROP), T, 6, "turn_id"),
    ("traj-empty-turn-id", lambda w: w.turn(6, turn_id=""), T, 6, "turn_id"),
    ("traj-duplicate-turn-id", lambda w: w.turn(7, turn_id="t0001"), T, 7, "duplicate turn_id"),
    ("traj-time-backwards", lambda w: w.turn(8, timestamp="2020-01-01T00:00:00+00:00"), T, 8, "earlier"),
    ("traj-session-resumes", lambda w: w.turn(35, session_id="s01"), T, 35, "resumes"),
    ("traj-unknown-field", lambda w: w.turn(9, colour="red"), T, 9, "unknown field"),
    ("traj-content-number", lambda w: w.turn(9, content=42), T, 9, "content"),
    ("traj-content-null", lambda w: w.turn(9, content=None), T, 9, "content"),
    ("traj-missing-content", lambda w: w.turn(9, content=_DROP), T, 9, "content"),
    ("traj-missing-session", lambda w: w.turn(10, session_id=_DROP), T, 10, "session_id"),
    ("traj-empty-role", lambda w: w.turn(10, role=""), T, 10, "role"),
    ("traj-lone-surrogate", lambda w: w.set_line(
        w.traj, 11, json.dumps(TRAJ_LINE | {"turn_id": "t0011x"}).replace("Maya.", "Maya \\ud800.")), T, 11,
     "lone surrogate"),
    ("traj-lone-low-surrogate", lambda w: w.set_line(
        w.traj, 11, json.dumps(TRAJ_LINE | {"turn_id": "t0011x"}).replace("Maya.", "\\udfff")), T, 11, "surrogate"),
    ("traj-surrogate-in-speaker", lambda w: w.turn(12, speaker="M\ud83d"), T, 12, "speaker"),
    ("traj-deep-nesting", lambda w: w.set_line(w.traj, 3, "[" * 200000 + "]" * 200000), T, 3, "nested too deeply"),
    ("traj-deep-object", lambda w: w.set_line(w.traj, 3, '{"a":' * 200000 + "1" + "}" * 200000), T, 3,
     "nested too deeply"),
    ("traj-not-utf8", lambda w: w.set_line(w.traj, 2, b"\xff\xfe not text"), T, None, "not UTF-8"),
    ("traj-latin1", lambda w: w.set_line(w.traj, 2, "café".encode("latin-1")), T, None, "not UTF-8"),
    ("traj-empty-file", lambda w: w.traj.write_text(""), T, None, "no records"),
    ("traj-blank-lines", lambda w: w.traj.write_text("\n\n  \n"), T, None, "no records"),
    ("traj-directory", lambda w: (w.traj.unlink(), w.traj.mkdir()), T, None, "directory"),
    ("traj-missing-file", lambda w: w.traj.unlink(), C, None, "trajectory file .* not found"),
    ("traj-truncated", lambda w: w.set_line(w.traj, 35, '{"turn_id": "t0035", "session_id": "s0'), T, 35,
     "invalid JSON"),
    ("traj-number-line", lambda w: w.set_line(w.traj, 20, "12"), T, 20, "JSON object"),
    ("traj-null-line", lambda w: w.set_line(w.traj, 20, "null"), T, 20, "JSON object"),
    ("traj-unknown-big-field", lambda w: w.turn(21, extra={"a": [1, 2, 3]}), T, 21, "unknown field"),
    ("traj-turn-id-number", lambda w: w.turn(22, turn_id=22), T, 22, "turn_id"),
    # -- probe JSON Lines ---------------------------------------------------------------------
    ("probe-invalid-json", lambda w: w.set_line(w.probes, 2, "{probe_id: 1}"), P, 2, "invalid JSON"),
    ("probe-array", lambda w: w.set_line(w.probes, 2, "[]"), P, 2, "JSON object"),
    ("probe-unknown-turn", lambda w: w.probe(2, references=[{"answer": "Lisbon", "valid_from": "t9999"}]), P, 2,
     "t9999"),
    ("probe-duplicate-id", lambda w: w.probe(3, probe_id="city-current"), P, 3, "duplicate probe_id"),
    ("probe-ask-at-empty", lambda w: w.probe(2, ask_at=[]), P, 2, "ask_at"),
    ("probe-ask-at-unknown", lambda w: w.probe(2, ask_at=["t0000"]), P, 2, "t0000"),
    ("probe-ask-at-number", lambda w: w.probe(2, ask_at=3), P, 2, "ask_at"),
    ("probe-unknown-kind", lambda w: w.probe(2, kind="sometimes"), P, 2, "kind"),
    ("probe-missing-question", lambda w: w.probe(2, question=_DROP), P, 2, "question"),
    ("probe-empty-question", lambda w: w.probe(2, question=""), P, 2, "question"),
    ("probe-no-references", lambda w: w.probe(2, references=[]), P, 2, "reference"),
    ("probe-overlap", lambda w: w.probe(1, references=[{"answer": "A", "valid_from": "t0001"},
                                                        {"answer": "B", "valid_from": "t0014"}]), P, 1, "overlap"),
    ("probe-ends-before-start", lambda w: w.probe(2, references=[
        {"answer": "A", "valid_from": "t0014", "valid_until": "t0001"}]), P, 2, "before or when it starts"),
    ("probe-unknown-field", lambda w: w.probe(2, weight=2), P, 2, "unknown field"),
    ("probe-unknown-evidence", lambda w: w.probe(2, references=[
        {"answer": "A", "valid_from": "t0001", "evidence": ["nope"]}]), P, 2, "nope"),
    ("probe-duplicate-key", lambda w: w.set_line(w.probes, 2, w.probes.read_text().split("\n")[1][:-1]
                                                 + ', "kind": "current"}'), P, 2, "duplicate key 'kind'"),
    ("probe-lone-surrogate", lambda w: w.probe(3, question="Where\udc00?"), P, 3, "surrogate"),
    ("probe-directory", lambda w: (w.probes.unlink(), w.probes.mkdir()), P, None, "directory"),
    ("probe-empty-file", lambda w: w.probes.write_text(""), P, None, "no records"),
    ("probe-not-utf8", lambda w: w.set_line(w.probes, 1, b"\x80\x81"), P, None, "not UTF-8"),
    ("probe-bad-before-first", lambda w: w.probe(2, before_first="guess"), P, 2, "before_first"),
    ("probe-unknown-valid-until", lambda w: w.probe(2, references=[
        {"answer": "A", "valid_from": "t0001", "valid_until": "t0999"}]), P, 2, "t0999"),
    ("probe-deep-nesting", lambda w: w.set_line(w.probes, 2, "[" * 100000), P, 2, "nested too deeply|invalid JSON"),
    ("probe-missing-file", lambda w: w.probes.unlink(), C, None, "probes file .* not found"),
    ("probe-answer-empty", lambda w: w.probe(2, references=[{"answer": "", "valid_from": "t0001"}]), P, 2, "answer"),
    ("probe-references-string", lambda w: w.probe(2, references="Lisbon"), P, 2, "references"),
    ("probe-nan", lambda w: w.set_line(w.probes, 2, w.probes.read_text().split("\n")[1][:-1] + ', "x": NaN}'),
     P, 2, "NaN"),
    # -- campaign TOML -----------------------------------------------------------------------
    ("campaign-invalid-toml", lambda w: w.add_campaign("name = = 3"), C, None, "invalid TOML"),
    ("campaign-not-utf8", lambda w: w.campaign.write_bytes(w.campaign.read_bytes() + b'\ndescription2 = "\xff"\n'),
     C, None, "not UTF-8"),
    ("campaign-empty", lambda w: w.campaign.write_text(""), C, None, "empty"),
    ("campaign-comments-only", lambda w: w.campaign.write_text("# nothing\n"), C, None, "empty"),
    ("campaign-missing-name", lambda w: w.edit_campaign('name = "quickstart"', ""), C, None, "name"),
    ("campaign-unknown-key", lambda w: w.top("colour = 'red'"), C, None, "colour: unknown field"),
    ("campaign-repetitions-zero", lambda w: w.edit_campaign("repetitions = 1", "repetitions = 0"), C, None,
     "repetitions"),
    ("campaign-repetitions-negative", lambda w: w.edit_campaign("repetitions = 1", "repetitions = -2"), C, None,
     "repetitions"),
    ("campaign-repetitions-string", lambda w: w.edit_campaign("repetitions = 1", 'repetitions = "two"'), C, None,
     "repetitions"),
    ("campaign-seed-string", lambda w: w.edit_campaign("seed = 20261130", 'seed = "x"'), C, None, "seed"),
    ("campaign-no-trajectories", lambda w: w.campaign.write_text(
        'name = "x"\n[[conditions]]\nname = "null"\nsystem = "null"\n'), C, None, "trajectories"),
    ("campaign-no-conditions", lambda w: w.campaign.write_text(
        'name = "x"\n[[trajectories]]\nid = "a"\ntrajectory = "quickstart/trajectory.jsonl"\n'
        'probes = "quickstart/probes.jsonl"\n'), C, None, "conditions"),
    ("campaign-duplicate-condition", lambda w: w.add_campaign('[[conditions]]\nname = "null"\nsystem = "null"'), C,
     None, "duplicate condition"),
    ("campaign-duplicate-trajectory", lambda w: w.add_campaign(
        '[[trajectories]]\nid = "maya-journal"\ntrajectory = "quickstart/trajectory.jsonl"\n'
        'probes = "quickstart/probes.jsonl"'), C, None, "duplicate trajectory"),
    ("campaign-unknown-system", lambda w: w.edit_campaign('system = "null"', 'system = "nul"'), C, None, "nul"),
    ("campaign-unknown-module-system", lambda w: w.edit_campaign('system = "null"', 'system = "no.such:Thing"'), C,
     None, "no.such"),
    ("campaign-unknown-option", lambda w: w.edit_campaign("top_k = 30", "top_kk = 30"), C, None, "top_kk"),
    ("campaign-option-type", lambda w: w.edit_campaign("top_k = 30", 'top_k = "many"'), C, None, "top_k"),
    ("campaign-disable-unknown", lambda w: w.edit_campaign('system = "vector-rag"',
                                                           'system = "vector-rag"\ndisable = ["telepathy"]'),
     C, None, "telepathy"),
    ("campaign-answer-mode", lambda w: w.edit_campaign('answer_mode = "context"', 'answer_mode = "psychic"'), C,
     None, "answer_mode"),
    ("campaign-system-mode-no-answerer", lambda w: w.edit_campaign('answer_mode = "context"',
                                                                   'answer_mode = "system"'), C, None,
     "no answering stage"),
    ("campaign-llm-without-endpoint", lambda w: w.edit_campaign('kind = "extractive"', 'kind = "llm"'), C, None,
     "endpoint"),
    ("campaign-context-window-negative", lambda w: w.edit_campaign("context_window = 32768", "context_window = -1"),
     C, None, "context_window"),
    ("campaign-context-window-zero", lambda w: w.edit_campaign("context_window = 32768", "context_window = 0"), C,
     None, "context_window"),
    ("campaign-min-overlap-zero", lambda w: w.edit_campaign('overflow = "fail"', 'overflow = "fail"\nmin_overlap = 0'),
     C, None, "min_overlap"),
    ("campaign-overflow-unknown", lambda w: w.edit_campaign('overflow = "fail"', 'overflow = "explode"'), C, None,
     "overflow"),
    ("campaign-embedder-dim-zero", lambda w: w.edit_campaign("dim = 512", "dim = 0"), C, None, "dim"),
    ("campaign-embedder-dim-negative", lambda w: w.edit_campaign("dim = 512", "dim = -5"), C, None, "dim"),
    ("campaign-embedder-kind", lambda w: w.edit_campaign('kind = "hashing"', 'kind = "magic"'), C, None, "kind"),
    ("campaign-judge-of-record-unknown", lambda w: w.top('judge_of_record = "oracle"'), C, None, "oracle"),
    ("campaign-judge-kind-unknown", lambda w: w.add_campaign('[[judges]]\nname = "j"\nkind = "psychic"'), C, None,
     "kind"),
    ("campaign-judge-passes-zero", lambda w: w.add_campaign('[[judges]]\nname = "j"\npasses = 0'), C, None, "passes"),
    ("campaign-judge-without-endpoint", lambda w: w.add_campaign('[[judges]]\nname = "j"\nkind = "evolving"'), C,
     None, "endpoint"),
    ("campaign-duplicate-judge", lambda w: w.add_campaign('[[judges]]\nname = "j"\n[[judges]]\nname = "j"'), C,
     None, "duplicate judge"),
    ("campaign-compare-unknown", lambda w: w.top('compare = [["null", "ghost"]]'), C, None, "ghost"),
    ("campaign-two-sources", lambda w: w.edit_campaign('id = "maya-journal"',
                                                       'id = "maya-journal"\nlocomo = "x.json"'), C, None,
     "exactly one source"),
    ("campaign-trajectory-without-probes", lambda w: w.edit_campaign('probes = "quickstart/probes.jsonl"', ""), C,
     None, "both trajectory and probes"),
    ("campaign-locomo-missing", lambda w: w.edit_campaign(
        'trajectory = "quickstart/trajectory.jsonl"\nprobes = "quickstart/probes.jsonl"', 'locomo = "nope.json"'),
     C, None, "not found"),
    ("campaign-retrieval-budget-zero", lambda w: w.top("retrieval_budget = 0"), C, None, "retrieval_budget"),
    ("campaign-retrieval-budget-negative", lambda w: w.top("retrieval_budget = -10"), C, None, "retrieval_budget"),
    ("campaign-empty-condition-name", lambda w: w.edit_campaign('name = "null"', 'name = ""'), C, None, "name"),
    ("campaign-empty-system", lambda w: w.edit_campaign('system = "null"', 'system = ""'), C, None, "system"),
    ("campaign-empty-trajectory-id", lambda w: w.edit_campaign('id = "maya-journal"', 'id = ""'), C, None, "id"),
    ("campaign-generate-bad", lambda w: w.edit_campaign(
        'trajectory = "quickstart/trajectory.jsonl"\nprobes = "quickstart/probes.jsonl"',
        'generate = { sessions = "many" }'), C, None, "generate"),
    ("campaign-endpoint-window", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'context_window = 100, max_tokens = 200 }'), C, None, "context_window"),
    ("campaign-endpoint-max-tokens", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'max_tokens = 0 }'), C, None, "max_tokens"),
    ("campaign-endpoint-concurrency", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'concurrency = 0 }'), C, None, "concurrency"),
    ("campaign-endpoint-timeout", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'timeout_s = 0 }'), C, None, "timeout_s"),
    ("campaign-endpoint-temperature", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'temperature = 9 }'), C, None, "temperature"),
    ("campaign-endpoint-unknown-key", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'api_key = "sk-inline" }'), C, None, "api_key: unknown field"),
    ("campaign-endpoint-key-unset", lambda w: w.edit_campaign(
        'kind = "extractive"', 'kind = "llm"\nendpoint = { base_url = "http://127.0.0.1:9/v1", model = "m", '
        'api_key_env = "LSREP_SURELY_UNSET_KEY_VAR" }'), C, None, "LSREP_SURELY_UNSET_KEY_VAR is not set"),
    ("campaign-judge-key-unset", lambda w: w.add_campaign(
        '[[judges]]\nname = "j"\nkind = "evolving"\n[judges.endpoint]\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\napi_key_env = "LSREP_SURELY_UNSET_KEY_VAR"'), C, None, r"judges\[j\]\.endpoint\.api_key_env"),
    ("campaign-deep-toml", lambda w: w.top("deep = " + "[" * 50000 + "]" * 50000), C, None, "nested|invalid TOML"),
    ("campaign-schedule-missing", lambda w: w.schedule.unlink(), S, None, "not found"),
    ("campaign-condition-schedule-missing", lambda w: w.edit_campaign(
        'system = "null"', 'system = "null"\nschedule = "other.toml"'), "other.toml", None, "not found"),
    ("campaign-schedule-directory", lambda w: (w.schedule.unlink(), w.schedule.mkdir()), S, None, "directory"),
    # -- store path ----------------------------------------------------------------------------
    ("store-is-directory", lambda w: (w.store.unlink(), w.store.mkdir()), ST, None, "directory"),
    ("store-not-sqlite", lambda w: w.store.write_text("hello, I am not a database\n"), ST, None, "not a SQLite"),
    ("store-parent-is-file", lambda w: (w.edit_campaign('store = "store.sqlite"', 'store = "campaign.toml/x.sqlite"')),
     "x.sqlite", None, "not a directory"),
    # -- schedule TOML -------------------------------------------------------------------------
    ("schedule-invalid-toml", lambda w: w.sched("[schedule\n"), S, 1, "invalid TOML"),
    ("schedule-not-utf8", lambda w: w.schedule.write_bytes(b'[schedule]\nname = "\xe9"\n'), S, 2, "not UTF-8"),
    ("schedule-empty", lambda w: w.sched(""), S, None, "empty"),
    ("schedule-at-empty", lambda w: w.sched(SCHED.replace('at = ["session_end"]', "at = []")), S, None,
     "checkpoints.at"),
    ("schedule-turn-ids-typo", lambda w: w.sched(SCHED.replace(
        'at = ["session_end"]', 'at = ["turn_ids"]\nturn_ids = ["t0O10"]')), S, None, "t0O10"),
    ("schedule-turn-ids-empty", lambda w: w.sched(SCHED.replace('at = ["session_end"]', 'at = ["turn_ids"]')), S,
     None, "turn_ids"),
    ("schedule-every-n-missing", lambda w: w.sched(SCHED.replace('at = ["session_end"]', 'at = ["every_n_turns"]')),
     S, None, "every_n_turns"),
    ("schedule-every-n-zero", lambda w: w.sched(SCHED.replace(
        'at = ["session_end"]', 'at = ["every_n_turns"]\nevery_n_turns = 0')), S, None, "every_n_turns"),
    ("schedule-unknown-trigger", lambda w: w.sched(SCHED.replace('at = ["session_end"]', 'at = ["sometimes"]')), S,
     None, "at"),
    ("schedule-unknown-key", lambda w: w.sched(SCHED.replace('version = 1', 'version = 1\ncolour = "red"')), S, None,
     "colour"),
    ("schedule-compression-zero", lambda w: w.sched(SCHED.replace('clock = "timestamps"',
                                                                  'clock = "compressed"\ncompression = 0')), S, None,
     "compression"),
    ("schedule-access-unknown", lambda w: w.sched(SCHED.replace('access = "persistent"', 'access = "shared"')), S,
     None, "access"),
    ("schedule-clock-unknown", lambda w: w.sched(SCHED.replace('clock = "timestamps"', 'clock = "sundial"')), S,
     None, "clock"),
    ("schedule-maintenance-interval", lambda w: w.sched(SCHED.replace('at = "day_boundary"', 'at = "every_n_turns"')),
     S, None, "every_n_turns"),
    ("schedule-maintenance-trigger", lambda w: w.sched(SCHED.replace('at = "day_boundary"', 'at = "whenever"')), S,
     None, "at"),
    ("schedule-maintenance-no-operation", lambda w: w.sched(SCHED.replace('operation = "nightly"', 'operation = ""')),
     S, None, "operation"),
    ("schedule-times-naive", lambda w: w.sched(SCHED.replace(
        'at = ["session_end"]', 'at = ["times"]\ntimes = [2026-03-05T10:00:00]')), S, None, "time zone"),
    ("schedule-times-empty", lambda w: w.sched(SCHED.replace('at = ["session_end"]', 'at = ["times"]')), S, None,
     "times"),
    ("schedule-version-string", lambda w: w.sched(SCHED.replace("version = 1", 'version = "one"')), S, None,
     "version"),
    ("locomo-directory", lambda w: _locomo(w, None), "conv.json", None, "directory"),
    ("locomo-invalid-json", lambda w: _locomo(w, "[{"), "conv.json", None, "not a LoCoMo JSON file"),
    ("locomo-not-list", lambda w: _locomo(w, "{}"), "conv.json", None, "JSON list"),
    ("locomo-unknown-sample", lambda w: _locomo(w, '[{"sample_id": "other"}]'), "conv.json", None, "no sample"),
    ("locomo-sample-not-object", lambda w: _locomo(w, '[1, {"sample_id": "conv-x"}]'), "conv.json", None,
     "not an object"),
    ("locomo-deep", lambda w: _locomo(w, "[" * 200000), "conv.json", None, "nested too deeply|not a LoCoMo"),
    ("locomo-not-utf8", lambda w: _locomo(w, b"\xff\xfe["), "conv.json", None, "not a LoCoMo JSON file"),
    ("locomo-bad-sample", lambda w: _locomo(w, '[{"sample_id": "conv-x", "conversation": 3}]'), "conv.json", None,
     "sample conv-x"),
]


def _locomo(w: Workspace, content: str | bytes | None) -> None:
    path = w.root / "conv.json"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    w.edit_campaign('trajectory = "quickstart/trajectory.jsonl"\nprobes = "quickstart/probes.jsonl"',
                    'locomo = "conv.json"\nconversation = "conv-x"')


def _digest(path: Path) -> str:
    if not path.exists():
        return "absent"
    if path.is_dir():
        return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    # A workspace whose store already holds one finished run, so "unchanged" is a real check.
    root = tmp_path_factory.mktemp("template")
    ws = _ws(root)
    assert main(["run", str(ws.campaign), "--quiet"]) == 0
    import sqlite3

    conn = sqlite3.connect(ws.store)
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    return root


def _store_files(ws: Workspace) -> dict[str, str]:
    return {p.name: _digest(p) for p in sorted(ws.root.iterdir()) if p.name.startswith("store.sqlite")}


@pytest.mark.parametrize(("case", "edit", "names", "line", "reason"), CASES, ids=[c[0] for c in CASES])
def test_malformed_input_is_one_clean_error(case, edit, names, line, reason, template, tmp_path, capsys):
    root = tmp_path / "ws"
    shutil.copytree(template, root)
    ws = Workspace(root, root / "campaign.toml", root / "quickstart/trajectory.jsonl",
                   root / "quickstart/probes.jsonl", root / "schedule.toml", root / "store.sqlite")
    edit(ws)
    before = _store_files(ws)
    capsys.readouterr()

    outcomes = []
    for argv in (["validate", str(ws.campaign)], ["run", str(ws.campaign), "--quiet"]):
        code = main(argv)
        out, err = capsys.readouterr()
        outcomes.append((code, err.strip()))
        assert code == 2, f"{case}: {argv[0]} exited {code}: {out} {err}"
        assert "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
        where = re.escape(names) + (f":{line}:" if line is not None else r"(:\d+)?:")
        assert re.search(where, err), f"{case}: {argv[0]} does not name {names}{':' + str(line) if line else ''}: {err}"
        assert re.search(reason, err), f"{case}: {argv[0]} does not say {reason!r}: {err}"
        assert _store_files(ws) == before, f"{case}: {argv[0]} changed the store"
    assert outcomes[0] == outcomes[1], f"{case}: validate and run disagree: {outcomes}"


def test_table_is_large_enough():
    assert len(CASES) >= 100
    assert len({c[0] for c in CASES}) == len(CASES)


def test_valid_odd_text_is_accepted(template, tmp_path, capsys):
    # U+2028, U+0085 and U+2029 raw inside JSON strings are valid JSON: the writer emits them.
    root = tmp_path / "ws"
    shutil.copytree(template, root)
    traj = root / "quickstart/trajectory.jsonl"
    lines = traj.read_text(encoding="utf-8").split("\n")
    record = json.loads(lines[1])
    record["content"] += " line\u2028separator\u0085next\u2029para \U0001f600"
    lines[1] = json.dumps(record, ensure_ascii=False)
    traj.write_text("\n".join(lines), encoding="utf-8")
    assert main(["validate", str(root / "campaign.toml")]) == 0
    assert main(["run", str(root / "campaign.toml"), "--quiet"]) == 0
    from lsrep.store import RunStore

    store = RunStore(root / "store.sqlite")
    stored = store.rows("select content from turns where turn_id = 't0002' order by run_id desc limit 1")
    assert stored[0]["content"] == record["content"]
