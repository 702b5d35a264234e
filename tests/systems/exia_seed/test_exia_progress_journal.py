"""The progress journal against the single-file rule it replaced, along random histories:

- `jsonfast.IncrementalDumps` (re-encode only the top-level values that changed) against
  `json.dumps(indent=1, sort_keys=True)` of the whole dict, with values changed in place, replaced,
  added and removed, and types swapped (a list for a dict, a string for a number);
- `progress.ProgressStore` (a small head, `etat/progress.json`, and an append-only history,
  `etat/journal.jsonl`) against `OldRule`, the rule before it: the whole state one dict, rewritten
  whole to `progress.json` at every save, with its per-day counters (`compteur_jour`). Along random
  batches opened, written, closed (a day's counter included), lines integrated, retry counts,
  changes left unsaved, the process reopened from disk, snapshots restored and a crash between the
  journal's append and the head's replacement, every load gives the state the old file held
  after the last save, and the closed batches with lines pending are the old scan's;
- the provider along a random conversation: `pending_lots` against the old scan of every closed
  batch, and the state read back by a reopened process; a crash between the page writes and the
  journal (E-17) and the rerun;
- the work: a turn without closure appends nothing, the head stays the same size as history grows,
  the journal is read only when it is not the one held.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from exia_testkit import at
from lsrep.systems.exia_seed import ExiaSeedProvider, Settings, jsonfast, progress
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.ingestion import (
    Lot,
    RawLine,
    RawWriter,
    batch_sources,
    pending_lots,
    withdrawn_refs,
)
from lsrep.systems.exia_seed.progress import (
    JournalMismatch,
    Progress,
    ProgressStore,
    close_batch,
    load_progress,
    mark_lines_integrated,
    read_progress,
    save_progress,
    set_tries,
)


def plain(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)


def change(rng: random.Random, data: dict) -> None:
    """One random change of a progress-shaped dict, in place or by replacement."""
    key = rng.choice(["lots_fermes", "integres", "compteur_jour", "lot_ouvert", "dernier_tour", "consolidations",
                      "tentatives", "autre"])
    roll = rng.random()
    value = data.get(key)
    if roll < 0.1:
        data.pop(key, None)
    elif roll < 0.2:
        data[key] = rng.choice([None, "texte é", 3, [], {}, [1, "a"], {"k": [2]}])
    elif isinstance(value, list):
        if value and rng.random() < 0.5 and isinstance(value[-1], dict):
            value[-1]["lignes"] = rng.randint(0, 9)  # an element changed in place
        else:
            value.append(rng.choice([{"id": f"b{rng.randint(0, 99)}", "lignes": rng.randint(1, 9)}, "x", 7]))
    elif isinstance(value, dict):
        inner = f"b{rng.randint(0, 5)}"
        if rng.random() < 0.5 and isinstance(value.get(inner), list):
            value[inner].append(rng.randint(0, 50))  # a list changed in place
        else:
            value[inner] = sorted(rng.sample(range(40), rng.randint(0, 6)))
    elif isinstance(value, int):
        data[key] = value + 1
    else:
        data[key] = {"id": "open", "lignes": rng.randint(0, 5), "caracteres": rng.randint(0, 500)}


@pytest.mark.parametrize("seed", range(20))
def test_incremental_dumps_writes_json_dumps_text_after_every_change(seed):
    rng = random.Random(seed)
    data = {"lots_fermes": [], "integres": {}, "compteur_jour": {}, "lot_ouvert": None, "dernier_tour": [],
            "consolidations": 0, "tentatives": {}}
    dumps = jsonfast.IncrementalDumps()
    for _ in range(150):
        for _ in range(rng.randint(0, 3)):
            change(rng, data)
        assert dumps.dumps(data) == plain(data)
        assert dumps.unchanged(data)
    assert dumps.dumps({}) == plain({}) and dumps.dumps([1, 2]) == plain([1, 2])


# --- the oracle: the single-file rule (ingestion.py until 2026-12-07) -------------------------------

class OldRule:
    """The state as one dict, `progress.json` rewritten whole at every save; kept as the oracle."""

    def __init__(self, path) -> None:
        self.path = path

    @staticmethod
    def empty() -> dict:
        return {"lot_ouvert": None, "lots_fermes": [], "compteur_jour": {}, "integres": {}, "dernier_tour": [],
                "consolidations": 0, "tentatives": {}}

    def load(self) -> dict:
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else self.empty()

    def save(self, data: dict) -> None:
        self.path.write_text(plain(data) + "\n", encoding="utf-8")

    @staticmethod
    def open(data: dict, day: str) -> str:
        n = data["compteur_jour"].get(day, 0) + 1
        data["compteur_jour"][day] = n
        data["lot_ouvert"] = {"id": f"{day}-{n:03d}", "date": day, "fichier": f"brut/{day}-{n:03d}.open.md",
                              "lignes": 0, "caracteres": 0}
        return data["lot_ouvert"]["id"]

    @staticmethod
    def mark(data: dict, refs) -> None:
        for ref in refs:
            _, batch_id, number = ref.split(":")
            done = set(data["integres"].get(batch_id, []))
            done.add(int(number))
            data["integres"][batch_id] = sorted(done)

    @staticmethod
    def pending(data: dict) -> list[str]:
        return [b["id"] for b in data["lots_fermes"] if len(set(data["integres"].get(b["id"], []))) < b["lignes"]]


def same_state(new: Progress, old: dict) -> None:
    """The new state is the old dict, its per-day counters derived; pending is the old scan."""
    expected = {k: v for k, v in old.items() if k != "compteur_jour"}
    assert dict(new) == expected
    counters = dict(new.days)
    if new["lot_ouvert"] is not None:
        day = new["lot_ouvert"]["date"]
        counters[day] = counters.get(day, 0) + 1
    assert counters == old["compteur_jour"]
    assert list(new.pending) == OldRule.pending(old)


def transaction(rng: random.Random, new: Progress, old: dict, clock: list[int]) -> None:
    """The same random changes to both states."""
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.45:  # a turn of 1-3 lines, on the same day or a later one
            clock[0] += rng.choice([0, 0, 0, 1, 2])
            day = f"2026-03-{clock[0] % 28 + 1:02d}"
            refs = []
            for _ in range(rng.randint(1, 3)):
                if new["lot_ouvert"] is not None and new["lot_ouvert"]["date"] != day:
                    close(rng, new, old)
                if new["lot_ouvert"] is None:
                    n = new.days.get(day, 0) + 1
                    new["lot_ouvert"] = {"id": f"{day}-{n:03d}", "date": day, "fichier": f"brut/{day}-{n:03d}.open.md",
                                         "lignes": 0, "caracteres": 0}
                    assert OldRule.open(old, day) == new["lot_ouvert"]["id"]
                for lot in (new["lot_ouvert"], old["lot_ouvert"]):
                    lot["lignes"] += 1
                    lot["caracteres"] += 30
                refs.append(f"brut:{new['lot_ouvert']['id']}:{new['lot_ouvert']['lignes']}")
            new["dernier_tour"], old["dernier_tour"] = list(refs), list(refs)
        elif roll < 0.6 and new["lot_ouvert"] is not None:
            close(rng, new, old)
        elif roll < 0.85 and old["lots_fermes"]:  # a consolidation marks some lines (some again)
            refs = []
            for batch in rng.sample(old["lots_fermes"], min(len(old["lots_fermes"]), rng.randint(1, 3))):
                refs += [f"brut:{batch['id']}:{rng.randint(1, batch['lignes'])}" for _ in range(rng.randint(0, 4))]
            lot = f"c{old['consolidations'] + 1:04d}"
            mark_lines_integrated(new, refs, lot if rng.random() < 0.8 else None)
            OldRule.mark(old, refs)
            new["consolidations"] += 1
            old["consolidations"] += 1
        else:  # retry counts (fix.journal_only_admitted)
            refs = [f"registre:n{rng.randint(1, 6):05d}" for _ in range(rng.randint(0, 3))]
            tries = {r: old["tentatives"].get(r, 0) + 1 for r in sorted(set(refs))}
            set_tries(new, tries, "c0001")
            old["tentatives"].update(tries)


def close(rng: random.Random, new: Progress, old: dict) -> None:
    lot = new["lot_ouvert"]
    previous = old["lots_fermes"][-1]["digest"] if old["lots_fermes"] else ""
    record = {"id": lot["id"], "date": lot["date"], "fichier": f"brut/{lot['id']}.md", "lignes": lot["lignes"],
              "digest": f"{rng.getrandbits(64):016x}", "digest_precedent": previous, "ferme_a": "t é",
              "raison": rng.choice(["jour", "session", "volume"])}
    close_batch(new, record)
    old["lots_fermes"].append(json.loads(json.dumps(record)))
    new["lot_ouvert"] = old["lot_ouvert"] = None


REPLACE = os.replace


def crash_on(path):
    """`os.replace` that fails for `path` (the process dies before the head is replaced)."""
    def replace(src, dst):
        if str(dst) == str(path):
            raise OSError("crash")
        return REPLACE(src, dst)

    return replace


@pytest.mark.parametrize("seed", range(12))
def test_the_store_reads_back_what_the_single_file_held_after_every_save(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(progress, "_STORES", progress.OrderedDict())
    paths = MemoryPaths(tmp_path / "mem")
    oracle = OldRule(tmp_path / "old-progress.json")
    clock = [0]
    snapshots: list[tuple] = []
    for _ in range(160):
        roll = rng.random()
        if roll < 0.06:  # the process reopened: nothing held in memory
            progress._STORES.clear()
        elif roll < 0.1:
            etat = paths.root / "etat"
            files = {p.name: p.read_bytes() for p in etat.iterdir()} if etat.exists() else {}
            snapshots.append((files, oracle.load()))
        elif roll < 0.14 and snapshots:  # a snapshot restored: the whole directory replaced
            files, old = rng.choice(snapshots)
            etat = paths.root / "etat"
            for p in list(etat.iterdir()) if etat.exists() else []:
                p.unlink()
            for name, data in files.items():
                etat.mkdir(parents=True, exist_ok=True)
                (etat / name).write_bytes(data)
            oracle.save(old) if files else oracle.path.unlink(missing_ok=True)
        else:
            new, old = load_progress(paths), oracle.load()
            same_state(new, old)
            transaction(rng, new, old, clock)
            end = rng.random()
            if end < 0.8:
                save_progress(paths, new)
                oracle.save(old)
            elif end < 0.9 and new.rows:  # a crash after the journal's append, before the head
                monkeypatch.setattr(progress.os, "replace", crash_on(paths.progress))
                with pytest.raises(OSError):
                    save_progress(paths, new)
                monkeypatch.setattr(progress.os, "replace", REPLACE)
                progress._STORES.clear()
            # else: changed and never saved
        same_state(read_progress(paths), oracle.load())
    progress._STORES.clear()
    same_state(load_progress(paths), oracle.load())


# --- the provider: pending lots, a reopened process, E-17 -------------------------------------------

def old_pending(paths: MemoryPaths, settings: Settings, agent_label: str) -> list[Lot]:
    """`pending_lots` before the journal: every closed batch scanned (ingestion.py until 2026-12-07)."""
    state = read_progress(paths)
    withdrawn = withdrawn_refs(paths)
    lots: list[Lot] = []
    for batch in state["lots_fermes"]:
        done = set(state["integres"].get(batch["id"], []))
        if len(done) >= batch["lignes"]:
            continue
        # The lines of one batch are read as pending_lots reads them; what differs is which batches.
        sources = batch_sources(paths, settings, agent_label, batch, done, withdrawn)
        if sources:
            lots.append(Lot(batch["id"], batch["date"], tuple(sources)))
    return lots


WORDS = "garden river Alice station coffee Lyon budget meeting report Bob violin harbour museum".split()


def reopened(home, settings: Settings) -> ExiaSeedProvider:
    """A new process on the same state directory: nothing held in memory."""
    progress._STORES.clear()
    provider = ExiaSeedProvider(settings)
    provider.initialize("s1", hermes_home=home, platform="test", agent_context="primary")
    return provider


@pytest.mark.parametrize("seed", range(6))
def test_pending_lots_are_the_old_scan_along_a_conversation_reopened_midway(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(progress, "_STORES", progress.OrderedDict())
    settings = Settings(batch_max_lines=rng.choice([3, 5, 400]), auto_consolidate=seed % 2 == 1,
                        consolidation_budget_chars=rng.choice([150, 24_000]))
    home = tmp_path / "home"
    provider = reopened(home, settings)
    day, minute, seen = 0, 0, 0
    for _ in range(60):
        roll = rng.random()
        minute += 1
        if roll < 0.6:
            day += rng.random() < 0.15
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))
            if rng.random() < 0.1:
                text = "Forget that. " + text
            provider.sync_turn(text, rng.choice(["", "Noted, the " + text]), now=at(days=day, minutes=minute))
        elif roll < 0.7:
            provider.on_session_end([], now=at(days=day, minutes=minute))
        elif roll < 0.8:
            provider.consolidate(at(days=day, minutes=minute), force=rng.random() < 0.5)
        elif roll < 0.88:
            before = dict(read_progress(provider.paths))
            provider = reopened(home, settings)
            assert dict(load_progress(provider.paths)) == before
        lots = pending_lots(provider.paths, settings, "Assistant")
        assert lots == old_pending(provider.paths, settings, "Assistant")
        seen += len(lots)
    assert read_progress(provider.paths)["lots_fermes"] and (seen or settings.auto_consolidate)


def test_e17_a_crash_between_pages_and_journal_then_a_reopened_process_reruns_and_dedupes(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "_STORES", progress.OrderedDict())

    def crash(stage: str) -> None:
        if stage == "pages_written":
            raise RuntimeError("injected crash")

    settings = Settings(auto_consolidate=False)
    home = tmp_path / "home"
    provider = ExiaSeedProvider(settings, fault_hook=crash)
    provider.initialize("s1", hermes_home=home, platform="test", agent_context="primary")
    provider.sync_turn("My sister Alice moved to Lyon with her husband Bob last spring.", "", now=at())
    provider.close_batch(at(minutes=1))
    assert provider.consolidate(at(minutes=2))["statut"] == "erreur"
    page = (provider.paths.fiches / "alice.md").read_text()
    assert "moved to Lyon" in page
    state = load_progress(provider.paths)
    assert state["integres"] == {} and state["consolidations"] == 0 and list(state.pending) == ["2026-03-01-001"]
    journal = provider.paths.journal.read_text().splitlines()
    assert [json.loads(row) for row in journal] == [{"ferme": state["lots_fermes"][0]}]
    provider = reopened(home, settings)
    assert [s.ref for lot in pending_lots(provider.paths, settings, "Assistant") for s in lot.sources] == [
        "brut:2026-03-01-001:1"]
    report = provider.consolidate(at(minutes=3))
    assert report["statut"] == "ok" and report["admis"] == 0 and report["doublons"] == 1
    assert (provider.paths.fiches / "alice.md").read_text().count("moved to Lyon") == 1
    state = reopened(home, settings) and load_progress(provider.paths)
    assert state["integres"] == {"2026-03-01-001": [1]} and state["consolidations"] == 1 and not state.pending
    assert json.loads(provider.paths.journal.read_text().splitlines()[-1]) == {
        "integres": {"2026-03-01-001": [1]}, "lot": "c0001"}


# --- the work ----------------------------------------------------------------------------------------

def test_a_turn_without_closure_appends_nothing_and_the_head_does_not_grow(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "_STORES", progress.OrderedDict())
    paths = MemoryPaths(tmp_path / "mem")
    writer = RawWriter(paths, Settings(), Emitter(lambda e: None))
    heads, sizes = [], [0]
    for day in range(120):
        for turn in range(3):
            _, closures = writer.append([RawLine(at(days=day, minutes=turn), "User", f"line {turn} of day {day}")])
            size = paths.journal.stat().st_size if paths.journal.exists() else 0
            assert (size > sizes[-1]) == bool(closures)
            sizes.append(size)
            heads.append(len(paths.progress.read_text()))
    assert len(read_progress(paths)["lots_fermes"]) == 119
    assert max(heads) < 400 and max(heads) - min(heads[3:]) <= 6  # the journal's size grows a digit or two


def test_the_journal_is_read_only_when_it_is_not_the_one_held(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    store = ProgressStore(paths)
    state = store.load()
    close_batch(state, {"id": "2026-03-01-001", "date": "2026-03-01", "fichier": "brut/2026-03-01-001.md",
                        "lignes": 2, "digest": "d", "digest_precedent": "", "ferme_a": "t", "raison": "jour"})
    store.save(state)
    assert store.load() is state and store.reads == 0 and state.rows == []
    state["dernier_tour"] = ["brut:x:1"]  # a head change left unsaved: the file's head comes back
    assert store.load() is state and state["dernier_tour"] == [] and store.reads == 0
    other = ProgressStore(paths)  # another process
    theirs = other.load()
    assert other.reads == 1 and dict(theirs) == dict(state) and list(theirs.pending) == ["2026-03-01-001"]
    mark_lines_integrated(theirs, ["brut:2026-03-01-001:1", "brut:2026-03-01-001:2"], "c0001")
    theirs["consolidations"] = 1
    other.save(theirs)
    mine = store.load()  # the head records another journal: read
    assert store.reads == 1 and mine is not state and dict(mine) == dict(theirs) and not mine.pending
    assert store.load() is mine and store.reads == 1
    etat = {p.name: p.read_bytes() for p in (paths.root / "etat").iterdir()}
    set_tries(mine, {"registre:n00001": 1})  # logged, never saved: the next load reads
    assert store.load() is not mine and store.reads == 2
    held = store.load()
    mine["consolidations"] = 5
    store.save(store.load())
    for name, data in etat.items():  # the same state restored from a copy: nothing read
        (paths.root / "etat" / name).write_bytes(data)
    assert store.load() is held and store.reads == 2


def test_a_journal_that_is_not_the_recorded_one_is_refused(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    store = ProgressStore(paths)
    state = store.load()
    mark_lines_integrated(state, ["brut:b:1"])
    store.save(state)
    text = paths.journal.read_bytes()
    paths.journal.write_bytes(text.replace(b"1", b"2"))
    with pytest.raises(JournalMismatch):
        ProgressStore(paths).load()
    paths.journal.write_bytes(text[:-1])
    with pytest.raises(JournalMismatch):
        ProgressStore(paths).load()
    mark_lines_integrated(state, ["brut:b:2"])
    with pytest.raises(JournalMismatch):  # shorter than recorded: never appended at a wrong offset
        store.save(state)
    paths.journal.write_bytes(text + b'{"integres": {"b": [9]}}\n')  # a crash's tail: dropped
    assert dict(ProgressStore(paths).load())["integres"] == {"b": [1]}
    store.save(state)
    assert paths.journal.read_bytes() == text + b'{"integres": {"b": [2]}}\n'


def test_a_single_file_progress_json_is_read_and_its_first_save_writes_the_journal(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    batch = {"id": "2026-03-01-001", "date": "2026-03-01", "fichier": "brut/2026-03-01-001.md", "lignes": 3,
             "digest": "d", "digest_precedent": "", "ferme_a": "t", "raison": "jour"}
    old = {"lot_ouvert": {"id": "2026-03-01-002", "date": "2026-03-01", "fichier": "brut/2026-03-01-002.open.md",
                          "lignes": 1, "caracteres": 20},
           "lots_fermes": [batch], "compteur_jour": {"2026-03-01": 2}, "integres": {"2026-03-01-001": [1, 3]},
           "dernier_tour": ["brut:2026-03-01-002:1"], "consolidations": 4, "tentatives": {"brut:2026-03-01-001:2": 1}}
    paths.progress.parent.mkdir(parents=True)
    paths.progress.write_text(plain(old) + "\n")
    state = ProgressStore(paths).load()
    same_state(state, old)
    ProgressStore(paths).save(state)
    assert "lots_fermes" not in json.loads(paths.progress.read_text())
    same_state(ProgressStore(paths).load(), old)


def test_lines_integrated_again_append_nothing(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    store = ProgressStore(paths)
    state = store.load()
    mark_lines_integrated(state, ["brut:b:1", "brut:b:3"], "c0001")
    store.save(state)
    size = paths.journal.stat().st_size
    mark_lines_integrated(state, ["brut:b:3", "brut:b:1"], "c0002")
    set_tries(state, {})
    assert state.rows == []
    mark_lines_integrated(state, ["brut:b:3", "brut:b:2"], "c0003")
    assert state.rows == [{"integres": {"b": [2]}, "lot": "c0003"}] and state["integres"] == {"b": [1, 2, 3]}
    store.save(state)
    assert paths.journal.stat().st_size == size + len('{"integres": {"b": [2]}, "lot": "c0003"}\n')
