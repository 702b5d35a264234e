"""The simulated clock inside the adapter host: third-party code reading the wall clock sees `now`.

Memory libraries stamp what they store with the machine's time (`datetime.now()`, `time.time()`):
mem0 tells its extraction model the machine's date as the "observation date", LangGraph stamps every
stored item. Replaying a 2023 conversation in 2026 then stores 2026. Inside the host process, the call
hook :func:`simulated` (registered through `lsrep.host.server.CALL_HOOKS`) patches the clock with
`time-machine` — at the C level, so `time.time`, `time.time_ns`, `time.localtime`, `time.gmtime`,
`time.strftime`, `datetime.now`, `datetime.utcnow` and `date.today` all agree — to the call's
simulated `now`, frozen for the duration of the call (`tick=False`: the same replay stores the same
stamps, byte for byte; over a batch of calls one travel is kept and moved from call to call,
:class:`HeldClock`, with the same readings). Calls without a `now` (snapshot, restore, state digest, close) see the last
`now` the host was given. Monotonic clocks (`time.monotonic`, `time.perf_counter`) are not patched,
so timeouts and the host's own timings still measure real time.

`simulated_clock = "ticking"` starts the clock at `now` and lets it run during the call (hook
:func:`ticking`), for a library that waits on the wall clock (`while time.time() < deadline`),
which a frozen clock would never let finish; stored stamps then vary by the call's duration.

Switch: the campaign key `simulated_clock = false` (or `-S simulated_clock=false`) leaves the wall
clock alone; `lsrep adapters check --wall-clock` does the same for the conformance suite, whose
`no_wall_clock` check replays with the host's machine clock shifted (:func:`shifted_machine`) to show
what a system that reads the wall clock does. With `adapter_host = "in-process"` the clock is not
simulated (patching the harness's own clock while other units run is not safe); the manifest says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

SIMULATED = "lsrep.host.clock:simulated"
"""The call hook that freezes the host's clock at each call's simulated `now`."""
TICKING = "lsrep.host.clock:ticking"
"""The call hook that starts the host's clock at each call's simulated `now` and lets it run."""
SHIFTED = "lsrep.host.clock:shifted_machine"
"""The call hook that moves the host's machine clock far from today (conformance only)."""
MACHINE_SHIFT = timedelta(days=1111, hours=7)
"""How far :func:`shifted_machine` moves the machine clock: another year, month, day and hour."""

_LAST_NOW: list[datetime] = []
"""The last simulated `now` this host process was given (for calls that carry none)."""


def forget() -> None:
    """Drop the last simulated `now` (a host serving a new unit starts as a fresh one would)."""
    _LAST_NOW.clear()


def hooks(enabled: bool | str, *, shifted: bool = False) -> tuple[str, ...]:
    """The host call hooks for a clock mode (True: frozen, "ticking", False: none), outermost first
    (the simulated clock wins over a shift)."""
    clock = (TICKING,) if enabled == "ticking" else (SIMULATED,) if enabled else ()
    return ((SHIFTED,) if shifted else ()) + clock


def describe_clock(host_mode: str, enabled: bool | str) -> dict[str, Any]:
    """What a run manifest records about the clock adapters saw."""
    if not enabled:
        return {"mode": "wall", "reason": "simulated_clock = false: systems read the machine's clock"}
    if host_mode == "in-process":
        return {"mode": "wall", "reason": "adapter_host = in-process: the clock is simulated only in the "
                                          "adapter host process"}
    return {"mode": "simulated", "patch": f"time-machine {_version()}", "frozen": enabled != "ticking",
            "scope": "each adapter call in the host sees its simulated now (calls without one: the last now)"}


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("time-machine")
    except metadata.PackageNotFoundError:
        return "unknown"


def _aware(now: datetime) -> datetime:
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


@contextlib.contextmanager
def _travel(context: dict[str, Any], tick: bool) -> Iterator[None]:
    """The wall clock reads the call's `now` (or the last one seen), frozen or running from it."""
    now = context.get("now")
    if isinstance(now, datetime):
        _LAST_NOW[:] = [_aware(now)]
    if not _LAST_NOW:
        yield
        return
    import time_machine

    with time_machine.travel(_LAST_NOW[0], tick=tick):
        yield


def simulated(context: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    """Around one adapter call: the wall clock reads the call's `now` (or the last one), frozen."""
    return _travel(context, tick=False)


class HeldClock:
    """The frozen clock of :func:`simulated` over the calls of one batch, started once.

    Per call, `time_machine.travel` patches the clock, swaps the uuid module's time source and sets
    TZ (twice `tzset`), then undoes all of it: about a fifth of a hosted ingest's CPU. Between
    the calls of a batch the host runs only its own code (encoding the reply, decoding the next
    call; its timings read the monotonic clock, which is never patched), so the travel started
    for the first call is kept and moved to each call's `now` (`Traveller.shift`, exact: the
    `now`s are microsecond datetimes), and stopped when the batch ends. Every call reads the
    clock it would read under :func:`simulated` (tests/host/test_clock.py compares them). A
    `now` that is not in UTC (`tzinfo` other than `datetime.UTC`), for which time-machine would
    set another TZ, gets a travel of its own, as :func:`simulated` gives it.
    """

    def __init__(self) -> None:
        self._travel: Any = None
        self._traveller: Any = None
        self._at: datetime | None = None

    def call(self, context: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
        """The clock for one call of the batch (the held travel, moved; or a call's own travel)."""
        now = context.get("now")
        if isinstance(now, datetime):
            _LAST_NOW[:] = [_aware(now)]
        if not _LAST_NOW or _LAST_NOW[0].tzinfo is not UTC:
            self.close()
            return _travel(context, tick=False)
        at = _LAST_NOW[0]
        if self._traveller is None:
            import time_machine

            self._travel = time_machine.travel(at, tick=False)
            self._traveller = self._travel.start()
        elif at != self._at:
            self._traveller.shift(at - self._at)
        self._at = at
        return contextlib.nullcontext()

    def close(self) -> None:
        """Stop the held travel: the machine's clock (and TZ) again."""
        if self._travel is not None:
            travel, self._travel, self._traveller, self._at = self._travel, None, None, None
            travel.stop()


simulated.held = HeldClock  # type: ignore[attr-defined]
"""How a batch of calls keeps this hook's clock between its calls (`lsrep.host.server`)."""


def ticking(context: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    """Around one adapter call: the wall clock starts at the call's `now` (or the last one) and runs."""
    return _travel(context, tick=True)


@contextlib.contextmanager
def shifted_machine(context: dict[str, Any]) -> Iterator[None]:
    """Around one adapter call: the machine clock runs MACHINE_SHIFT ahead of the real one (ticking)."""
    import time_machine

    with time_machine.travel(datetime.now(UTC) + MACHINE_SHIFT, tick=True):
        yield
