"""EXIA SEED's fast paths write and read what the plain ones did."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

from lsrep.systems.exia_seed.pages import Fact


def test_fact_line_carries_every_field_as_asdict_did():
    fact = Fact(id="f1", text="Rex is a dog", section="semantic", refs=["brut:b1:2"], said="2025-01-01",
                event="2024-12-30", until=None, type="fait", privacy="normal", concepts=["pet"], lot="c0001")
    meta = json.loads(fact.to_line().rpartition(" <!-- ")[2].removesuffix(" -->"))
    optional = {"key", "value", "superseded_by"}  # the supersession fields: written only when set
    assert meta == {k: v for k, v in asdict(fact).items() if k not in ("text", "section", *optional)}
    assert set(meta) == {f.name for f in fields(Fact)} - {"text", "section"} - optional
    assert Fact.from_line(fact.to_line(), "semantic") == fact
    fact.key, fact.value, fact.superseded_by = "lives_in", "Porto", "f2"
    meta = json.loads(fact.to_line().rpartition(" <!-- ")[2].removesuffix(" -->"))
    assert set(meta) == {f.name for f in fields(Fact)} - {"text", "section"}
    assert Fact.from_line(fact.to_line(), "semantic") == fact
