"""`[memory_llm]` / `[memory_embedder]`: validated with errors naming file and key, resolved per
condition, recorded in the manifest without the key."""

from __future__ import annotations

import json

import pytest

from lsrep.errors import InputError
from lsrep.preflight import prepare_run
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.memory_model.campaign_util import write_campaign


def _error(tmp_path, tables: str, **kw) -> str:
    path = write_campaign(tmp_path, tables, **kw)
    with pytest.raises(InputError) as info:
        prepare_run(path)
    text = str(info.value)
    assert str(path) in text or path.name in text
    return text


def test_an_endpoint_table_needs_url_and_model(tmp_path):
    text = _error(tmp_path, '[memory_llm]\nmodel = "m"\n')
    assert "memory_llm" in text and "base_url" in text and "offline" in text


def test_offline_takes_no_url(tmp_path):
    text = _error(tmp_path, '[memory_llm]\nkind = "offline"\nbase_url = "http://x/v1"\n')
    assert "memory_llm" in text and "base_url is for kind 'endpoint'" in text


def test_an_unset_key_variable_is_named_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("LSREP_NO_SUCH_KEY", raising=False)
    text = _error(tmp_path, '[memory_embedder]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "e"\n'
                  'api_key_env = "LSREP_NO_SUCH_KEY"\n')
    assert "[memory_embedder] api_key_env" in text and "LSREP_NO_SUCH_KEY is not set" in text
    assert not (tmp_path / "runs").exists()  # nothing written


def test_a_conditions_own_table_is_checked_and_named(tmp_path, monkeypatch):
    monkeypatch.delenv("LSREP_NO_SUCH_KEY", raising=False)
    extra = ('memory_llm = { base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "LSREP_NO_SUCH_KEY" }')
    text = _error(tmp_path, '[memory_llm]\nkind = "offline"\n', extra_conditions=extra)
    assert "[[conditions]] 'gw' memory_llm api_key_env" in text


def test_dimensions_belongs_to_the_embedder(tmp_path):
    text = _error(tmp_path, '[memory_llm]\nkind = "offline"\ndimensions = 8\n')
    assert "[memory_llm] dimensions" in text


def test_a_condition_overrides_the_campaign_table_and_the_manifest_records_both(tmp_path, monkeypatch):
    monkeypatch.setenv("LSREP_MEM_KEY", "sk-never-in-the-manifest")
    extra = ('memory_embedder = { kind = "offline", dimensions = 16 }\n\n[[conditions]]\nname = "gw2"\n'
             'system = "tests.memory_model.gateway_adapters:GatewayClientAdapter"\n')
    tables = ('[memory_llm]\nkind = "offline"\nmodel = "instrument"\n[memory_embedder]\nkind = "offline"\n'
              'dimensions = 48\n')
    out = run_campaign(write_campaign(tmp_path, tables, extra_conditions=extra))
    store = RunStore(out.store_path)
    manifest = json.loads(store.rows("select manifest from runs where run_id = ?", [out.run_id])[0]["manifest"])
    models = manifest["memory_models"]
    assert models["gw"]["memory_embedder"]["dimensions"] == 16
    assert models["gw2"]["memory_embedder"]["dimensions"] == 48
    assert models["gw"]["memory_llm"]["model"] == "instrument"
    assert "sk-never-in-the-manifest" not in json.dumps(manifest)
    booked = store.rows("select condition, model, count(*) n from memory_calls where run_id = ? and kind = 'chat' "
                        "group by condition", [out.run_id])
    assert {r["condition"]: r["model"] for r in booked} == {"gw": "instrument", "gw2": "instrument"}
