"""The adapter host's filesystem view: only code, the system and its own folder; protected paths
inside the view covered; the view locked (no unmounting a cover, no writing to code, no way
through the zygote's /proc entry to the whole disk)."""

from __future__ import annotations

import json
import sys
import textwrap
from datetime import UTC, datetime

import pytest

from lsrep.harness import validate_condition
from lsrep.host.client import open_hosted
from lsrep.host.launch import isolation
from lsrep.host.sandbox import PROTECTED_ENV, protect

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)

ADAPTER = textwrap.dedent('''
    import ctypes, json, os
    from lsrep.contract import Fragment, MemoryAdapter, QueryResult

    def _try(fn):
        try:
            return fn()
        except OSError as exc:
            return f"error: {type(exc).__name__}"

    class ViewAdapter(MemoryAdapter):
        """Reports what its host can read, write and unmount."""

        def reset(self, *, conversation_id, now):
            pass

        def ingest(self, turn, *, now):
            pass

        def query(self, question, *, now):
            paths = json.loads(question)
            libc = ctypes.CDLL(None, use_errno=True)
            seen = {
                "read": {p: _try(lambda p=p: open(p).read()) for p in paths["read"]},
                "write_code": _try(lambda: open(os.path.join(os.path.dirname(__file__), "x"), "w").close()),
                "umount": {p: libc.umount2(p.encode(), 2) for p in paths["read"]},
                "zygote_root": _try(lambda: os.listdir("/proc/1/root")),
                "own_folder": _try(lambda: open("scratch", "w").write("ok")),
            }
            return QueryResult(fragments=(Fragment(text=json.dumps(seen)),))

    from pydantic import BaseModel

    class DocsOptions(BaseModel):
        documents: tuple[str, ...] = ()

    class DocsAdapter(ViewAdapter):
        """The same, with a file-naming option (as ICE's `documents`)."""

        Options = DocsOptions
''')


@pytest.fixture
def package(tmp_path, monkeypatch):
    pkg = tmp_path / "viewpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(ADAPTER)
    (pkg / "probes.jsonl").write_text('{"question": "gold?", "answer": "GOLD-IN-PACKAGE"}\n')
    (pkg / "notes.txt").write_text("the adapter's own data")
    (tmp_path / "beside.txt").write_text("GOLD-BESIDE-PACKAGE")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(PROTECTED_ENV, "[]")
    sys.modules.pop("viewpkg", None)
    return tmp_path


def test_the_host_sees_its_code_but_not_the_protected_or_the_rest(package):
    if isolation() != "sandbox":
        pytest.skip("no mount namespace on this machine (the manifest records the isolation level)")
    protect(package / "viewpkg" / "probes.jsonl")
    cls, _ = validate_condition("viewpkg:ViewAdapter", {}, (), "c")
    adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
    paths = [str(package / "viewpkg" / "probes.jsonl"), str(package / "viewpkg" / "notes.txt"),
             str(package / "beside.txt")]
    try:
        adapter.reset(conversation_id="c", now=NOW)
        seen = json.loads(adapter.query(json.dumps({"read": paths}), now=NOW).fragments[0].text)
    finally:
        adapter.close()
    protected, own, beside = (seen["read"][p] for p in paths)
    assert protected == ""                       # covered: an empty file
    assert own == "the adapter's own data"       # the package itself is visible (control)
    assert beside.startswith("error")            # outside the package: not in the view at all
    assert seen["write_code"].startswith("error")  # code is read-only
    assert all(code != 0 for code in seen["umount"].values())  # covers are locked
    assert seen["zygote_root"].startswith("error")  # no way round through /proc/1/root
    assert seen["own_folder"] == 2


def test_in_process_the_same_adapter_reads_everything(package, tmp_path, monkeypatch):
    from lsrep.host import open_adapter

    monkeypatch.chdir(tmp_path)
    protect(package / "viewpkg" / "probes.jsonl")
    cls, opts = validate_condition("viewpkg:ViewAdapter", {}, (), "c")
    adapter = open_adapter("in-process", cls, opts, {}, disable=(), state_dir=tmp_path, retrieval_budget=None,
                           embedder=None, llm=None, seed=0)
    paths = [str(package / "viewpkg" / "probes.jsonl"), str(package / "beside.txt")]
    adapter.reset(conversation_id="c", now=NOW)
    seen = json.loads(adapter.query(json.dumps({"read": paths}), now=NOW).fragments[0].text)
    assert "GOLD-IN-PACKAGE" in seen["read"][paths[0]] and seen["read"][paths[1]] == "GOLD-BESIDE-PACKAGE"


def test_files_the_options_name_are_readable_but_never_a_protected_one(package):
    if isolation() != "sandbox":
        pytest.skip("no mount namespace on this machine (the manifest records the isolation level)")
    probes, beside = package / "viewpkg" / "probes.jsonl", package / "beside.txt"
    protect(probes)
    options = {"documents": [str(beside), str(probes)]}  # the campaign author gives the first; the second is gold
    cls, _ = validate_condition("viewpkg:DocsAdapter", options, (), "c")
    adapter = open_hosted(cls, options, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
    try:
        adapter.reset(conversation_id="c", now=NOW)
        seen = json.loads(adapter.query(json.dumps({"read": [str(beside), str(probes)]}), now=NOW).fragments[0].text)
    finally:
        adapter.close()
    assert seen["read"][str(beside)] == "GOLD-BESIDE-PACKAGE"  # granted: named by the options
    assert "GOLD-IN-PACKAGE" not in seen["read"][str(probes)]  # protected: never granted, still covered
