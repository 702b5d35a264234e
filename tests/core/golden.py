"""The golden campaigns: what a small campaign records, reduced to digests, to guard every optimisation.

Three small offline campaigns on the bundled journal (`campaigns/quickstart/`):

- `persistent`: every built-in system under `schedules/session-end.toml`, extractive answerer;
- `isolated`: the same under `schedules/session-end-isolated.toml` (snapshots, restores, state digests);
- `llm`: vector-RAG and ICE answered by a scripted model over real HTTP (the in-process server,
  concurrency 4) and labelled by a model judge, so the LLM answering path is covered too.

Every row a unit stores (units, checkpoints, observations, fragments with their text, events,
maintenance, failures, judgements, llm_calls) is kept but for timings and per-run identities
(run id, endpoint URL, call id), in the order the store holds them within the unit, and hashed
per campaign, condition and table. `tests/core/golden/observations.json` holds today's digests;
`tests/core/test_golden.py` compares. Update them only deliberately, after checking that a change
of results is intended, with

    .venv/bin/python -m tests.core.golden --update

(`--dump DIR` writes the normalised rows as JSON lines, to diff two trees' outputs.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden" / "observations.json"

TIMING_COLUMNS = frozenset({"elapsed_s", "elapsed_ms", "query_ms", "answer_ms", "latency_ms"})
"""Wall-clock figures: they differ from run to run and are not results."""
IDENTITY_COLUMNS = frozenset({"call_id", "request_sha256", "text"})
"""A fresh uuid per model call; a request digest covering the endpoint URL (its port changes from run
to run: the request bodies the server received are hashed instead); `fragments.text` (NULL since the
text is stored once) is replaced by the stored text."""

UNIT_TABLES = ("units", "checkpoints", "events", "maintenance", "failures")
OBS_TABLES = ("observations", "fragments", "judgements", "llm_calls")

SYSTEM_CONDITIONS = '''
[[conditions]]
name = "thalia"
system = "thalia"

[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "exia-seed"
system = "exia-seed"
'''


def scripted_model(request) -> str:
    """A deterministic 'model' (a function of the prompt alone) playing answerer and judge."""
    system = request.messages[0]["content"] if request.messages and request.messages[0]["role"] == "system" else ""
    user = request.last_user
    digest = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if system.startswith("You answer questions"):
        first = re.search(r"^\[1\] (.*)$", user, re.M)
        return first.group(1)[:160] if first else "I don't know"
    if system.startswith("You grade answers"):
        label = ("correct", "wrong", "stale", "abstained")[digest % 4]
        return json.dumps({"label": label, "rubric": 1 + digest % 5, "rationale": "scripted"})
    return "Reply with the JSON object."


def _write_campaigns(root: Path, base_url: str) -> dict[str, Path]:
    shutil.copytree(REPO / "campaigns" / "quickstart", root / "campaigns" / "quickstart")
    shutil.copytree(REPO / "schedules", root / "schedules")
    base = (REPO / "campaigns" / "quickstart.toml").read_text()
    base = base.replace('store = "../runs/lsrep.sqlite"', 'store = "../runs/golden.sqlite"')
    every = base.replace("[answerer]", SYSTEM_CONDITIONS + "\n[answerer]")
    isolated = every.replace("session-end.toml", "session-end-isolated.toml")
    endpoint = (f'base_url = "{base_url}"\nmodel = "scripted"\napi_key_env = "LSREP_GOLDEN_KEY"\n'
                f"max_retries = 0\ntimeout_s = 10.0\nconcurrency = 4\ncontext_window = 200000\n")
    llm = base.replace('''[[conditions]]
name = "null"
system = "null"
''', "").replace('''[[conditions]]
name = "full-context"
system = "full-context"
options = { context_limit = 16000 }
''', "").replace('''[answerer]
kind = "extractive"''', '''[[conditions]]
name = "ice"
system = "ice"

[answerer]
kind = "llm"''').replace('overflow = "fail"', f'''overflow = "fail"
[answerer.endpoint]
{endpoint}
[[judges]]
name = "evolving"
kind = "evolving"
[judges.endpoint]
{endpoint}''', 1)
    out = {}
    for name, text in (("persistent", every), ("isolated", isolated), ("llm", llm)):
        path = root / "campaigns" / f"golden-{name}.toml"
        path.write_text(text.replace('name = "quickstart"', f'name = "golden-{name}"', 1))
        out[name] = path
    return out


def _normalise(row: dict[str, Any], run_id: str, base_url: str) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if key in TIMING_COLUMNS or key in IDENTITY_COLUMNS:
            continue
        if isinstance(value, str):
            value = value.replace(run_id, "RUN").replace(base_url, "URL")
        out[key] = value
    return out


def campaign_rows(store, run_id: str, base_url: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """{condition: {table: normalised rows in stored order within the unit}} for one run."""
    conditions = [r["condition"] for r in store.rows(
        "select condition from units where run_id = ? order by unit_id", [run_id])]
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for cond in conditions:
        tables: dict[str, list[dict[str, Any]]] = {}
        units = "select unit_id from units where run_id = ? and condition = ?"
        for table in UNIT_TABLES:
            tables[table] = store.rows(
                f"select * from {table} where run_id = ? and unit_id in ({units}) order by unit_id, rowid",
                [run_id, run_id, cond])
        obs = "select obs_id from observations where run_id = ? and condition = ?"
        for table in OBS_TABLES:
            extra = ", t.text as stored_text" if table == "fragments" else ""
            join = " left join fragment_texts t on t.sha256 = x.text_sha256" if table == "fragments" else ""
            tables[table] = store.rows(
                f"select x.*{extra} from {table} x{join} where x.obs_id in ({obs}) order by x.obs_id, x.rowid",
                [run_id, cond])
        if any(r["obs_id"] is None for r in store.rows("select obs_id from llm_calls where run_id = ?", [run_id])):
            raise AssertionError("llm_calls rows without an observation: extend the golden to key them")
        out[cond] = {t: [_normalise(r, run_id, base_url) for r in rows] for t, rows in tables.items()}
    return out


def _digest(rows: list[dict[str, Any]] | list[str]) -> str:
    blob = "\n".join((r if isinstance(r, str) else json.dumps(r, sort_keys=True, separators=(",", ":"), default=str))
                     for r in rows)
    return hashlib.sha256(blob.encode()).hexdigest()


def run_golden(dump: Path | None = None) -> dict[str, Any]:
    """Run the golden campaigns in a scratch folder; {campaign: {condition: {table: {rows, sha256}}}}."""
    import os

    from lsrep.llm.server import OpenAITestServer
    from lsrep.runner import run_campaign
    from lsrep.store import RunStore

    os.environ.setdefault("LSREP_GOLDEN_KEY", "sk-golden-dummy")
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lsrep-golden-") as tmp, \
            OpenAITestServer(reply=scripted_model) as server:
        paths = _write_campaigns(Path(tmp), server.base_url)
        for name, path in paths.items():
            out = run_campaign(path)
            store = RunStore(out.store_path)
            rows = campaign_rows(store, out.run_id, server.base_url)
            result[name] = {cond: {t: {"rows": len(rs), "sha256": _digest(rs)} for t, rs in tables.items()}
                            for cond, tables in rows.items()}
            # What reached the model, as a multiset (concurrent calls arrive in any order).
            bodies = sorted(json.dumps(r.body, sort_keys=True) for r in server.requests)
            result[name]["server"] = {"requests": {"rows": len(bodies), "sha256": _digest(bodies)}}
            server.reset_counters()
            if dump is not None:
                for cond, tables in rows.items():
                    folder = dump / name / cond
                    folder.mkdir(parents=True, exist_ok=True)
                    for table, rs in tables.items():
                        (folder / f"{table}.jsonl").write_text(
                            "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rs))
    return result


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable lines naming each campaign/condition/table whose rows differ."""
    lines = []
    for camp in sorted(set(expected) | set(actual)):
        e_c, a_c = expected.get(camp, {}), actual.get(camp, {})
        for cond in sorted(set(e_c) | set(a_c)):
            e_t, a_t = e_c.get(cond, {}), a_c.get(cond, {})
            for table in sorted(set(e_t) | set(a_t)):
                if e_t.get(table) != a_t.get(table):
                    lines.append(f"{camp}/{cond}/{table}: expected {e_t.get(table)}, got {a_t.get(table)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the golden campaigns; compare or (--update) rewrite the digests.")
    parser.add_argument("--update", action="store_true", help=f"rewrite {GOLDEN.relative_to(REPO)}")
    parser.add_argument("--dump", type=Path, help="write the normalised rows under this folder")
    args = parser.parse_args(argv)
    actual = run_golden(args.dump)
    if args.update:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}")
        return 0
    diff = differences(json.loads(GOLDEN.read_text()), actual)
    print("\n".join(diff) if diff else "golden: no differences")
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
