"""The OpenAI-compatible model layer: endpoint specs, the client, cache, prompts, judges.

Everything that talks to a language model or an embeddings endpoint goes
through :class:`LLMClient`, which returns a :class:`CallRecord` for every call.
"""

from lsrep.llm.agreement import AgreementResult, cohen_kappa, pairwise_agreement, percent_agreement
from lsrep.llm.answerer import ContextAnswer, ContextAnswerer, render_answer_messages
from lsrep.llm.cache import ResponseCache, request_key
from lsrep.llm.client import LLMClient, SystemLanguageModel
from lsrep.llm.config import EndpointSpec, MissingApiKey, OverflowPolicy, Purpose
from lsrep.llm.context import BlockFit, estimate_prompt_tokens, fit_blocks, truncate_messages
from lsrep.llm.embedder import EmbedderUnavailable, MiniLMEmbedder, OpenAIEmbedder
from lsrep.llm.judges import (
    EvolvingReferenceJudge,
    JudgeError,
    Judgement,
    LongMemEvalJudge,
    MultiPassJudge,
    PassLabel,
)
from lsrep.llm.limits import ConcurrencyLimit, FileLockLimit, ThreadLimit
from lsrep.llm.prompts import TEMPLATES, PromptTemplate
from lsrep.llm.records import CallRecord, ChatRequest, LLMCallError, Usage, UsageLedger

__all__ = [
    "AgreementResult", "BlockFit", "CallRecord", "ChatRequest", "ConcurrencyLimit",
    "ContextAnswer", "ContextAnswerer", "EmbedderUnavailable", "EndpointSpec",
    "EvolvingReferenceJudge", "FileLockLimit", "JudgeError", "Judgement", "LLMCallError",
    "LLMClient", "LongMemEvalJudge", "MiniLMEmbedder", "MissingApiKey", "MultiPassJudge",
    "OpenAIEmbedder", "OverflowPolicy", "PassLabel", "PromptTemplate", "Purpose",
    "ResponseCache", "SystemLanguageModel", "TEMPLATES", "ThreadLimit", "Usage", "UsageLedger",
    "cohen_kappa", "estimate_prompt_tokens", "fit_blocks", "pairwise_agreement",
    "percent_agreement", "render_answer_messages", "request_key", "truncate_messages",
]
