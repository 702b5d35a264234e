"""Crash trials for the run store and the process pool (issue 21's "done when" figures).

    python benchmarks/reliability.py [--trials 50] [--rounds 20] [--only creation,migration,...]

Each trial kills a real `lsrep` process with SIGKILL at a random moment and then checks the
store with a fresh process:

- creation:   kill while a new store is created -> the store opens, is current, integrity ok
- migration:  kill while an old (m001-m005) store with a finished run is upgraded -> current,
              the run and its rows intact
- run:        kill `lsrep run`, resume -> exactly one run, finished, export equal to an
              uninterrupted run's (no lost, no duplicated rows)
- resume:     kill `lsrep run`, kill the resume too, resume again -> as `run`
- concurrent: 4 `lsrep run` at once on a new store -> all exit 0, one run, complete
- worker:     kill one pool worker mid-run -> the driver exits 0 in time, every unit stored,
              no process left behind
- driver:     kill the driver of a pooled run -> every worker gone within 5 s
- interrupt:  Ctrl-C (SIGINT to the process group) of a pooled run -> exit 130, one line, no
              process left, and the same command resumes to the uninterrupted result

Prints one line per scenario with its failure counts; exits 1 if any trial failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
RUN_ID = re.compile(r"\d{8}T\d{12}-[0-9a-f]{6}")


def workspace(root: Path, repetitions: int = 4) -> Path:
    """A copy of the quickstart campaign with more units."""
    shutil.copytree(REPO / "campaigns" / "quickstart", root / "campaigns" / "quickstart")
    shutil.copytree(REPO / "schedules", root / "schedules")
    text = (REPO / "campaigns" / "quickstart.toml").read_text()
    campaign = root / "campaigns" / "quickstart.toml"
    campaign.write_text(text.replace("repetitions = 1", f"repetitions = {repetitions}"))
    return campaign


def lsrep(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "lsrep.cli", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([PY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)


def ready_to_exit(code: str, arg: str) -> float:
    """Seconds from 'go' to exit of an uninterrupted `code` (so kills spread over its whole window)."""
    proc = start("-c", code, arg)
    proc.stdout.readline()
    t0 = time.monotonic()
    proc.communicate()
    return time.monotonic() - t0


def kill_after_ready(code: str, arg: str, max_delay: float) -> None:
    """Run `code` (which prints 'go' when its imports are done), SIGKILL it a random moment after."""
    proc = start("-c", code, arg)
    proc.stdout.readline()
    time.sleep(random.uniform(0, max_delay))
    proc.kill()
    proc.communicate()


def store_state(path: Path) -> dict:
    """What a fresh process sees: opens (migrating), integrity, runs, row counts, export."""
    res = subprocess.run([PY, "-c", CHECK, str(path)], capture_output=True, text=True, timeout=120, cwd=REPO)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout)


CHECK = r"""
import json, sys
from lsrep.store import RunStore, MIGRATIONS
from lsrep.exporting import export_rows
s = RunStore(sys.argv[1])
out = {
    "integrity": s.rows("pragma integrity_check")[0]["integrity_check"],
    "migrations": [r["name"] for r in s.rows("select name from _migrations order by name")],
    "current": [n for n, _ in MIGRATIONS],
    "runs": s.rows("select run_id, status from runs"),
    "counts": {t: s.rows(f"select count(*) n from [{t}]")[0]["n"] for t in
               ("units", "turns", "observations", "fragments", "judgements", "events", "checkpoints")},
}
runs = [r for r in out["runs"] if r["status"] == "finished"]
if len(runs) == 1:
    rows = export_rows(s, runs[0]["run_id"])
    out["export"] = json.dumps(rows, sort_keys=True, default=str).replace(runs[0]["run_id"], "RUN")
print(json.dumps(out))
"""

CREATE = "import sys; from lsrep.store import RunStore; print('go', flush=True); RunStore(sys.argv[1])"


def sound(state: dict) -> bool:
    return "error" not in state and state["integrity"] == "ok" and state["migrations"] == sorted(state["current"])


def partial(path: Path) -> bool:
    """Whether a kill left a store file that is not fully created or migrated (the kill hit the window)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        done = conn.execute("select count(*) from _migrations").fetchone()[0]
    except sqlite3.DatabaseError:
        return True
    return done < 6


def trial_creation(root: Path, trials: int) -> dict:
    bricked = hits = 0
    window = 1.2 * ready_to_exit(CREATE, str(root / "create-timing.sqlite"))
    for i in range(trials):
        path = root / f"create-{i}.sqlite"
        kill_after_ready(CREATE, str(path), window)
        hits += partial(path)
        if not sound(store_state(path)):
            bricked += 1
    return {"bricked": bricked, "info_killed_mid_creation": hits}


OLD_STORE = r"""
import sys
import lsrep.store as st
del st.MIGRATIONS[5:]
s = st.RunStore(sys.argv[1])
with s.db.conn:
    s.db.conn.execute("insert into runs (run_id, campaign, status, manifest) values ('r1', 'c', 'finished', '{}')")
    s.db.conn.execute("insert into units (run_id, unit_id, status) values ('r1', 'u1', 'finished')")
    for k in range(2000):
        s.db.conn.execute("insert into fragments (obs_id, rank, text) values (?, 0, ?)", [f"o{k}", "x" * 200])
"""

MIGRATE = "import sys; from lsrep.store import RunStore; print('go', flush=True); RunStore(sys.argv[1])"


def trial_migration(root: Path, trials: int) -> dict:
    template = root / "old.sqlite"
    subprocess.run([PY, "-c", OLD_STORE, str(template)], check=True, cwd=REPO)
    bricked = lost = hits = 0
    shutil.copy(template, root / "migrate-timing.sqlite")
    window = 1.2 * ready_to_exit(MIGRATE, str(root / "migrate-timing.sqlite"))
    for i in range(trials):
        path = root / f"migrate-{i}.sqlite"
        shutil.copy(template, path)
        kill_after_ready(MIGRATE, str(path), window)
        hits += partial(path)
        state = store_state(path)
        if not sound(state):
            bricked += 1
        elif state["runs"] != [{"run_id": "r1", "status": "finished"}] or state["counts"]["fragments"] != 2000:
            lost += 1
    return {"bricked": bricked, "lost_or_duplicated": lost, "info_killed_before_migrated": hits}


def reference(root: Path, campaign: Path) -> dict:
    path = root / "reference.sqlite"
    t0 = time.monotonic()
    proc = start("-m", "lsrep.cli", "run", str(campaign), "--store", str(path), "--quiet")
    t_row = None
    while proc.poll() is None:
        if t_row is None and running(path):
            t_row = time.monotonic()
        time.sleep(0.01)
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    end = time.monotonic()
    return store_state(path) | {"seconds": end - t0, "replay_seconds": end - (t_row or t0)}


def running(store: Path) -> bool:
    """Whether the store holds a run in status 'running' (read-only peek)."""
    if not store.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("select count(*) from runs where status = 'running'").fetchone()[0] > 0
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def run_and_kill(campaign: Path, store: Path, window: tuple[float, float, float], *extra: str) -> None:
    """Kill `lsrep run`: four times in five once its run row exists (mid-replay), else at any moment."""
    proc = start("-m", "lsrep.cli", "run", str(campaign), "--store", str(store), "--quiet", *extra)
    if random.random() < 0.8:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not running(store) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(random.uniform(0, window[2]))
    else:
        time.sleep(random.uniform(window[0], window[1]))
    proc.kill()
    proc.communicate()


def compare(state: dict, ref: dict) -> tuple[int, int, int]:
    """(bricked, lost, duplicated) for one finished trial store."""
    if not sound(state):
        return 1, 0, 0
    finished = [r for r in state["runs"] if r["status"] == "finished"]
    if len(state["runs"]) > 1 or state["counts"]["observations"] > ref["counts"]["observations"]:
        return 0, 0, 1
    if len(finished) != 1 or state["counts"] != ref["counts"] or state.get("export") != ref["export"]:
        return 0, 1, 0
    return 0, 0, 0


def finish(campaign: Path, store: Path) -> bool:
    """Resume unless the killed process had already finished; True when the command succeeded."""
    if store.exists():
        state = store_state(store)
        if "runs" in state and any(r["status"] == "finished" for r in state["runs"]):
            return True
    return lsrep("run", str(campaign), "--store", str(store), "--quiet").returncode == 0


def trial_runs(root: Path, campaign: Path, ref: dict, trials: int, kills: int) -> dict:
    totals = [0, 0, 0]
    failed_commands = hits = 0
    for i in range(trials):
        store = root / f"run{kills}-{i}.sqlite"
        for _ in range(kills):
            if store.exists() and any(r["status"] == "finished" for r in store_state(store).get("runs", [])):
                break
            run_and_kill(campaign, store, (0.3 * ref["seconds"], 1.1 * ref["seconds"], 1.1 * ref["replay_seconds"]))
            hits += running(store)
        failed_commands += not finish(campaign, store)
        for k, v in enumerate(compare(store_state(store), ref)):
            totals[k] += v
    return {"bricked": totals[0], "lost": totals[1], "duplicated": totals[2], "failed_commands": failed_commands,
            "info_kills_mid_run": hits}


def trial_concurrent(root: Path, campaign: Path, ref: dict, rounds: int) -> dict:
    failures = tracebacks = bad = 0
    for i in range(rounds):
        store = root / f"conc-{i}.sqlite"
        procs = [start("-m", "lsrep.cli", "run", str(campaign), "--store", str(store), "--quiet") for _ in range(4)]
        for p in procs:
            _, err = p.communicate(timeout=600)
            failures += p.returncode != 0
            tracebacks += "Traceback" in err
        b, lost, dup = compare(store_state(store), ref)
        bad += bool(b or lost or dup)
    return {"failed_processes": failures, "tracebacks": tracebacks, "bad_stores": bad}


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def is_worker(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmd


def trial_workers(root: Path, campaign: Path, ref: dict, trials: int, kill_driver: bool) -> dict:
    crashes = hangs = orphans = incomplete = hits = 0
    for i in range(trials):
        store = root / f"pool{int(kill_driver)}-{i}.sqlite"
        proc = start("-m", "lsrep.cli", "run", str(campaign), "--store", str(store), "--quiet",
                     "--executor", "process", "--workers", "2")
        seen: set[int] = set()
        deadline = None
        victim = None
        while proc.poll() is None and (deadline is None or time.monotonic() < deadline):
            seen.update(children(proc.pid))
            if deadline is None and any(is_worker(p) for p in seen):
                deadline = time.monotonic() + random.uniform(0.0, 1.5)
            time.sleep(0.02)
        workers = [p for p in seen if is_worker(p) and alive(p)]
        hits += bool(workers) and proc.poll() is None
        if kill_driver:
            proc.kill()
        elif workers:
            victim = random.choice(workers)
            os.kill(victim, signal.SIGKILL)
        try:
            # wait() rather than communicate(): orphaned workers would hold the pipes open.
            proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            hangs += 1
            proc.kill()
            proc.wait()
        orphans += reap(seen)
        _, err = proc.communicate()
        if not kill_driver:
            crashes += proc.returncode != 0 or "Traceback" in err
            b, lost, dup = compare(store_state(store), ref)
            incomplete += bool(b or lost or dup)
    return {"driver_crashes": crashes, "hangs": hangs, "orphans": orphans, "bad_stores": incomplete,
            "info_kills_with_live_workers": hits}


def reap(pids: set[int]) -> int:
    """Give the run's processes 5 s to exit; kill and count those still alive (orphans)."""
    end = time.monotonic() + 5
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.1)
    left = [p for p in pids if alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    return len(left)


def trial_interrupt(root: Path, campaign: Path, ref: dict, trials: int) -> dict:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) of a pooled run."""
    not_130 = hangs = orphans = not_one_line = not_resumed = 0
    for i in range(trials):
        store = root / f"int-{i}.sqlite"
        proc = subprocess.Popen([PY, "-m", "lsrep.cli", "run", str(campaign), "--store", str(store), "--quiet",
                                 "--executor", "process", "--workers", "2"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO, start_new_session=True)
        seen: set[int] = set()
        t0 = time.monotonic()
        while proc.poll() is None and time.monotonic() - t0 < 120:
            seen.update(children(proc.pid))
            if running(store) and any(is_worker(p) for p in seen):
                break
            time.sleep(0.02)
        time.sleep(random.uniform(0, 1.5))
        seen.update(children(proc.pid))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            hangs += 1
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        orphans += reap(seen)
        _, err = proc.communicate()
        if proc.returncode == 0:
            continue  # finished before the interrupt landed
        not_130 += proc.returncode != 130
        not_one_line += len(err.strip().splitlines()) != 1 or "Traceback" in err or "interrupted" not in err
        ok = lsrep("run", str(campaign), "--store", str(store), "--quiet").returncode == 0
        not_resumed += not ok or any(compare(store_state(store), ref))
    return {"exit_not_130": not_130, "hangs": hangs, "orphans": orphans, "not_one_line": not_one_line,
            "not_resumed": not_resumed}


SCENARIOS = ("creation", "migration", "run", "resume", "concurrent", "worker", "driver", "interrupt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    only = args.only.split(",")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        campaign = workspace(root)
        ref = reference(root, campaign) if set(only) - {"creation", "migration"} else None
        for name in only:
            t0 = time.monotonic()
            match name:
                case "creation":
                    result = trial_creation(root, args.trials)
                case "migration":
                    result = trial_migration(root, args.trials)
                case "run":
                    result = trial_runs(root, campaign, ref, args.trials, kills=1)
                case "resume":
                    result = trial_runs(root, campaign, ref, args.trials, kills=2)
                case "concurrent":
                    result = trial_concurrent(root, campaign, ref, args.rounds)
                case "worker":
                    result = trial_workers(root, campaign, ref, args.trials, kill_driver=False)
                case "driver":
                    result = trial_workers(root, campaign, ref, args.trials, kill_driver=True)
                case "interrupt":
                    result = trial_interrupt(root, campaign, ref, args.trials)
                case _:
                    parser.error(f"unknown scenario {name!r}")
            n = args.rounds if name == "concurrent" else args.trials
            failed |= any(v for k, v in result.items() if not k.startswith("info_"))
            print(f"{name:<11} {n:>3} trial(s) {time.monotonic() - t0:6.0f} s  "
                  + "  ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
