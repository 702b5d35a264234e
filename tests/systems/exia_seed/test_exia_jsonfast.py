"""EXIA SEED's state files are written by `jsonfast.dumps`: the very text of
`json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)`, fresh or from its memo."""

from __future__ import annotations

import json
import random

import pytest
from lsrep.systems.exia_seed import jsonfast

STRINGS = ["", "a", "brut:2025-01-01-001:3", "é à ç", "quote \" and \\ back", "tab\tnew\nline", "\x00\x1f",
           "emoji 🚀", "\u2028", "日本語"]
SCALARS = [None, True, False, 0, 1, -1, 2**70, 0.0, -0.0, 1.0, 1.5, float("nan"), float("inf"), float("-inf"),
           *STRINGS]
KEYS = [*STRINGS, 0, 1, -3, 1.5, True, False, None]


def _plain(data):
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)


def _random(rng: random.Random, depth: int):
    roll = rng.random()
    if depth == 0 or roll < 0.4:
        return rng.choice(SCALARS)
    if roll < 0.7:
        items = [_random(rng, depth - 1) for _ in range(rng.randint(0, 5))]
        return tuple(items) if rng.random() < 0.2 else items
    keys = rng.sample(KEYS, rng.randint(0, 5))
    if rng.random() < 0.8:  # mostly sortable keys (mixed types make both raise TypeError)
        same = rng.choice([str, int])
        keys = [k for k in keys if type(k) is same]
    return {k: _random(rng, depth - 1) for k in keys}


def test_the_text_is_json_dumps_on_random_nested_data():
    rng = random.Random(7)
    written = raised = 0
    for _ in range(4000):
        data = _random(rng, 4)
        try:
            want = _plain(data)
        except TypeError:
            with pytest.raises(TypeError):
                jsonfast.dumps(data)
            raised += 1
            continue
        assert jsonfast.dumps(data) == want
        written += 1
    assert written > 2000 and raised > 0


def test_memoised_containers_never_stand_for_equal_values_that_write_differently():
    # 0 == 0.0 == -0.0 == False and 1 == 1.0 == True: as dict values, list items and within
    # nesting, each writes its own text however often the others were written before.
    for value in (0, 0.0, -0.0, False, 1, 1.0, True, 0, -0.0, True, 1):
        for data in ([value], {"k": value}, [[value, "x"]], {"a": [value], "b": {"c": value}}, (value,)):
            assert jsonfast.dumps(data) == _plain(data)
    for key in (1, 1.0, True, "1", 0, 0.0, False, -0.0):  # 1 and True are one dict key: as json does
        assert jsonfast.dumps({key: "v"}) == _plain({key: "v"})


def test_a_journal_rewritten_as_it_grows_is_the_same_text_each_time():
    progress = {"lot_ouvert": None, "lots_fermes": [], "compteur_jour": {}, "integres": {}, "dernier_tour": [],
                "consolidations": 0, "tentatives": {}}
    for i in range(60):
        day = f"2025-01-{i // 3 + 1:02d}"
        progress["compteur_jour"][day] = progress["compteur_jour"].get(day, 0) + 1
        progress["lots_fermes"].append({"id": f"{day}-{i:03d}", "date": day, "lignes": i % 7, "digest": "ab" * 32,
                                        "raison": "session", "ferme_a": f"{day}T09:00:00+00:00"})
        progress["integres"][f"{day}-{i:03d}"] = sorted({1, 3, i % 5 + 1})
        progress["dernier_tour"] = [f"brut:{day}-{i:03d}:{n}" for n in range(i % 3)]
        progress["tentatives"][f"brut:x:{i}"] = i % 2
        # As the journal is used: read back from the file, changed, written again.
        progress = json.loads(jsonfast.dumps(progress))
        assert jsonfast.dumps(progress) == _plain(progress)


def test_unserialisable_values_and_keys_raise_as_json_does():
    for data in ({"a": object()}, [set()], {(1, 2): "tuple key"}):
        with pytest.raises(TypeError):
            _plain(data)
        with pytest.raises(TypeError):
            jsonfast.dumps(data)
