"""The progress journal's fast paths against the plain rules, along random sequences of changes:

- `jsonfast.IncrementalDumps` (re-encode only the top-level values that changed) against
  `json.dumps(indent=1, sort_keys=True)` of the whole dict, with values changed in place, replaced,
  added and removed, and types swapped (a list for a dict, a string for a number);
- `ProgressJournal` (the dict kept from a save to the next load) against parsing the file every
  time: what a load returns, and the file, after saves, changes left unsaved, read-only looks,
  other writers' changes to the file and the file removed.
"""

from __future__ import annotations

import json
import random

import pytest
from lsrep.systems.exia_seed import jsonfast
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.ingestion import (
    ProgressJournal,
    load_progress,
    read_progress,
    save_progress,
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


@pytest.mark.parametrize("seed", range(15))
def test_the_journal_loads_what_parsing_the_file_gives(tmp_path, seed):
    rng = random.Random(seed)
    paths = MemoryPaths(tmp_path / f"mem{seed}")
    path = paths.progress
    journal = ProgressJournal(path)
    for _ in range(120):
        roll = rng.random()
        if roll < 0.55:  # a writer: load, change, save
            data = journal.load()
            expected = json.loads(path.read_text()) if path.exists() else None
            if expected is not None:
                assert data == expected
            for _ in range(rng.randint(0, 3)):
                change(rng, data)
            journal.save(data)
            assert path.read_text() == plain(data) + "\n"
            if rng.random() < 0.2:  # changed again after its save, and not saved
                change(rng, data)
        elif roll < 0.65:  # a writer that changes the dict and never saves it
            data = journal.load()
            change(rng, data)
        elif roll < 0.8:  # a read-only look
            data = journal.load(keep=True)
            if path.exists():
                assert data == json.loads(path.read_text())
        elif roll < 0.95 and path.exists():  # another writer
            other = json.loads(path.read_text())
            change(rng, other)
            path.write_text(plain(other) + "\n" if rng.random() < 0.8 else json.dumps(other))
        elif path.exists():
            path.unlink()
    # The module-level functions share one journal per state directory.
    save_progress(paths, {"consolidations": 5, "lots_fermes": []})
    progress = load_progress(paths)
    assert progress == {"consolidations": 5, "lots_fermes": []} == read_progress(paths)
