"""`lsrep run` options: overrides, filters, limits, re-runs, the manifest's paths, progress, help."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from lsrep.cli import build_parser
from lsrep.store import RunStore


def _run_id(out: str) -> str:
    return out.split()[2].rstrip(":")


def _store(example) -> RunStore:
    return RunStore(example.parent.parent / "runs" / "lsrep.sqlite")


def test_overrides_change_the_run_and_are_recorded(example, cli):
    code, out, err = cli("run", example, "--quiet", "--conditions", "vector-rag",
                         "-S", "conditions.vector-rag.options.top_k=2", "-S", 'answerer.overflow="truncate_oldest"')
    assert code == 0, err
    store = _store(example)
    manifest = store.run(_run_id(out))["manifest"]
    assert manifest["overrides"] == ["conditions.vector-rag.options.top_k=2", 'answerer.overflow="truncate_oldest"']
    assert manifest["conditions"]["vector-rag"]["options"]["top_k"] == 2
    assert manifest["campaign"]["answerer"]["overflow"] == "truncate_oldest"
    assert max(r["n"] for r in store.rows("select n_fragments n from observations")) == 2
    # Another override is another run, never a resume of this one.
    code, out2, _ = cli("run", example, "--quiet", "--conditions", "vector-rag",
                        "-S", "conditions.vector-rag.options.top_k=3")
    assert code == 0 and out2.startswith("ran run ") and _run_id(out2) != _run_id(out)


def test_filters_and_limit(example, cli):
    code, out, _ = cli("run", example, "--quiet", "--conditions", "null,vector-rag", "--limit", "2")
    assert code == 0
    rows = _store(example).rows("select condition, count(distinct probe_id) p, count(*) n from observations "
                                "group by condition order by condition")
    assert [(r["condition"], r["p"]) for r in rows] == [("null", 2), ("vector-rag", 2)]
    manifest = _store(example).run(_run_id(out))["manifest"]
    assert manifest["limit"] == 2 and [c["name"] for c in manifest["campaign"]["conditions"]] == ["null", "vector-rag"]
    code, _, err = cli("run", example, "--trajectories", "nobody")
    assert code == 2 and "--trajectories: no trajectory named 'nobody'" in err


def test_a_finished_campaign_says_so_and_fresh_redoes_it(example, cli):
    code, first, _ = cli("run", example, "--quiet", "--limit", "1")
    assert code == 0
    code, again, _ = cli("run", example, "--quiet", "--limit", "1")
    assert code == 0
    assert again.startswith(f"run {_run_id(first)} already finished: 3 unit(s) stored, nothing to replay "
                            "(pass --fresh to run again)")
    assert len(_store(example).runs()) == 1
    code, fresh, _ = cli("run", example, "--quiet", "--limit", "1", "--fresh")
    assert code == 0 and fresh.startswith("ran run ") and len(_store(example).runs()) == 2


def test_manifest_paths_are_relative_to_the_campaign_file(example, cli):
    code, out, _ = cli("run", example, "--quiet", "--limit", "1")
    manifest = _store(example).run(_run_id(out))["manifest"]
    assert manifest["campaign_path"] == "quickstart.toml"
    assert manifest["inputs"]["trajectory:maya-journal"]["path"] == "quickstart/trajectory.jsonl"
    assert manifest["inputs"]["schedule"]["path"] == "../schedules/session-end.toml"
    assert manifest["campaign"]["trajectories"][0]["probes"] == "quickstart/probes.jsonl"
    assert str(example.parent) not in json.dumps(manifest)


def test_progress_log_lines_when_not_a_tty_with_workers(example, cli):
    code, _, err = cli("run", example, "--workers", "2", "--progress", "log", "--limit", "1")
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("lsrep: ")]
    assert lines[0] == "lsrep: 3 unit(s) to replay"
    assert lines[-1].startswith("lsrep: units 3/3 (100%), 18 obs, elapsed ")
    assert "ETA 0s" in lines[-1]


def test_progress_bar_is_one_overall_bar(example, cli, monkeypatch):
    code, _, err = cli("run", example, "--workers", "2", "--progress", "bar", "--limit", "1")
    assert code == 0
    assert "3/3" in err and "18 obs" in err
    assert "maya-journal" not in err  # no per-unit bars fighting over the line


def _walk(parser: argparse.ArgumentParser, path: str = "lsrep"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_argument_and_positional_has_help():
    missing = [f"{path} {action.dest}" for path, action in _walk(build_parser()) if not action.help]
    assert missing == []


def test_systems_list_shows_option_types_defaults_and_docs(cli):
    code, out, _ = cli("systems", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    top_k = next(o for o in rows["vector-rag"]["options"] if o["name"] == "top_k")
    assert top_k == {"name": "top_k", "type": "int", "default": 30, "required": False,
                     "doc": "Turns retrieved per query (the paper's 30)."}
    code, out, _ = cli("systems", "list")
    assert "top_k (int, default 30)  Turns retrieved per query (the paper's 30)." in out


def test_module_class_resolves_from_the_current_directory(example, tmp_path):
    work = tmp_path / "mine"
    work.mkdir()
    (work / "my_memory.py").write_text(
        "from lsrep.adapters.full_context import FullContextAdapter\n\n\n"
        "class MyAdapter(FullContextAdapter):\n    pass\n")
    text = example.read_text().replace('system = "null"', 'system = "my_memory:MyAdapter"')
    example.write_text(text)
    env_py = [sys.executable, "-m", "lsrep.cli"]
    for args in (["validate", str(example)], ["run", str(example), "--quiet", "--limit", "1"]):
        res = subprocess.run(env_py + args, cwd=work, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    res = subprocess.run(env_py + ["run", str(example), "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 2
    assert (f"no module 'my_memory' importable from the current directory ({tmp_path}) or sys.path; run from the "
            "folder that holds it, add that folder to PYTHONPATH, or pip install its package") in res.stderr


def test_verbose_flags_set_the_lsrep_log_level(cli):
    import logging

    cli("-vv", "systems", "list", "--json")
    assert logging.getLogger("lsrep").level == logging.DEBUG
    cli("--log-level", "error", "systems", "list", "--json")
    assert logging.getLogger("lsrep").level == logging.ERROR


def test_a_broken_command_module_is_a_loud_error(monkeypatch):
    import importlib.metadata

    from lsrep import cli

    broken = importlib.metadata.EntryPoint(name="broken", value="tests.cli.no_such_module",
                                           group="lsrep.commands")
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        return [broken] if kw.get("group") == "lsrep.commands" else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    with pytest.raises(SystemExit) as exc:
        cli.build_parser()
    assert str(exc.value).startswith("lsrep: error: command module 'broken' (tests.cli.no_such_module) failed "
                                     "to import: ModuleNotFoundError")


def test_outer_layer_commands_come_from_entry_points(cli):
    # `report`, `convert` and `generate` live in lsrep.reports / lsrep.probes and register themselves.
    import importlib.metadata

    values = {ep.value for ep in importlib.metadata.entry_points(group="lsrep.commands")}
    assert {"lsrep.reports.cli", "lsrep.probes.cli"} <= values
    for name in ("report", "convert", "generate"):
        with pytest.raises(SystemExit) as exc:
            cli(name, "--help")
        assert exc.value.code == 0


def test_report_filters_leave_out_other_conditions_and_say_so(example, cli, tmp_path):
    code, out, _ = cli("run", example, "--quiet", "--limit", "2")
    store = example.parent.parent / "runs" / "lsrep.sqlite"
    def rows():
        return RunStore(store).rows("select condition, count(*) n from observations group by condition")

    before = rows()
    code, _, err = cli("report", "latest", "--store", store, "-o", tmp_path / "part.md", "--format", "md",
                       "--conditions", "null,vector-rag")
    assert code == 0, err
    text = (tmp_path / "part.md").read_text()
    assert "**Partial report** — Only conditions null,vector-rag of this run" in text
    assert "full-context" not in text and "vector-rag" in text
    code, _, _ = cli("report", "latest", "--store", store, "-o", tmp_path / "all.md", "--format", "md")
    assert "full-context" in (tmp_path / "all.md").read_text()
    assert rows() == before and len(before) == 3  # the store itself is never changed
    code, _, err = cli("report", "latest", "--store", store, "-o", tmp_path / "x.md", "--trajectories", "nobody")
    assert code == 2 and "--trajectories: run " in err and "has no trajectory 'nobody'" in err


def test_report_output_without_extension_gets_the_formats(example, cli, tmp_path):
    cli("run", example, "--quiet", "--limit", "1")
    store = example.parent.parent / "runs" / "lsrep.sqlite"
    code, out, _ = cli("report", "latest", "--store", store, "-o", tmp_path / "r2", "--format", "md")
    assert code == 0 and (tmp_path / "r2.md").stat().st_size > 0 and not (tmp_path / "r2").exists()
    assert out.strip() == f"md:   {tmp_path / 'r2.md'}"


def test_report_limit_keeps_the_first_probes_asked(example, cli, tmp_path):
    code, out, _ = cli("run", example, "--quiet", "--conditions", "full-context")
    store = example.parent.parent / "runs" / "lsrep.sqlite"
    code, _, err = cli("report", "latest", "--store", store, "-o", tmp_path / "r.md", "--format", "md",
                       "--limit", "2")
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    # The headline row: two probes (clusters), asked at each of the six checkpoints.
    assert "| full-context | 12 | 2 |" in text
    assert "the first 2 probe(s) of each trajectory" in text
