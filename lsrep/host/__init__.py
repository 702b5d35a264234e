"""The out-of-process adapter host: memory systems run where the gold is not.

By default (`adapter_host = "process"`) every adapter — built-ins included, under every executor —
is built and called in a host process of its own (:mod:`lsrep.host.server`), started with a clean
argv and environment, a private working directory and, where the machine allows it, its own PID
namespace. It receives only what the protocol gives an adapter; references, probes, expected
answers, the campaign file and the run store stay in the harness. `adapter_host = "in-process"`
(campaign key or `lsrep run --adapter-host in-process`) builds the adapter in the harness process,
for debugging; runs record the mode and reports show it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsrep.errors import ConfigError

HOST_MODES = ("process", "in-process")
"""`process`: the adapter runs in its host process (default); `in-process`: in the harness (debugging)."""


def check_mode(mode: str) -> str:
    if mode not in HOST_MODES:
        raise ConfigError(f"adapter host {mode!r}: expected one of {', '.join(HOST_MODES)}")
    return mode


def end_of_run() -> None:
    """A run's units are done: the hosts kept for later units are stopped, then this process's
    fork server of hosts (`lsrep.host.launch`). No host process outlives the run, and each run pays
    its own start-up, as each run starts and stops its pool's fork server."""
    from lsrep.host.launch import stop_zygote
    from lsrep.host.reuse import close_idle_hosts

    close_idle_hosts()
    stop_zygote()


def open_adapter(mode: str, cls: type, options: Any, raw_options: dict[str, Any], *, disable: tuple[str, ...],
                 state_dir: Path | None, retrieval_budget: int | None, embedder: Any, llm: Any, seed: int,
                 embedding_text: str = "content", memory: Any = None, simulated_clock: bool | str = True) -> Any:
    """The adapter for a unit: a HostedAdapter (`process`) or the adapter itself (`in-process`).

    `options` is the validated Options instance (used in-process); the host re-validates
    `raw_options`, the condition's options as written. `memory` is the unit's memory-model relay
    (`lsrep.memory_model.relay.MemoryRelay`) when the condition gives its system a model.
    `simulated_clock` patches the host's wall clock to each call's `now` (lsrep.host.clock; not
    in-process).
    """
    if check_mode(mode) == "in-process":
        from functools import partial

        from lsrep.harness import build_adapter

        build = partial(build_adapter, cls, options, disable=disable, state_dir=state_dir,
                        retrieval_budget=retrieval_budget, embedder=embedder, llm=llm, seed=seed,
                        embedding_text=embedding_text)
        if memory is None:
            return build()
        from lsrep.memory_model.inprocess import build_attributed

        return build_attributed(build, memory)
    from lsrep.host.client import open_hosted
    from lsrep.host.clock import hooks

    return open_hosted(cls, raw_options, disable=disable, retrieval_budget=retrieval_budget, embedder=embedder,
                       llm=llm, seed=seed, embedding_text=embedding_text, memory=memory,
                       hooks=hooks(simulated_clock))


def describe_host(mode: str) -> dict[str, Any]:
    """What a run manifest records about where adapters ran."""
    if check_mode(mode) == "in-process":
        return {"mode": mode, "isolation": "none (debugging: adapters share the harness process)"}
    from lsrep.host.launch import isolation

    level = isolation()
    out: dict[str, Any] = {"mode": mode, "isolation": level}
    if level == "sandbox":
        out.update(filesystem="minimal root per host: system, Python and adapter code read-only, run inputs and "
                              "store covered, private folder and /tmp (lsrep/host/sandbox.py)",
                   network="loopback only")
    else:
        out.update(filesystem="the harness's (same user)", network="the harness's")
    return out
