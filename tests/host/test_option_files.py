"""`option_files`: the files a condition's options name, granted read-only to its host; options
naming no file return nothing at once (no package lookup), the same answer the filter gives."""

from __future__ import annotations

import json

from lsrep.host.sandbox import PROTECTED_ENV, option_files


def test_options_without_files_grant_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert option_files({}) == ()
    assert option_files({"k": 10, "name": "not-a-file", "nested": [{"x": "also-not"}], "flag": True}) == ()


def test_named_files_are_granted_except_protected_ones_and_stores(tmp_path, monkeypatch):
    doc, secret, store = tmp_path / "doc.txt", tmp_path / "campaign.toml", tmp_path / "runs.sqlite"
    for f in (doc, secret, store):
        f.write_text("x")
    monkeypatch.setenv(PROTECTED_ENV, json.dumps([str(secret)]))
    got = option_files({"documents": [str(doc), str(secret)], "store": str(store), "again": str(doc)})
    assert got == (str(doc.resolve()),)
