"""Raw capture: gate, masking, retention commands, batch closure and the digest chain."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from exia_testkit import at
from lsrep.systems.exia_seed import ExiaSeedProvider
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.ingestion import omit_requested, split_withdrawal
from lsrep.systems.exia_seed.progress import ProgressStore
from lsrep.systems.exia_seed.registre import Registre


def progress(rig) -> dict:
    """The progress state as read from disk (`etat/progress.json` and `etat/journal.jsonl`)."""
    return ProgressStore(MemoryPaths(rig.root)).load()


def test_tool_schemas_exist_before_initialize():
    names = [s["name"] for s in ExiaSeedProvider().get_tool_schemas()]
    assert names == ["memoire_noter", "memoire_chercher", "memoire_lire"]


def test_lines_are_timestamped_speaker_lines_with_origins(rig):
    r = rig()
    r.provider.sync_turn("My dog Rex loves the park.", "Nice!", now=at(minutes=2), user_time=at(minutes=1),
                         origins=("t1", "t2"))
    raw = (r.root / "brut" / "2026-03-01-001.open.md").read_text().splitlines()
    assert raw == ["[09:01] User: My dog Rex loves the park.", "[09:02] Assistant: Nice!"]
    assert r.provider.origins(["brut:2026-03-01-001:2", "brut:2026-03-01-001:1"]) == ("t2", "t1")


def test_day_change_closes_the_batch_and_chains_digests(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("Day one line about the garden.", "", now=at())
    r.provider.sync_turn("Day two line about the garden.", "", now=at(days=1))
    r.provider.sync_turn("Day three line about the garden.", "", now=at(days=2))
    closed = progress(r)["lots_fermes"]
    assert [b["id"] for b in closed] == ["2026-03-01-001", "2026-03-02-001"]
    first = hashlib.sha256((r.root / "brut" / "2026-03-01-001.md").read_bytes()).hexdigest()
    assert closed[0]["digest"] == first and closed[0]["digest_precedent"] == ""
    assert closed[1]["digest_precedent"] == first
    assert {b["raison"] for b in closed} == {"jour"}
    assert (r.root / "brut" / "2026-03-03-001.open.md").exists()


def test_volume_threshold_closes_mid_day(rig):
    r = rig(batch_max_lines=3, auto_consolidate=False)
    for i in range(4):
        r.provider.sync_turn(f"Line number {i} about the garden.", "", now=at(minutes=i))
    closed = progress(r)["lots_fermes"]
    assert [(b["id"], b["raison"], b["lignes"]) for b in closed] == [("2026-03-01-001", "volume", 3)]


def test_session_end_and_reset_close_the_batch(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("Something about the garden.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=5))
    r.provider.sync_turn("Something else about the garden.", "", now=at(minutes=6))
    r.provider.on_session_switch("s2", reset=True, now=at(minutes=7))
    assert [b["raison"] for b in progress(r)["lots_fermes"]] == ["session", "reset"]


def test_e12_secret_paths(rig):
    r = rig()
    r.provider.sync_turn("my key is sk-abc123def456ghi789 and my IBAN is FR7630006000011234567890189",
                         "", now=at())
    raw = (r.root / "brut" / "2026-03-01-001.open.md").read_text()
    assert "sk-abc123def456ghi789" not in raw and "[secret masqué]" in raw
    assert "FR7630006000011234567890189" in raw  # IBANs are intentionally allowed
    refused = r.tool("memoire_noter", at(), texte="the token=ghp_abcdefghij1234567890")
    assert "error" in refused
    Registre(r.provider.paths).noter("the token=ghp_abcdefghij1234567890", now=at())
    assert "ghp_abcdefghij1234567890" in (r.root / "registre" / "notes.jsonl").read_text()


def test_omit_current_turn(rig):
    r = rig()
    r.provider.sync_turn("Off the record, my salary is very low.", "Understood.", now=at())
    assert not (r.root / "brut" / "2026-03-01-001.open.md").exists()
    assert r.provider.runtime.counters["tours_omis"] == 1


def test_e11_withdrawal_excludes_unconsolidated_lines_but_never_retracts_pages(rig):
    r = rig()
    r.provider.sync_turn("My cat Tom sleeps on the red sofa all day.", "", now=at())
    r.provider.consolidate(at(minutes=1), force=True)
    assert "Tom sleeps on the red sofa" in r.page_text()
    r.provider.sync_turn("Forget what I just said.", "", now=at(minutes=2))
    r.provider.sync_turn("My bike is a blue Peugeot from my uncle Marc.", "", now=at(minutes=3))
    r.provider.sync_turn("Scratch that from memory please.", "", now=at(minutes=4))
    r.provider.consolidate(at(minutes=5), force=True)
    pages = r.page_text()
    assert "Tom sleeps on the red sofa" in pages  # withdrawal does not retract consolidated prose
    assert "Peugeot" not in pages  # the unconsolidated line is excluded
    withdrawn = (r.root / "etat" / "retraits.jsonl").read_text()
    assert "brut:2026-03-01-001:1" in withdrawn and "brut:2026-03-01-002:1" in withdrawn


def test_non_primary_context_does_not_capture(rig):
    r = rig(context="subagent")
    r.provider.sync_turn("My dog Rex loves the park.", "Nice!", now=at())
    assert r.provider.runtime.counters["tours_ignores"] == 1
    assert not list((r.root / "brut").glob("*.md"))
    assert [e.stage for e in r.stages("ingest.gate")] == ["eligible", "skipped"]


def test_settings_load_from_the_host_config(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {"exia_seed": {
        "phase": 2, "language": "fr", "fix": {"phase2_ceiling": True}}}}))
    provider = ExiaSeedProvider()
    provider.initialize("s1", hermes_home=home, platform="cli", agent_context=None)
    assert provider.settings.phase == 2 and provider.settings.fix.phase2_ceiling and provider.active
    provider.sync_turn("Mon chien Rex adore le grand parc.", "Super !", now=at())
    assert (home / "exia_seed" / "brut" / "2026-03-01-001.open.md").read_text().startswith("[09:00] Utilisateur:")
    (home / "config.json").write_text(json.dumps({"memory": {"exia_seed": {"phasee": 2}}}))
    with pytest.raises(ValueError, match="phasee"):
        ExiaSeedProvider().initialize("s1", hermes_home=home, platform="cli")


LOCOMO = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "locomo" / "locomo-dev7.json"


def locomo_turns() -> list[tuple[str, str, str]]:
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    samples = json.loads(LOCOMO.read_text())
    return [(s["sample_id"], t["dia_id"], f"[{t['speaker']}] {t['text']}")
            for s in samples for key, turns in s["conversation"].items()
            if key.startswith("session_") and isinstance(turns, list) for t in turns]


def test_no_retention_command_fires_on_ordinary_locomo_dialogue():
    """3,944 real turns, each as the host hands it over (`[Name] text`): none is a command.

    The unanchored seed patterns fired on three of them ("…lost and forget that", "I won't forget
    that", "don't ever forget that you have people cheering you on").
    """
    turns = locomo_turns()
    assert len(turns) == 3944
    fired = [(s, d) for s, d, text in turns if omit_requested(text) or split_withdrawal(text)[0]]
    assert fired == []
    assert split_withdrawal("[Maria] It's easy to get lost and forget that.")[0] is False


@pytest.mark.parametrize("text", ["forget it, let's go", "Forget it, let's go!", "I don't remember that place.",
                                  "Don't ever forget that you are loved.", "I won't forget that.",
                                  "Did you forget that?", "and we forgot that from memory lane"])
def test_ordinary_speech_is_no_command(text):
    assert not omit_requested(text) and not split_withdrawal(text)[0]


@pytest.mark.parametrize(("text", "rest"), [
    ("please forget that I live in Lisbon", ""),
    ("[Ana] Please forget that I live in Lisbon.", ""),
    ("Forget what I just said.", ""),
    ("ok, forget that.", ""),
    ("Can you forget that? Thanks", "Thanks"),
    ("Great trip. Forget that I said I hated it. Back home now.", "Great trip. Back home now."),
    ("[Ana] Scratch that from memory please.", "[Ana] please."),
    ("Oublie ça.", ""),
])
def test_explicit_withdrawal_requests_fire(text, rest):
    assert split_withdrawal(text) == (True, rest)


@pytest.mark.parametrize("text", ["Off the record, my salary is very low.", "[Ana] Don't save this: my PIN is 1234.",
                                  "Please do not remember this.", "Ne retiens pas ça."])
def test_explicit_omit_requests_fire(text):
    assert omit_requested(text)
