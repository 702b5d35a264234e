"""EXIA raw capture (ingestion.py), pinned where the `exia-ingest` mutation session found it
loose: which turns the retention commands fire on (real LoCoMo turns among them), closure at the
exact line and character thresholds and on any change of day, the digest chain over several
batches, the append lock, what `pending_lots` lists (and the batches it does not reread), and
the integration journal."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from exia_testkit import at
from lsrep.systems.exia_seed import Settings, StageEvent
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths, file_lock
from lsrep.systems.exia_seed.ingestion import (
    Closure,
    Lot,
    RawLine,
    RawWriter,
    load_progress,
    mark_lines_integrated,
    omit_requested,
    pending_lots,
    save_progress,
    split_withdrawal,
    withdrawn_refs,
)
from lsrep.systems.exia_seed.prompts import Source


def writer(tmp_path: Path, **settings) -> tuple[RawWriter, list[StageEvent]]:
    events: list[StageEvent] = []
    paths = MemoryPaths(tmp_path / "mem")
    return RawWriter(paths, Settings(**settings), Emitter(events.append)), events


def line(text: str, when: datetime, speaker: str = "User", origin: str | None = None) -> RawLine:
    return RawLine(when, speaker, text, origin)


# -- retention commands ---------------------------------------------------------------------------

def _locomo() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "datasets" / "locomo" / "locomo-dev7.json"
        if candidate.exists():
            return candidate
    return None


# Real LoCoMo turns (locomo-dev7.json: conv-41 D14:7, conv-42 D22:17, conv-42 D24:17, conv-44 D16:14,
# conv-49 D23:30), as the host hands them over: none asks the memory to forget or omit anything.
LOCOMO_LINES = [
    "[John] Thanks, Maria. Got it. It's easy to get lost and forget that. Appreciate your support.",
    "[Joanna] Wow, Nate! That's sweet of you! I'll make sure to remember this when I need the encouragement the most.",
    "[Nate] You got this, and don't ever forget that you have people cheering you on from the sidelines wherever you go.",
    "[Audrey] Cool! Have a great time reconnecting with nature. Don't forget to take some nice pictures!",
    "[Sam] Yeah, Evan! Let me know all about it. Don't forget the details!",
]


@pytest.mark.parametrize("text", LOCOMO_LINES)
def test_real_dialogue_about_forgetting_is_written_verbatim(rig, text):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn(text, "", now=at())
    raw = (r.root / "brut" / "2026-03-01-001.open.md").read_text(encoding="utf-8")
    assert raw == f"[09:00] User: {text}\n"
    assert r.stages("ingest.retention") == [] and r.provider.runtime.counters["tours_omis"] == 0
    assert not (r.root / "etat" / "retraits.jsonl").exists()


def test_no_locomo_turn_in_the_shared_cut_is_a_retention_command():
    path = _locomo()
    if path is None:
        pytest.skip("locomo-dev7.json not found above this checkout")
    turns = [f"[{t['speaker']}] {t['text']}" for s in json.loads(path.read_text())
             for key, session in s["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    assert len(turns) == 3944
    changed = [t for t in turns if omit_requested(t) or split_withdrawal(t)[0]
               or split_withdrawal(t)[1].split() != t.split()]
    assert changed == []


def test_only_the_hosts_one_name_prefix_is_set_aside():
    # The second bracket is the speaker's own text, so the command is not at the start of a sentence.
    assert omit_requested("[Ana] Don't save this: my PIN is 1234.")
    assert not omit_requested("[Ana] [Bob] Don't save this: my PIN is 1234.")
    assert split_withdrawal("[Ana] Forget that.") == (True, "")
    assert split_withdrawal("[Ana] Forget that. Hi.") == (True, "[Ana] Hi.")
    assert split_withdrawal("[Ana] [Bob] Forget that.") == (False, "[Ana] [Bob] Forget that.")
    assert split_withdrawal("Forget that.") == (True, "")
    assert split_withdrawal("  The park was lovely.  ") == (False, "The park was lovely.")


def test_a_withdrawal_records_exactly_the_previous_turns_lines(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("My bike is a blue Peugeot.", "Nice bike!", now=at())
    r.provider.sync_turn("Forget that. The weather is fine.", "", now=at(minutes=1))
    rows = [json.loads(x) for x in (r.root / "etat" / "retraits.jsonl").read_text().splitlines()]
    assert rows == [{"ref": "brut:2026-03-01-001:1", "ts": at(minutes=1).isoformat()},
                    {"ref": "brut:2026-03-01-001:2", "ts": at(minutes=1).isoformat()}]
    retention = r.stages("ingest.retention")
    assert [(e.reason, e.count, e.refs) for e in retention] == [
        ("withdraw-previous", 2, ("brut:2026-03-01-001:1", "brut:2026-03-01-001:2"))]
    raw = (r.root / "brut" / "2026-03-01-001.open.md").read_text().splitlines()
    assert raw[-1] == "[09:01] User: The weather is fine."
    # A withdrawal with nothing before it records nothing and writes no journal.
    fresh = rig(auto_consolidate=False)
    fresh.provider.sync_turn("Forget that.", "", now=at())
    assert not (fresh.root / "etat" / "retraits.jsonl").exists()
    assert [e.count for e in fresh.stages("ingest.retention")] == [0]


# -- the writer -------------------------------------------------------------------------------------

def test_lines_refs_origins_and_the_last_turn(tmp_path):
    w, _ = writer(tmp_path)
    refs, closures = w.append([line("one two", at(), origin="u1"), line("three  four\nfive", at(), "Assistant")])
    assert refs == ["brut:2026-03-01-001:1", "brut:2026-03-01-001:2"] and closures == []
    assert (w.paths.brut / "2026-03-01-001.open.md").read_text() == (
        "[09:00] User: one two\n[09:00] Assistant: three four five\n")
    assert [json.loads(x) for x in w.paths.origins.read_text().splitlines()] == [
        {"origine": "u1", "ref": "brut:2026-03-01-001:1"}]
    progress = load_progress(w.paths)
    assert progress["dernier_tour"] == refs
    assert progress["lot_ouvert"]["lignes"] == 2
    assert progress["lot_ouvert"]["caracteres"] == len("[09:00] User: one two\n[09:00] Assistant: three four five\n")
    assert w.withdraw_previous(at(minutes=1)) == refs and withdrawn_refs(w.paths) == set(refs)
    w.append([line("six seven", at(minutes=2))])
    assert not w.paths.origins.read_text().count("\n") == 2  # a line without origin adds none
    assert len(w.paths.origins.read_text().splitlines()) == 1


def test_the_line_threshold_closes_at_exactly_the_maximum(tmp_path):
    w, events = writer(tmp_path, batch_max_lines=2)
    _, closures = w.append([line("first line here", at())])
    assert closures == []
    _, closures = w.append([line("second line here", at(minutes=1))])
    assert [(c.batch_id, c.reason, c.lines) for c in closures] == [("2026-03-01-001", "volume", 2)]
    assert load_progress(w.paths)["lot_ouvert"] is None
    close = [(e.stage, e.reason, e.ids, e.count) for e in events if e.mechanism == "batch.close"]
    assert close == [("eligible", "volume", ("2026-03-01-001",), None),
                     ("executed", "volume", ("2026-03-01-001",), 2)]


@pytest.mark.parametrize(("extra", "closed"), [(0, True), (1, False)])
def test_the_character_threshold_closes_at_exactly_the_maximum(tmp_path, extra, closed):
    row = "[09:00] User: a line of some length\n"
    w, _ = writer(tmp_path, batch_max_chars=len(row) + extra)
    _, closures = w.append([line("a line of some length", at())])
    assert bool(closures) is closed
    if closed:
        assert closures[0].reason == "volume" and closures[0].lines == 1


def test_any_change_of_day_closes_the_open_batch_even_backwards(tmp_path):
    w, _ = writer(tmp_path)
    w.append([line("late evening line", at(days=1))])
    refs, closures = w.append([line("a line stamped the day before", at())])
    assert [(c.batch_id, c.reason) for c in closures] == [("2026-03-02-001", "jour")]
    assert refs == ["brut:2026-03-01-001:1"]
    _, closures = w.append([line("same day again", at(minutes=5))])
    assert closures == []


def test_the_digest_chain_links_every_batch_to_the_one_before(tmp_path):
    w, _ = writer(tmp_path)
    for day in range(4):
        w.append([line(f"line of day {day}", at(days=day))])
    closed = load_progress(w.paths)["lots_fermes"]
    digests = [hashlib.sha256((w.paths.root / b["fichier"]).read_bytes()).hexdigest() for b in closed]
    assert [b["digest"] for b in closed] == digests
    assert [b["digest_precedent"] for b in closed] == ["", *digests[:-1]]
    assert [b["id"] for b in closed] == ["2026-03-01-001", "2026-03-02-001", "2026-03-03-001"]
    assert all(b["fichier"] == f"brut/{b['id']}.md" and b["lignes"] == 1 for b in closed)


def test_a_second_batch_the_same_day_is_numbered_two(tmp_path):
    w, _ = writer(tmp_path)
    w.append([line("before closing", at())])
    closure = w.close(at(minutes=1), "session")
    assert isinstance(closure, Closure) and closure.batch_id == "2026-03-01-001" and closure.reason == "session"
    assert w.close(at(minutes=2), "session") is None  # nothing open
    refs, _ = w.append([line("after closing", at(minutes=3))])
    assert refs == ["brut:2026-03-01-002:1"]


def _hold_lock_while(path: Path, action) -> tuple[bool, object]:
    """Run `action` in a thread while `path` is locked; return (it waited for the lock, its result)."""
    result: dict[str, object] = {}
    with file_lock(path, blocking=True):
        thread = threading.Thread(target=lambda: result.setdefault("value", action()))
        thread.start()
        time.sleep(0.3)
        waited = thread.is_alive()
    thread.join(120)
    return waited, result.get("value")


def test_appending_and_closing_wait_for_the_append_lock(tmp_path):
    w, _ = writer(tmp_path)
    waited, refs = _hold_lock_while(w.paths.brut / ".verrou", lambda: w.append([line("while locked", at())])[0])
    assert waited and refs == ["brut:2026-03-01-001:1"]
    waited, closure = _hold_lock_while(w.paths.brut / ".verrou", lambda: w.close(at(minutes=1), "session"))
    assert waited and closure is not None and closure.batch_id == "2026-03-01-001"


def test_raw_values_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        line("x", at()).text = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Closure("b", "jour", "d", "", 1).lines = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Lot("b", "2026-03-01", ()).day = "x"  # type: ignore[misc]


def test_a_lots_size_counts_each_source_and_its_newline():
    lot = Lot("b", "2026-03-01", (Source("brut:b:1", "ab", False, "2026-03-01"),
                                  Source("brut:b:2", "cde", True, "2026-03-01")))
    assert lot.chars == 7


# -- pending lots and the integration journal --------------------------------------------------------

def three_closed_batches(tmp_path):
    w, _ = writer(tmp_path)
    for day in range(3):
        w.append([line(f"user line of day {day}", at(days=day)),
                  line(f"assistant line of day {day}", at(days=day), "Assistant")])
    w.close(at(days=2, minutes=1), "session")
    return w


def test_pending_lots_skip_integrated_and_withdrawn_lines_and_keep_later_batches(tmp_path):
    w = three_closed_batches(tmp_path)
    progress = load_progress(w.paths)
    mark_lines_integrated(progress, ["brut:2026-03-01-001:1", "brut:2026-03-01-001:2", "brut:2026-03-02-001:1"])
    save_progress(w.paths, progress)
    assert load_progress(w.paths)["integres"] == {"2026-03-01-001": [1, 2], "2026-03-02-001": [1]}
    lots = pending_lots(w.paths, Settings(), "Assistant")
    assert [(lot.batch_id, lot.day, [s.ref for s in lot.sources]) for lot in lots] == [
        ("2026-03-02-001", "2026-03-02", ["brut:2026-03-02-001:2"]),
        ("2026-03-03-001", "2026-03-03", ["brut:2026-03-03-001:1", "brut:2026-03-03-001:2"])]
    first = lots[1].sources
    assert [(s.text, s.is_agent, s.day, s.time) for s in first] == [
        ("User: user line of day 2", False, "2026-03-03", "09:00"),
        ("Assistant: assistant line of day 2", True, "2026-03-03", "09:00")]
    w.append([line("a fresh line", at(days=2, minutes=5))])
    w.withdraw_previous(at(days=2, minutes=6))
    w.close(at(days=2, minutes=7), "session")
    refs = [s.ref for lot in pending_lots(w.paths, Settings(), "Assistant") for s in lot.sources]
    assert "brut:2026-03-03-002:1" not in refs and refs[-1] == "brut:2026-03-03-001:2"


def test_in_locomo_mode_no_speaker_is_the_agent(tmp_path):
    w = three_closed_batches(tmp_path)
    modes = {flag: {s.is_agent for lot in pending_lots(w.paths, Settings(no_agent_speaker=flag), "Assistant")
                    for s in lot.sources} for flag in (False, True)}
    assert modes == {False: {False, True}, True: {False}}
    assert {s.is_agent for lot in pending_lots(w.paths, Settings(), "Assistant2") for s in lot.sources} == {False}


def test_a_fully_integrated_batch_is_not_reread(tmp_path, monkeypatch):
    w, _ = writer(tmp_path)
    w.append([line(f"line {i}", at()) for i in range(300)])
    w.close(at(minutes=1), "session")
    w.append([line("a later line", at(days=1))])
    w.close(at(days=1, minutes=1), "session")
    progress = load_progress(w.paths)
    mark_lines_integrated(progress, [f"brut:2026-03-01-001:{i}" for i in range(1, 301)])
    save_progress(w.paths, progress)
    read: list[str] = []
    original = Path.read_text

    def spy(self, *args, **kwargs):
        read.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", spy)
    lots = pending_lots(w.paths, Settings(), "Assistant")
    assert [lot.batch_id for lot in lots] == ["2026-03-02-001"]
    assert [name for name in read if name.endswith(".md")] == ["2026-03-02-001.md"]


def test_marking_lines_integrated_merges_sorted_without_duplicates():
    progress = {"integres": {"b": [2]}}
    mark_lines_integrated(progress, ["brut:b:3", "brut:b:1", "brut:b:3", "brut:c:10"])
    assert progress["integres"] == {"b": [1, 2, 3], "c": [10]}


def test_the_first_consolidation_is_lot_c0001(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("My cat Tom sleeps on the red sofa all day.", "", now=at())
    report = r.provider.consolidate(at(minutes=1), force=True)
    assert report["lot"] == "c0001"
    assert load_progress(r.provider.paths)["consolidations"] == 1


def test_the_default_volume_threshold_closes_at_400_lines(tmp_path):
    w, _ = writer(tmp_path)
    _, closures = w.append([line(f"line {i}", at()) for i in range(399)])
    assert closures == []
    _, closures = w.append([line("line 399", at()), line("line 400", at())])
    assert [(c.reason, c.lines) for c in closures] == [("volume", 400)]
    assert load_progress(w.paths)["lot_ouvert"]["lignes"] == 1


def test_a_line_longer_than_the_character_threshold_closes_its_batch(tmp_path):
    w, _ = writer(tmp_path, batch_max_chars=300)
    _, closures = w.append([line("word " * 80, at())])
    assert [(c.reason, c.lines) for c in closures] == [("volume", 1)]


def test_a_lowered_line_threshold_closes_an_open_batch_already_past_it(tmp_path):
    w, _ = writer(tmp_path)
    w.append([line(f"line {i}", at()) for i in range(5)])
    lowered = RawWriter(w.paths, Settings(batch_max_lines=3), w.emit)
    _, closures = lowered.append([line("line 5", at())])
    assert [(c.reason, c.lines) for c in closures] == [("volume", 6)]
