"""Answering in context mode: the prompt (`prompt`), the answerer interface (`base`), the offline
extractive answerer and the model-backed one (`model`). `make_answerer` picks the campaign's."""

from __future__ import annotations

from lsrep.answer.base import Answerer, AnswerOutcome, OfflineAnswerer
from lsrep.protocol.campaign import AnswererSpec

__all__ = ["Answerer", "AnswerOutcome", "OfflineAnswerer", "make_answerer"]


def make_answerer(spec: AnswererSpec, store_path: str | None = None, refresh_before: str | None = None) -> Answerer:
    """The campaign's answerer; model calls are cached beside the store when one is given
    (entries older than `refresh_before` ignored: `--refresh-cache`)."""
    if spec.kind == "extractive":
        return OfflineAnswerer(spec)
    from lsrep.answer.model import LLMAnswerer

    return LLMAnswerer(spec, store_path=store_path, refresh_before=refresh_before)
