"""How pool workers start (`lsrep.executors.workers`): forked from a fork server that has imported the
harness, born ignoring Ctrl-C, dying with the driver, and no fork server left after a run."""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from lsrep.executors import workers
from lsrep.executors.local import ProcessPoolExecutor
from tests.conftest import longmemeval_tasks

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _alive(pid: int) -> bool:
    return workers.driver_alive(pid)


def _pool(n: int = 1) -> cf.ProcessPoolExecutor:
    return ProcessPoolExecutor(n)._pool(workers.WorkerContext(), n)


def test_every_preloaded_module_exists():
    """The fork server skips a module it cannot import without a word: a renamed module would
    silently make every worker import the harness itself again."""
    assert "lsrep.engine" in workers.HARNESS
    for name in workers.HARNESS:
        if name != "__main__":
            importlib.import_module(name)


def test_a_worker_is_forked_from_the_fork_server_with_the_harness_imported():
    pool = _pool()
    try:
        # `eval` and a string: nothing the worker unpickles imports LSREP, so what it has, it was born with.
        parent = pool.submit(eval, "__import__('os').getppid()").result(timeout=60)
        loaded = pool.submit(eval, "sorted(m for m in __import__('sys').modules if m.startswith('lsrep.'))").result(timeout=60)
        ignores_ctrl_c = pool.submit(eval, "__import__('signal').getsignal(2) == __import__('signal').SIG_IGN").result(timeout=60)
        blocked = pool.submit(eval, "2 in __import__('signal').pthread_sigmask(0, [])").result(timeout=60)
    finally:
        pool.shutdown(wait=True)
    server = multiprocessing.forkserver._forkserver._forkserver_pid
    assert parent != os.getpid() and parent == server, "the worker was not forked from the fork server"
    with open(f"/proc/{server}/status") as fh:
        sigblk = int(next(line for line in fh if line.startswith("SigBlk:")).split()[1], 16)
    assert sigblk & (1 << (signal.SIGINT - 1)), "the fork server (so a worker at birth) does not block SIGINT"
    assert {"lsrep.engine", "lsrep.host.client", "lsrep.memory_model.gateway"} <= set(loaded)
    assert ignores_ctrl_c and not blocked
    workers.stop_fork_server()
    assert not _alive(server) and multiprocessing.forkserver._forkserver._forkserver_pid is None


def test_a_run_leaves_no_fork_server_and_the_next_run_starts_its_own(tmp_path):
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=2, sessions_per_question=2, seed=3)
    seen = []
    real = workers.WorkerProcess.start

    def start(self):
        real(self)
        seen.append(multiprocessing.forkserver._forkserver._forkserver_pid)

    workers.WorkerProcess.start = start
    try:
        for i in range(2):
            run_longmemeval(spec_from_systems(["full-context"], data, store=tmp_path / f"{i}.sqlite"),
                            executor=ProcessPoolExecutor(1), fresh=True)
            assert multiprocessing.forkserver._forkserver._forkserver_pid is None
            assert seen and not _alive(seen[-1]), "the fork server outlived the run"
    finally:
        workers.WorkerProcess.start = real
    assert len(seen) == 2 and seen[0] != seen[1]


def test_stopping_kills_a_worker_still_alive():
    """A worker started while a stopped run killed its pool would keep the fork server (and the
    stop) waiting: the stop kills it."""
    pool = _pool()
    pid = pool.submit(os.getpid).result(timeout=60)
    pool.submit(time.sleep, 60)
    time.sleep(0.2)
    start = time.monotonic()
    workers.stop_fork_server()
    assert time.monotonic() - start < 10
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    pool.shutdown(wait=False, cancel_futures=True)


def test_a_fork_server_this_module_did_not_start_is_left_alone(monkeypatch):
    server = multiprocessing.forkserver._forkserver
    monkeypatch.setattr(server, "_forkserver_pid", 999_999_999)
    stopped = []
    monkeypatch.setattr(server, "_stop", lambda: stopped.append(1))
    workers.stop_fork_server()
    assert not stopped


def test_workers_die_with_a_killed_driver(tmp_path):
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent("""
        import os, sys, time
        from lsrep.executors.local import ProcessPoolExecutor
        from lsrep.executors import workers
        if __name__ == "__main__":
            pool = ProcessPoolExecutor(2)._pool(workers.WorkerContext(), 2)
            pids = {pool.submit(os.getpid).result() for _ in range(20)}
            for _ in range(2):
                pool.submit(time.sleep, 120)
            print(" ".join(map(str, sorted(pids))), flush=True)
            time.sleep(120)
    """))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids and all(_alive(p) for p in pids)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in pids), "a worker outlived its killed driver"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_driver_alive_tells_a_zombie_from_a_live_process():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited, not yet reaped: a zombie
        with open(f"/proc/{child.pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                break
        time.sleep(0.02)
    assert not workers.driver_alive(child.pid)
    assert workers.driver_alive(os.getpid())
    child.wait()
    assert not workers.driver_alive(child.pid)
    assert child.pid not in workers.children(os.getpid())


def test_children_lists_a_live_child_and_not_a_zombie():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in workers.children(os.getpid())
        assert os.getpid() not in workers.children(os.getpid())
    finally:
        child.kill()
    deadline = time.monotonic() + 10
    while child.pid in workers.children(os.getpid()) and time.monotonic() < deadline:
        time.sleep(0.02)  # killed, not yet reaped: a zombie, which is not listed
    assert child.pid not in workers.children(os.getpid())
    child.wait()


class _Seen(Exception):
    pass


def _first_task_sees_a_fork_server(executor) -> int | None:
    """Run `executor` on units whose first pull records the running fork server, then stops the run."""
    seen = []

    def units():
        seen.append(multiprocessing.forkserver._forkserver._forkserver_pid)
        raise _Seen
        yield

    with pytest.raises(_Seen):
        list(executor.run(units()))
    return seen[0]


def test_a_pool_starts_its_fork_server_before_building_its_first_unit():
    from lsrep.executors.auto import AutoExecutor
    from lsrep.executors.shard import ShardedExecutor

    for executor in (ProcessPoolExecutor(2), AutoExecutor(cores=2), ShardedExecutor(3)):
        pid = _first_task_sees_a_fork_server(executor)
        assert pid is not None, f"{executor.name}: no fork server while its units were built"
        assert not _alive(pid) and multiprocessing.forkserver._forkserver._forkserver_pid is None, executor.name
    # No worker can start, or the sharded executor's one worker is spawned: no fork server.
    for executor in (AutoExecutor(cores=1), ShardedExecutor(1), ShardedExecutor(2)):
        assert _first_task_sees_a_fork_server(executor) is None, executor.name


def test_the_sharded_executors_single_worker_is_spawned_not_forked(lme_file_small, tmp_path):
    """One worker beside this process: a fork server would save it no import and stay resident for
    the run (+16 MB PSS at LongMemEval S scale, against a 300 MB budget), so it is spawned."""
    from lsrep.executors.shard import ShardedExecutor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    starts = []
    real = workers.SpawnedWorker.start

    def start(self):
        starts.append(type(self).__name__)
        real(self)

    workers.SpawnedWorker.start = start
    try:
        sharded = ShardedExecutor(2)
        run_longmemeval(spec_from_systems(["full-context"], lme_file_small, store=tmp_path / "s.sqlite"),
                        executor=sharded, fresh=True)
    finally:
        workers.SpawnedWorker.start = real
    assert sharded.ran_remote >= 1 and starts == ["SpawnedWorker"]
    assert multiprocessing.forkserver._forkserver._forkserver_pid is None


@pytest.fixture
def lme_file_small(tmp_path):
    from lsrep.probes.generator import generate_longmemeval_file

    return generate_longmemeval_file(tmp_path / "lme.json", n_questions=6, sessions_per_question=2, seed=7)


def test_auto_stops_the_fork_server_when_it_runs_in_process(tmp_path, monkeypatch):
    """Too few units for a pool: the fork server started while they were listed is stopped."""
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.executors.auto import AutoExecutor

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=1, sessions_per_question=2, seed=3)
    tasks = longmemeval_tasks(data, ["full-context"], tmp_path / "g.sqlite")
    started = []
    real = workers.start_fork_server

    def start():
        real()
        started.append(multiprocessing.forkserver._forkserver._forkserver_pid)

    import lsrep.executors.auto as auto_module

    monkeypatch.setattr(auto_module, "start_fork_server", start)
    auto = AutoExecutor(cores=2)
    results = list(auto.run(tasks))
    assert auto.chosen.name == "in-process" and len(results) == 1
    assert started and started[0] is not None and not _alive(started[0])
    assert multiprocessing.forkserver._forkserver._forkserver_pid is None


def test_in_a_fresh_process_the_fork_server_blocks_ctrl_c_and_its_resource_tracker_is_quiet():
    """In a process where multiprocessing has started nothing yet: the fork server starts the
    resource tracker, whose start unblocks SIGINT in the starting thread, so the fork server
    could import the harness with Ctrl-C deliverable (a KeyboardInterrupt traceback on the
    terminal); and the tracker would warn about the pool's semaphores after Ctrl-C unless told
    not to before it started (one line per interrupt)."""
    code = ("from lsrep.executors import workers; workers.start_fork_server(); "
            "import multiprocessing.resource_tracker as r, multiprocessing.forkserver as f; "
            "print(open(f'/proc/{r._resource_tracker._pid}/cmdline').read().split(chr(0))); "
            "print([l for l in open(f'/proc/{f._forkserver._forkserver_pid}/status') if l.startswith('SigBlk')][0].strip())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    tracker, sigblk = out.stdout.splitlines()
    assert "-Wignore:resource_tracker:UserWarning" in tracker
    assert int(sigblk.split()[1], 16) & (1 << (signal.SIGINT - 1)), "the fork server does not block SIGINT"


def test_in_a_fresh_process_a_spawned_worker_is_born_blocking_ctrl_c():
    """The same trap as the fork server's: the spawn starts the resource tracker, which unblocks
    SIGINT in the starting thread, so the worker would import the harness with Ctrl-C deliverable."""
    code = textwrap.dedent("""
        import time
        from lsrep.executors import workers
        if __name__ == "__main__":
            p = workers.SpawnContext().Process(target=time.sleep, args=(3,))
            p.start()
            time.sleep(0.3)
            print([l for l in open(f"/proc/{p.pid}/status") if l.startswith("SigBlk")][0].strip())
            p.kill()
    """)
    script = Path(tempfile.mkdtemp()) / "spawn_one.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[1], 16) & (1 << (signal.SIGINT - 1)), out.stdout


def test_without_proc_a_live_driver_is_alive(monkeypatch):
    """Where there is no /proc (macOS), a worker asks the driver with a null signal: reading /proc
    there found nothing, so every worker took its live driver for dead and exited at once."""
    monkeypatch.setattr(workers, "HAVE_PROC", False)
    monkeypatch.setattr(workers, "_stat", lambda pid: pytest.fail("/proc read where there is none"))
    assert workers.driver_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not workers.driver_alive(child.pid)
    assert workers.children(os.getpid()) == []
