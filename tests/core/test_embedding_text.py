"""One embedding-text policy per campaign, applied by vector-RAG and ICE alike, in the manifest."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from lsrep.adapters.formatting import embedding_text
from lsrep.adapters.ice import IceAdapter
from lsrep.adapters.ice import Options as IceOptions
from lsrep.adapters.vector_rag import VectorRagAdapter, VectorRagOptions
from lsrep.reports.load import load_run

from lsrep.contract import AdapterSetup, ReplayTurn
from lsrep.embed.hashing import HashingEmbedder
from lsrep.runner import run_campaign
from lsrep.store import RunStore

T0 = datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
TURN = ReplayTurn(turn_id="t0", session_id="s0", conversation_id="c", index=0, timestamp=T0, role="user",
                  speaker="Ana", content="I adopted  a grey cat named Pixel.")


def test_policies_render_content_speaker_and_date():
    assert embedding_text(TURN, "content") == "I adopted a grey cat named Pixel."
    assert embedding_text(TURN, "speaker") == "Ana: I adopted a grey cat named Pixel."
    assert embedding_text(TURN, "date-speaker") == "[2026-03-02 09:15] Ana (user): I adopted a grey cat named Pixel."
    with pytest.raises(ValueError, match="unknown embedding-text policy 'raw'"):
        embedding_text(TURN, "raw")


def _vectors(policy: str, tmp_path) -> tuple[np.ndarray, np.ndarray]:
    embedder = HashingEmbedder()
    rag = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(), embedder=embedder, embedding_text=policy))
    rag.reset(conversation_id="c", now=T0)
    rag.ingest(TURN, now=T0)
    ice = IceAdapter(AdapterSetup(options=IceOptions(), embedder=embedder, embedding_text=policy,
                                  state_dir=tmp_path / policy))
    ice.reset(conversation_id="c", now=T0)
    ice.ingest(TURN, now=T0)
    ids, matrix = ice.system.db.episodic._vectors()
    assert ids == ["t0"]
    vectors = np.asarray(rag.memory._rows[0]), np.asarray(matrix[0])
    ice.close()
    return vectors


@pytest.mark.parametrize("policy", ["content", "speaker", "date-speaker"])
def test_vector_rag_and_ice_embed_the_same_text(policy, tmp_path):
    rag, ice = _vectors(policy, tmp_path)
    assert float(rag @ ice) == pytest.approx(1.0)
    expected = np.asarray(HashingEmbedder().embed([embedding_text(TURN, policy)]))[0]
    assert float(rag @ expected) == pytest.approx(1.0)


def test_the_policy_changes_what_is_embedded(tmp_path):
    content, _ = _vectors("content", tmp_path)
    dated, _ = _vectors("date-speaker", tmp_path)
    assert float(content @ dated) < 0.95


def test_the_manifest_records_the_policy(tmp_path):
    turns = [{"turn_id": "t0", "session_id": "s0", "timestamp": T0.isoformat(), "role": "user",
              "content": "I live in Lisbon near the river."}]
    probes = [{"probe_id": "city", "question": "Where do I live?", "kind": "current",
               "references": [{"answer": "Lisbon", "valid_from": "t0", "evidence": ["t0"]}]}]
    (tmp_path / "t.jsonl").write_text(json.dumps(turns[0]) + "\n")
    (tmp_path / "p.jsonl").write_text(json.dumps(probes[0]) + "\n")
    (tmp_path / "c.toml").write_text('''name = "matched"
store = "s.sqlite"
[[trajectories]]
id = "one"
trajectory = "t.jsonl"
probes = "p.jsonl"
[[conditions]]
name = "vector-rag"
system = "vector-rag"
[embedder]
text = "speaker"
''')
    out = run_campaign(tmp_path / "c.toml")
    manifest = load_run(RunStore(out.store_path), out.run_id, "deterministic").manifest
    assert manifest["embedding_text"] == "speaker"
    assert manifest["campaign"]["embedder"]["text"] == "speaker"
