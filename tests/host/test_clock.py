"""The simulated clock inside the adapter host: a system that reads the wall clock stores the simulated date."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime

import pytest

from lsrep.conformance import run_conformance
from lsrep.contract import ReplayTurn
from lsrep.executors.local import InProcessExecutor
from lsrep.harness import validate_condition
from lsrep.host.client import open_hosted
from lsrep.host.clock import hooks
from lsrep.runner import run_campaign
from lsrep.store import RunStore

ADAPTER = "tests.host.host_adapters:ClockReadingAdapter"
THEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _hosted(simulated: bool):
    cls, _ = validate_condition(ADAPTER, {}, (), "c")
    return open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0,
                       hooks=hooks(simulated))


def _noted(adapter, now: datetime) -> str:
    turn = ReplayTurn(turn_id="t1", conversation_id="c", index=0, session_id="s1", role="user", speaker="Ana",
                      content="I moved to Lyon.",
                      timestamp=now)
    try:
        adapter.reset(conversation_id="c", now=now)
        adapter.ingest(turn, now=now)
        return adapter.query("Where?", now=now).fragments[0].text
    finally:
        adapter.close()


def test_wall_clock_reads_in_the_host_return_the_calls_simulated_now():
    assert _noted(_hosted(True), THEN) == "I moved to Lyon. (noted 2023-05-08; epoch 2023-05-08)"


def test_without_the_patch_the_host_reads_the_machines_clock():
    text = _noted(_hosted(False), THEN)
    assert "2023-05-08" not in text
    assert re.search(r"noted (\d{4}-\d\d-\d\d)", text).group(1) in {
        date.today().isoformat(), datetime.now(UTC).date().isoformat()}


def _campaign(example, simulated: bool):
    text = example.read_text()
    head, _, rest = text.partition("[[trajectories]]")
    clock = "" if simulated else "simulated_clock = false\n"
    body = head + clock + "[[trajectories]]" + rest.split("[[conditions]]")[0]
    body += f'[[conditions]]\nname = "clock"\nsystem = "{ADAPTER}"\n\n' + rest.split("[answerer]", 1)[1].join(
        ["[answerer]", ""])
    example.write_text(body)
    return run_campaign(example, executor=InProcessExecutor(), fresh=True)


def _dates_stored(out) -> tuple[set[str], dict]:
    store = RunStore(out.store_path)
    texts = [r["full_text"] for r in store.rows(
        "select coalesce(t.text, f.text) as full_text from fragments f "
        "left join fragment_texts t on t.sha256 = f.text_sha256")]
    manifest = json.loads(store.rows("select manifest from runs where run_id = ?", [out.run_id])[0]["manifest"])
    return {d for t in texts for d in re.findall(r"noted (\d{4}-\d\d-\d\d)", t)}, manifest


def test_a_campaign_stores_the_simulated_dates_and_records_the_clock(example):
    turns = [json.loads(line) for line in (example.parent / "quickstart" / "trajectory.jsonl").read_text().splitlines()]
    days = {t["timestamp"][:10] for t in turns}
    stored, manifest = _dates_stored(_campaign(example, True))
    assert stored and stored <= days, stored - days
    assert manifest["clock"]["mode"] == "simulated"
    assert manifest["clock"]["patch"].startswith("time-machine ")


def test_a_campaign_with_the_clock_off_stores_todays_date_and_says_so(example):
    stored, manifest = _dates_stored(_campaign(example, False))
    assert stored <= {date.today().isoformat(), datetime.now(UTC).date().isoformat()}
    assert manifest["clock"]["mode"] == "wall"


def test_conformance_passes_it_with_the_clock_and_fails_it_without():
    on = run_conformance(ADAPTER, checks=["no_wall_clock"])
    assert on.results[0].status == "passed", on.results[0].reason
    off = run_conformance(ADAPTER, checks=["no_wall_clock"], simulated_clock=False)
    assert off.results[0].status == "failed", off.results[0].reason
    assert not off.simulated_clock


def test_the_shifted_replay_catches_a_date_kept_only_in_state():
    target = "tests.conformance.broken_adapters:WallClockDigestAdapter"
    off = run_conformance(target, checks=["no_wall_clock"], simulated_clock=False)
    assert off.results[0].status == "failed"
    assert "state digest" in off.results[0].reason
    assert run_conformance(target, checks=["no_wall_clock"]).results[0].status == "passed"


def test_a_ticking_clock_starts_at_now_and_runs():
    from lsrep.host.clock import TICKING

    assert hooks("ticking") == (TICKING,)
    assert _noted(_hosted("ticking"), THEN) == "I moved to Lyon. (noted 2023-05-08; epoch 2023-05-08)"


def test_the_clock_mode_is_validated_in_the_campaign(example):
    import pytest

    from lsrep.errors import LsrepError

    text = example.read_text()
    example.write_text(text.replace("[[trajectories]]", 'simulated_clock = "sometimes"\n\n[[trajectories]]', 1))
    with pytest.raises(LsrepError, match="simulated_clock"):
        run_campaign(example, executor=InProcessExecutor(), fresh=True)


def test_the_shifted_replay_compares_what_the_system_sends_to_its_models():
    from lsrep.conformance.checks_integrity import _clock_difference
    from lsrep.conformance.driving import Replay

    def replay(traffic):
        return Replay(mid={}, end={}, digest_mid="d", digest_end="e", events=(), traffic=traffic)

    sent = ('{"cb": "llm", "messages": [{"content": "Observation date 2023-05-08"}]}',)
    moved = ('{"cb": "llm", "messages": [{"content": "Observation date 2026-12-01"}]}',)
    assert _clock_difference(replay(sent), replay(sent)) is None
    assert _clock_difference(replay(sent), replay(moved)) == "what it sends to its models (1 of 1 request(s))"


def test_the_recording_host_keeps_every_request_it_serves():
    from lsrep.conformance.driving import RecordingHost
    from lsrep.host.client import HostedAdapter
    from lsrep.host.launch import import_path

    class Model:
        def complete(self, messages):
            return "ok"

    cls, _ = validate_condition("tests.host.host_adapters:ModelCallingAdapter", {}, (), "c")
    host = RecordingHost(llm=Model(), embedder=None, preload=cls.__module__)  # its package is in the host's view
    try:
        host.start_path(import_path(cls), hooks(True))
        adapter = HostedAdapter(host, cls, options={}, disable=(), retrieval_budget=None, seed=0, owns_host=False)
        adapter.reset(conversation_id="c", now=THEN)
        try:
            adapter.query("Where do I live?", now=THEN)
        except Exception:  # noqa: BLE001, S110 - the embedder is absent; the llm request is what we look at
            pass
        assert any('"cb": "llm"' in t and "Where do I live?" in t for t in host.traffic), host.traffic
    finally:
        host.close()


TRACE = "tests.host.host_adapters:ClockTraceAdapter"


def _trace_calls():
    """Ingests and session ends whose `now`s go forward, repeat, go back, carry microseconds and
    leave UTC (a zone, a fixed offset, a zero offset that is not `datetime.UTC`) and come back."""
    from datetime import timedelta, timezone
    from zoneinfo import ZoneInfo

    nows = [THEN, THEN + timedelta(minutes=1), THEN + timedelta(minutes=1), THEN - timedelta(days=400),
            THEN + timedelta(seconds=5, microseconds=123457), datetime(2023, 1, 2, 8, tzinfo=ZoneInfo("Europe/Paris")),
            datetime(2023, 7, 2, 8, tzinfo=ZoneInfo("Europe/Paris")), THEN + timedelta(hours=3),
            datetime(2023, 1, 2, 8, tzinfo=timezone(timedelta(hours=2))),
            datetime(2023, 1, 2, 8, tzinfo=timezone(timedelta(0), "Z0")), THEN + timedelta(days=2)]
    calls = []
    for i, now in enumerate(nows):
        turn = ReplayTurn(turn_id=f"t{i}", conversation_id="c", index=i, session_id="s1", role="user",
                          speaker="Ana", content="x", timestamp=now)
        calls.append(("ingest", (turn,), {"now": now}))
        if i % 3 == 2:
            calls.append(("end_session", (f"s{i}",), {"now": now}))
    return calls


def _traced(batched: bool, clock: bool | str = True) -> list[str]:
    cls, _ = validate_condition(TRACE, {}, (), "c")
    adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0,
                          hooks=hooks(clock))
    calls = _trace_calls()
    try:
        adapter.reset(conversation_id="c", now=THEN)
        if batched:
            adapter.prefetch(calls)
        for method, args, kwargs in calls:
            getattr(adapter, method)(*args, **kwargs)
        return [f.text for f in adapter.query("q", now=THEN).fragments]
    finally:
        adapter.close()


def test_a_batch_reads_every_clock_as_its_calls_one_by_one_do():
    """The travel held over a batch's calls (`clock.HeldClock`) gives each call the readings of its
    own travel (`clock.simulated`), through shifts forward, back and by zero, and across zones."""
    one_by_one, batched = _traced(False), _traced(True)
    assert len(one_by_one) == len(_trace_calls()) == 14
    assert batched == one_by_one
    reads = [json.loads(r) for r in one_by_one]
    assert reads[0][1] == int(THEN.timestamp()) * 10**9 and reads[0][7] == "2023-05-08 13:56 UTC"
    # TZ is set to UTC for UTC `now`s only (a zone crosses the wire as its offset: no TZ set).
    assert [r[8] for r in reads].count(None) == 5 and {r[8] for r in reads} == {"UTC", None}


def test_a_batch_starts_one_travel_while_its_nows_are_in_utc_and_then_gives_the_clock_back(monkeypatch):
    import time

    import time_machine

    from lsrep.host import clock, server

    starts = []
    real_start = time_machine.travel.start
    monkeypatch.setattr(time_machine.travel, "start", lambda self: starts.append(self) or real_start(self))
    monkeypatch.setattr(server, "CALL_HOOKS", [clock.simulated])
    monkeypatch.setattr(clock, "_LAST_NOW", [])
    sent = []
    host = server.Host(type("Channel", (), {"send_encoded": lambda self, p: sent.append(p)})())
    host.instances[0] = cls = validate_condition(TRACE, {}, (), "c")[0]
    from lsrep.contract import AdapterSetup

    host.instances[0] = adapter = cls(AdapterSetup(options=cls.Options(), disabled=frozenset(), state_dir=".",
                                                   retrieval_budget=None, seed=0))
    adapter.reset(conversation_id="c", now=THEN)
    from lsrep.host.client import _call_text

    utc = [c for c in _trace_calls() if c[2]["now"].tzinfo is UTC]
    reply = host.op_batch({"instance": 0, "calls": [json.loads(_call_text(*c)) for c in utc]})
    assert reply == {"ok": len(utc)} and len(sent) == len(utc) == 8
    assert len(starts) == 1  # one travel, shifted from call to call
    assert not time_machine.traveller_stack  # stopped with the batch: the machine's clock again
    assert abs(time.time() - datetime.now(UTC).timestamp()) < 5 and time.time() > THEN.timestamp() + 10**8
    assert [json.loads(r)[1] for r in adapter.reads] == [int(c[2]["now"].timestamp() * 10**6) * 1000 for c in utc]


@pytest.mark.parametrize("clock", ["ticking", False])
def test_a_batch_under_a_ticking_or_no_clock_runs_each_call_as_before(clock, monkeypatch):
    """Only the frozen clock is held over a batch; a ticking one starts at each call's `now` and
    runs, and with none the machine's clock is read, batched or not (and the batch is answered
    as a batch: no call is sent again one by one)."""
    from datetime import timedelta

    from lsrep.host import client

    sent = []
    real = client.HostProcess.exchange
    monkeypatch.setattr(client.HostProcess, "exchange", lambda self, message, *a, **k: sent.append(
        (message["op"], message.get("method"))) or real(self, message, *a, **k))
    for batched in (False, True):
        sent.clear()
        reads = [json.loads(r) for r in _traced(batched, clock)]
        assert len(reads) == 14
        assert (("call", "ingest") in sent) is not batched and (("batch", None) in sent) is batched
        for (_, _, kwargs), read in zip(_trace_calls(), reads, strict=True):
            at = datetime.fromisoformat(read[4])
            if clock:
                assert kwargs["now"] <= at < kwargs["now"] + timedelta(seconds=30)
            else:
                assert abs(at - datetime.now(UTC)) < timedelta(minutes=10)
