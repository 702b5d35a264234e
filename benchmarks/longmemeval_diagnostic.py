"""LongMemEval diagnostic at S and M scale: wall time, peak memory and store size (issue 18's figures).

    python benchmarks/longmemeval_diagnostic.py [--questions 500] [--sessions 50] [--file PATH]
        [--text generated|locomo] [--official DIR] [--repeat 1] [--m-questions 10] [--m-sessions 500]
        [--systems vector-rag]

Generates a LongMemEval-schema file at S scale (or uses --file) and runs `lsrep longmemeval
--systems vector-rag` on it with default settings (default workers, offline answerer and
judge), measuring wall time, CPU time of the whole tree (the adapter hosts included: their
fork server reaps them, and the harness waits for it), the peak RSS of the whole process tree
(driver + workers + fork server + hosts, sampled every 0.1 s; the largest single process too),
the peak PSS of the tree (shared pages counted once: the hosts are forks of one fork server, so
the RSS sum counts its pages once per host) and the store's size. With --official
DIR (a checkout of xiaowu0162/LongMemEval), it runs the official retrieval script beside it
on the same file, `src/retrieval/run_retrieval.py --retriever flat-bm25 --granularity turn`,
measured the same way, alternating with LSREP's runs so both see the same machine load. That
script imports torch, transformers, sentence-transformers, scikit-learn, nltk and openai at
module level, in its parent and again in each of the 10 workers it spawns, but uses none of
them for flat-bm25. Two ways to run it, and the output says which ran:

- as a researcher runs it: `--official-python` names an interpreter with the script's own
  packages (a venv with `pip install torch==2.13.0 transformers sentence-transformers
  scikit-learn nltk rank_bm25 openai`); its imports are part of its wall time;
- its BM25 path alone (the default, this interpreter): empty stand-ins for whichever of the
  heavy packages are not installed go on its PYTHONPATH, so only the retrieval itself is timed.
  It does need `rank_bm25`, which LSREP does not depend on: `pip install rank_bm25` first.

The generator's turns are drawn from 400 user and 400 reply sentences, so a question says each
sentence many times, and LSREP's turn index handles each distinct one once: that flatters it.
`--text locomo` keeps the file's shape (questions, sessions, turns, each turn's length in
characters, answers and evidence flags) but rewrites every turn with LoCoMo conversation turns
(`../shared/datasets/locomo`, read in place; drawn with a fixed seed, joined up to the turn's
length): real conversational English, its common words said in many turns of a question. The
answers no longer match the text, so the scores are meaningless; the timings are the point.

Either way `numpy.asfarray` (removed in numpy 2, which eval_utils.py calls) is put back. It also checks that
the official corpus ids of every question equal LSREP's. Then an M-shaped file
(--m-sessions sessions per question) checks that memory stays bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUBS = {
    "torch/__init__.py": "from . import nn, utils  # noqa\nclass Tensor:\n    pass\nclass cuda:\n    @staticmethod\n"
                         "    def device_count():\n        return 0\ndef device(*a, **k):\n    return None\n",
    "torch/nn/__init__.py": "from . import functional  # noqa\n",
    "torch/nn/functional.py": "",
    "torch/utils/__init__.py": "from . import data  # noqa\n",
    "torch/utils/data.py": "DataLoader = None\n",
    "sentence_transformers.py": "SentenceTransformer = None\nutil = None\n",
    "transformers.py": "AutoModel = None\nAutoTokenizer = None\n",
    "sklearn/__init__.py": "",
    "sklearn/preprocessing.py": "normalize = None\n",
    "nltk.py": "sent_tokenize = None\n",
    "sitecustomize.py": "import numpy\nif not hasattr(numpy, 'asfarray'):\n"
                        "    numpy.asfarray = lambda a, dtype=float: numpy.asarray(a, dtype=dtype)\n",
}
HEAVY = ("torch", "transformers", "sentence_transformers", "sklearn", "nltk")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kb(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each (sums to the tree's
    real memory, where RSS counts the fork server's pages again in every host forked from it)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> dict:
    """Wall time and peak RSS (tree total and largest process) of a command."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_tree = peak_one = peak_pss = 0
    usage = None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        tree, todo, total, pss = _children(), [proc.pid], 0, 0
        while todo:
            pid = todo.pop()
            rss = _rss_kb(pid)
            total += rss
            pss += _pss_kb(pid)
            peak_one = max(peak_one, rss)
            todo.extend(tree.get(pid, ()))
        peak_tree = max(peak_tree, total)
        peak_pss = max(peak_pss, pss)
        time.sleep(0.1)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-3000:]}")
    # CPU seconds of the whole tree, every waited-for descendant included (worker processes, the
    # adapter hosts, which the fork server reaps, and the fork server, which the harness waits for):
    # comparable under any machine load.
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall_s": wall, "cpu_s": cpu, "tree_mb": peak_tree / 1024, "tree_pss_mb": peak_pss / 1024,
            "max_proc_mb": peak_one / 1024, "load": load, "load_end": os.getloadavg()[0], "stdout": out}


def lsrep_run(data: Path, store: Path, workers: int | None = None, systems: str = "vector-rag") -> dict:
    for suffix in ("", "-wal", "-shm"):
        Path(str(store) + suffix).unlink(missing_ok=True)
    exe = Path(sys.executable).with_name("lsrep")
    r = measure([str(exe), "longmemeval", "--systems", systems, "--data", str(data), "--store", str(store),
                 "--fresh", *(["--workers", str(workers)] if workers else [])])
    # The default executor's process count, as the command prints it (one process: no such line).
    r["processes"] = next((line for line in r["stdout"].splitlines() if line.startswith("processes: ")),
                          "processes: 1")
    r["store_mb"] = sum(Path(str(store) + s).stat().st_size for s in ("", "-wal") if Path(str(store) + s).exists()) / 2**20
    return r


def installed(python: str, names: tuple[str, ...]) -> set[str]:
    """Which of these top-level packages `python` can import (asked of that interpreter)."""
    probe = "import importlib.util, sys; print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n)))"
    needed = ("rank_bm25", "numpy", "tqdm", "openai")  # imported by the BM25 path itself: no stand-ins
    try:
        done = subprocess.run([python, "-c", probe, *names, *needed], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise SystemExit(f"--official-python {python}: cannot run it ({exc.strerror or exc})") from None
    if done.returncode != 0:
        raise SystemExit(f"--official-python {python}: not a Python interpreter that runs `-c` "
                         f"(exit {done.returncode}: {done.stderr.strip()[-200:]})")
    have = set(done.stdout.split())
    missing = [n for n in needed if n not in have]
    if missing:
        raise SystemExit(f"--official-python {python}: lacks {', '.join(missing)}, which the official script "
                         f"needs whatever stands in for the rest (pip install {' '.join(missing)})")
    return have & set(names)


def _absolute(value: str) -> Path:
    """A path given on the command line, made absolute: the official script runs in its checkout."""
    return Path(value).absolute()


def _interpreter(value: str) -> str:
    """An interpreter path made absolute (not resolved: a venv's `python` is a symlink whose target
    would lose the venv's packages); a bare name is looked up on PATH."""
    if os.sep in value:
        return str(Path(value).absolute())
    return shutil.which(value) or value


def official_run(official: Path, data: Path, tmp: Path, python: str, have: set[str]) -> dict:
    """The official script under `python`, with stand-ins for the heavy packages it lacks (`have`:
    those it has, from `installed`, asked once per benchmark)."""
    stubs = tmp / "stubs"
    for rel, text in STUBS.items():
        top = rel.split("/")[0].removesuffix(".py")
        if top in have:
            continue  # the real package is installed: use it
        path = stubs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out = tmp / "official-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{stubs}{os.pathsep}{official}"}
    r = measure([python, str(official / "src" / "retrieval" / "run_retrieval.py"), "--in_file", str(data),
                 "--out_dir", str(out), "--retriever", "flat-bm25", "--granularity", "turn"], cwd=official, env=env)
    r["log"] = next(out.iterdir())
    r["stand_ins"] = sorted(set(HEAVY) - have)
    return r


def check_corpus_ids(log: Path, data: Path) -> int:
    """Every question's official corpus ids (from the official retrieval log) equal LSREP's."""
    from lsrep.probes.longmemeval import iter_json_records, iter_longmemeval

    ours = {item.question_id: sorted(item.gold.corpus_ids) for item in iter_longmemeval(data)}
    checked = 0
    for _, _, entry in iter_json_records(log):
        theirs = sorted(i["corpus_id"] for i in entry["retrieval_results"]["ranked_items"])
        if theirs != ours[entry["question_id"]]:
            raise SystemExit(f"corpus ids differ for {entry['question_id']}")
        checked += 1
    return checked


def spread(values: list[float], digits: int = 1) -> str:
    return " / ".join(f"{name} {v:.{digits}f}" for name, v in
                      (("min", min(values)), ("median", statistics.median(values)), ("max", max(values))))


LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo" / "locomo-dev7.json"


def with_locomo_text(src: Path, dest: Path, locomo: Path, seed: int = 3) -> Path:
    """`src` with every turn's content replaced by LoCoMo turns (drawn with `seed` and joined by a
    space until their lengths, each counted with one space after it, reach the original content's:
    the new content is at most one character shorter)."""
    import random

    try:
        conversations = json.loads(locomo.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--text locomo: cannot read {locomo}: {exc}") from None
    # The turns' own words (`lsrep.probes.locomo` appends image captions to a turn's content).
    pool = [turn["text"] for conv in conversations for key, session in conv["conversation"].items()
            if key.startswith("session_") and isinstance(session, list) for turn in session if turn.get("text")]
    if not pool:
        raise SystemExit(f"--text locomo: no conversation turns in {locomo}")
    rng = random.Random(seed)
    items = json.loads(src.read_text())
    for item in items:
        for session in item["haystack_sessions"]:
            for turn in session:
                parts, length = [], 0
                while length < len(turn["content"]):
                    parts.append(rng.choice(pool))
                    length += len(parts[-1]) + 1
                turn["content"] = " ".join(parts)
    dest.write_text(json.dumps(items))
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--file", type=_absolute, help="an existing LongMemEval file instead of a generated one")
    parser.add_argument("--text", choices=["generated", "locomo"], default="generated",
                        help="turn text: as the file has it, or rewritten with LoCoMo turns (see above)")
    parser.add_argument("--locomo", type=_absolute, default=LOCOMO, help="the LoCoMo file for --text locomo")
    parser.add_argument("--official", type=_absolute, help="a checkout of the official LongMemEval repository")
    parser.add_argument("--official-python", default=sys.executable, type=_interpreter,
                        help="the interpreter for the official script (default: this one); give one with its "
                             "own packages (torch, transformers, sentence-transformers, scikit-learn, nltk, "
                             "rank_bm25, openai) to time the script as a researcher runs it")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--m-questions", type=int, default=10, help="M-shaped check: questions (0: skip)")
    parser.add_argument("--m-sessions", type=int, default=500, help="M-shaped check: sessions per question")
    parser.add_argument("--tmp", type=_absolute, help="working folder (default: a temporary one)")
    parser.add_argument("--workers", type=int, help="pass --workers to lsrep (default: its default)")
    parser.add_argument("--systems", default="vector-rag",
                        help="LSREP's conditions, comma-separated (default: vector-rag; several: each question "
                             "is replayed once per system, as a matched diagnostic does, beside one official run)")
    args = parser.parse_args()
    if args.official:
        have = installed(args.official_python, HEAVY)  # a bad interpreter is said before anything runs
    from lsrep.probes.generator import generate_longmemeval_file

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp_name:
        tmp = Path(tmp_name)
        data = args.file or generate_longmemeval_file(tmp / "lme_s.json", n_questions=args.questions,
                                                      sessions_per_question=args.sessions, seed=7)
        if args.text == "locomo":
            data = with_locomo_text(data, tmp / f"{data.stem}_locomo.json", args.locomo)
        size_mb = data.stat().st_size / 2**20
        print(f"file: {data.name}, {size_mb:.0f} MiB; text: {args.text}; {os.cpu_count()} cores; systems: {args.systems}")
        mine, theirs = [], []
        for _ in range(args.repeat):
            mine.append(lsrep_run(data, tmp / "store.sqlite", args.workers, args.systems))
            if args.official:
                theirs.append(official_run(args.official, data, tmp, args.official_python, have))
        for r in mine:
            print(f"lsrep      wall {r['wall_s']:7.1f} s  CPU {r['cpu_s']:7.1f} s  tree RSS {r['tree_mb']:6.0f} MB  "
                  f"(PSS {r['tree_pss_mb']:4.0f} MB)  largest process "
                  f"{r['max_proc_mb']:6.0f} MB  store {r['store_mb']:6.1f} MiB ({r['store_mb'] / size_mb:.2f}x the "
                  f"input)  load at start/end {r['load']:.1f}/{r['load_end']:.1f}  {r['processes']}")
        for r in theirs:
            print(f"official   wall {r['wall_s']:7.1f} s  CPU {r['cpu_s']:7.1f} s  tree RSS {r['tree_mb']:6.0f} MB  "
                  f"(PSS {r['tree_pss_mb']:4.0f} MB)  largest process {r['max_proc_mb']:6.0f} MB  "
                  f"load at start/end {r['load']:.1f}/{r['load_end']:.1f}  stand-ins: "
                  f"{', '.join(r['stand_ins']) or 'none (its own imports)'}")
        print(f"lsrep wall: {spread([r['wall_s'] for r in mine])} s")
        if theirs:
            print(f"official wall: {spread([r['wall_s'] for r in theirs])} s")
            ratios = [m["wall_s"] / t["wall_s"] for m, t in zip(mine, theirs, strict=True)]
            print(f"wall ratio lsrep/official (paired runs): {spread(ratios, 2)}")
            cpu = [m["cpu_s"] / t["cpu_s"] for m, t in zip(mine, theirs, strict=True)]
            print(f"CPU ratio lsrep/official (paired runs): {spread(cpu, 2)}")
            print(f"corpus ids equal to the official ones for {check_corpus_ids(theirs[-1]['log'], data)} questions")
        if args.m_questions:
            m_data = generate_longmemeval_file(tmp / "lme_m.json", n_questions=args.m_questions,
                                               sessions_per_question=args.m_sessions, seed=8)
            r = lsrep_run(m_data, tmp / "store_m.sqlite")
            print(f"M-shaped ({args.m_questions} questions x {args.m_sessions} sessions, "
                  f"{m_data.stat().st_size / 2**20:.0f} MiB): wall {r['wall_s']:.1f} s  CPU {r['cpu_s']:.1f} s  tree RSS "
                  f"{r['tree_mb']:.0f} MB (PSS {r['tree_pss_mb']:.0f} MB)  "
                  f"largest process {r['max_proc_mb']:.0f} MB")
        print(json.dumps({"lsrep": [{k: v for k, v in r.items() if k != "stdout"} for r in mine],
                          "official": [{k: str(v) if isinstance(v, Path) else v for k, v in r.items()
                                        if k != "stdout"} for r in theirs]}, default=str))


if __name__ == "__main__":
    main()
