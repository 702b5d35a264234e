"""`lsrep longmemeval` says how many processes ran its questions by default, and how many ran in a worker."""

from __future__ import annotations

import lsrep.executors.overlap as overlap
from lsrep.cli import main


def _run(tmp_path, capsys, *extra: str) -> str:
    from lsrep.probes.generator import generate_longmemeval_file

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=4, sessions_per_question=2, seed=2)
    code = main(["longmemeval", "--systems", "vector-rag", "--data", str(data), "--store",
                 str(tmp_path / "store.sqlite"), "--fresh", "--progress", "none", *extra])
    assert code == 0
    return capsys.readouterr().out


def test_the_default_names_its_processes_where_two_cores_are_usable(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(overlap, "usable_cores", lambda: 2)
    out = _run(tmp_path, capsys)
    line = next(x for x in out.splitlines() if x.startswith("processes: "))
    assert line.startswith("processes: 2 (this one and 1 worker(s)); ")
    ran = int(line.split("; ")[1].split()[0])
    assert 0 <= ran <= 4


def test_one_process_prints_no_processes_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(overlap, "usable_cores", lambda: 2)
    out = _run(tmp_path, capsys, "--workers", "1")
    assert "ran run " in out and not any(x.startswith("processes: ") for x in out.splitlines())
