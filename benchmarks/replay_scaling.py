"""Replay cost as history grows, for every built-in system with its maintenance on.

    python benchmarks/replay_scaling.py [--turns 1000 10000] [--systems ...] [--repeats 3]
                                        [--schedule schedules/session-end.toml] [--vocabulary zipf|dense]

Builds a synthetic conversation (sessions of 20 turns a day apart, a fact that changes every
~1,000 turns, ten probes), replays it through the real engine and store under a lifecycle
schedule (default: checkpoints and consolidation at every session end, nightly jobs at day
boundaries), and reports CPU seconds (this process and its children: worker and adapter-host
processes count) and wall seconds, min/median/max over repetitions, the large/small ratio
(linear = the size ratio; the probe count grows with the number of sessions, so a system whose
per-query cost grows with history is superlinear), and the machine's load before each size.

`--vocabulary zipf` (default) draws words from a 4,000-word Zipf vocabulary, so a query's words
match a small share of turns as in real dialogue; `dense` repeats a 20-word vocabulary, so
every turn matches every query: the worst case for lexical search, shown separately.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

SYSTEMS = ["null", "full-context", "vector-rag", "thalia", "ice", "exia-seed"]
DENSE = ("garden river station coffee budget meeting report ticket window orange violin harbour "
         "project museum bicycle lantern market kitchen office library").split()
CITIES = ["Lisbon", "Porto", "Braga", "Faro", "Coimbra"]


def vocabulary(kind: str, n_turns: int, seed: int = 7) -> list[list[str]]:
    """The words of each turn (18 a turn)."""
    if kind == "dense":
        return [[DENSE[(i * 7 + k) % len(DENSE)] for k in range(18)] for i in range(n_turns)]
    rng = np.random.default_rng(seed)
    syllables = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "dor", "pi", "ne", "ol", "ruk"]
    words = sorted({"".join(rng.choice(syllables, size=int(rng.integers(2, 4))))
                    for _ in range(6000)})[:4000]
    ranks = np.arange(1, len(words) + 1)
    p = (1.0 / ranks) / (1.0 / ranks).sum()
    draws = rng.choice(len(words), size=(n_turns, 18), p=p)
    return [[words[j] for j in row] for row in draws]


def write_inputs(folder: Path, n_turns: int, schedule: Path, kind: str) -> Path:
    t0 = datetime(2025, 1, 1, 9, tzinfo=UTC)
    turns, versions = [], []
    for i, words in enumerate(vocabulary(kind, n_turns)):
        session = i // 20
        text = " ".join(words)
        if i % 997 == 5:
            text = f"I moved to {CITIES[(i // 997) % len(CITIES)]} this week. " + text
        turns.append({"turn_id": f"t{i:06d}", "session_id": f"s{session:05d}",
                      "timestamp": (t0 + timedelta(days=session, minutes=i % 20)).isoformat(),
                      # The user says every move: systems that extract only the user's facts (ICE)
                      # must meet the first one at both sizes, or the small run never exercises
                      # what the large one does (turn 5 was an assistant turn: ICE's graph leg
                      # first ran at turn 1,002, after the 1k run had ended).
                      "role": "user" if i % 2 == 0 or i % 997 == 5 else "assistant", "content": text})
    moves = [i for i in range(n_turns) if i % 997 == 5]
    for k, i in enumerate(moves):
        v = {"answer": CITIES[(i // 997) % len(CITIES)], "valid_from": f"t{i:06d}", "evidence": [f"t{i:06d}"]}
        if k + 1 < len(moves):
            v["valid_until"] = f"t{moves[k + 1]:06d}"
        versions.append(v)
    probes = [{"probe_id": "city", "question": "Which city did I move to?", "kind": "current",
               "references": versions}]
    sample = turns[len(turns) // 2]["content"].split()
    for j in range(9):
        probes.append({"probe_id": f"topic-{j}", "kind": "abstention",
                       "question": f"What did I say about the {sample[j]} and the {sample[j + 5]}?"})
    (folder / "trajectory.jsonl").write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    (folder / "probes.jsonl").write_text("\n".join(json.dumps(p) for p in probes) + "\n")
    campaign = folder / "campaign.toml"
    campaign.write_text(f'''name = "scaling-{n_turns}"
store = "store.sqlite"
schedule = "{schedule}"
[[trajectories]]
id = "synthetic"
trajectory = "trajectory.jsonl"
probes = "probes.jsonl"
[[conditions]]
name = "{{system}}"
system = "{{system}}"
''')
    return campaign


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


TICK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float, bool]]:
    """pid -> (parent pid, CPU s so far, whether it is a fork server) for every process."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        zygote = b"--zygote" in argv and not argv[0].endswith(b"unshare")
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, zygote)
    return table


class HostCPU:
    """Adapter hosts whose CPU does NOT reach the run's RUSAGE_CHILDREN, sampled from /proc.

    The fork server reaps its hosts (`lsrep.host.zygote`, SIGCHLD handler) and the run waits for
    the fork server at exit, so a host that ends under its fork server is already counted in the
    run's children's CPU: adding its /proc samples too counted it twice (a 1k ICE replay: children
    11.9 s, of which the hosts' 7.2 s, reported as 19.1 s). Only a host that outlives the run or was
    re-parented away from its fork server (the fork server died first) escapes that accounting; for
    those the last /proc sample is added (an undercount of at most one `period`). Before the fork
    server reaped its hosts (SIG_IGN, until 2026-12-02 02:35) every host escaped it."""

    def __init__(self, root: int, period: float = 0.1) -> None:
        self.root, self.period = root, period
        self.last: dict[int, float] = {}
        self.orphaned: set[int] = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.done.wait(self.period):
            table = _proc_table()
            for pid, (ppid, cpu, _z) in table.items():
                parent = table.get(ppid)
                if parent and parent[2] and self._under_root(ppid, table):
                    self.last[pid] = cpu
                elif pid in self.last:
                    self.last[pid] = cpu
                    self.orphaned.add(pid)  # no longer under its fork server: nobody in the run reaps it

    def _under_root(self, pid: int, table) -> bool:
        while pid > 1:
            if pid == self.root:
                return True
            pid = table.get(pid, (0,))[0]
        return False

    def stop(self) -> float:
        """CPU s of the hosts not counted through the run's waited-for children."""
        self.done.set()
        self.thread.join()
        alive = set(_proc_table())
        return sum(cpu for pid, cpu in self.last.items() if pid in self.orphaned or pid in alive)

    @property
    def sampled(self) -> float:
        return sum(self.last.values())


def timed_run(campaign: Path, system: str, adapter_host: str = "process") -> tuple[float, float]:
    """(CPU s, wall s) of one run in a fresh Python process, start-up included.

    CPU is the run's process and its waited-for children (the fork server, and through its reaping
    the adapter hosts, among them) plus any host that escaped that accounting (`HostCPU`); the
    benchmark's own CPU is not counted."""
    path = campaign.with_name(f"campaign-{system}.toml")
    path.write_text(campaign.read_text().replace("{system}", system))
    code = (f"from lsrep.runner import run_campaign; "
            f"run_campaign({str(path)!r}, fresh=True, adapter_host={adapter_host!r})")
    cpu0, wall0 = children_cpu(), time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    hosts = HostCPU(proc.pid)
    if proc.wait():
        raise subprocess.CalledProcessError(proc.returncode, proc.args)
    escaped = hosts.stop()
    children = children_cpu() - cpu0
    if escaped:
        print(f"   ({escaped:.2f} CPU s of hosts that escaped the run's accounting added)", flush=True)
    if adapter_host == "process" and hosts.sampled > children:
        raise SystemExit(f"hosts sampled at {hosts.sampled:.2f} CPU s but the run's children counted "
                         f"{children:.2f} s in all: host CPU is not reaching RUSAGE_CHILDREN")
    return children + escaped, time.perf_counter() - wall0


def spread(values: list[float]) -> str:
    return f"{min(values):7.2f} / {statistics.median(values):7.2f} / {max(values):7.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--systems", nargs="+", default=SYSTEMS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--schedule", default=str(Path(__file__).resolve().parents[1] / "schedules" / "session-end.toml"))
    parser.add_argument("--vocabulary", choices=["zipf", "dense"], default="zipf")
    parser.add_argument("--adapter-host", choices=["process", "in-process"], default="process",
                        help="where adapters run (default: their host processes, whose CPU is counted)")
    args = parser.parse_args()
    schedule = Path(args.schedule).resolve()
    print(f"schedule {schedule.name}, vocabulary {args.vocabulary}, adapters {args.adapter_host}, "
          f"{args.repeats} repetitions, "
          f"{os.cpu_count()} cores; figures are min / median / max")
    cpu: dict[str, dict[int, list[float]]] = {s: {} for s in args.systems}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.turns:
            folder = Path(tmp) / str(n)
            folder.mkdir()
            campaign = write_inputs(folder, n, schedule, args.vocabulary)
            print(f"-- {n} turns ({n // 20} checkpoints x 10 probes); load average before: "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
            for system in args.systems:
                runs = []
                for rep in range(args.repeats):
                    runs.append(timed_run(campaign, system, args.adapter_host))
                    print(f"  {system} {n} turns, repetition {rep + 1}: cpu s {runs[-1][0]:.2f}, wall s "
                          f"{runs[-1][1]:.2f}, load now {os.getloadavg()[0]:.2f}", flush=True)
                cpu[system][n] = [c for c, _w in runs]
                print(f"{system:<13} cpu s {spread([c for c, _w in runs])}   wall s {spread([w for _c, w in runs])}")
    lo, hi = min(args.turns), max(args.turns)
    if lo != hi:
        print(f"-- CPU ratio {hi}/{lo} turns on medians (linear = {hi / lo:.0f}, goal <= {1.1 * hi / lo:.0f})")
        for system in args.systems:
            ratio = statistics.median(cpu[system][hi]) / statistics.median(cpu[system][lo])
            print(f"{system:<13} {ratio:6.2f}")
        if "null" in cpu and "vector-rag" in cpu:
            for n in args.turns:
                share = statistics.median(cpu["null"][n]) / statistics.median(cpu["vector-rag"][n])
                print(f"harness share at {n} turns (null / vector-rag CPU): {share:.2f}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
