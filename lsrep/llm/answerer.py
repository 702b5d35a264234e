"""Context mode: the harness's answerer answers from the context a system returned.

Every system is answered by the same model and prompt (`ANSWER_CONTEXT`). When
the prompt would exceed the endpoint's window, the spec's overflow policy
decides: `fail` sends nothing and records `prompt_over_context_window`;
`truncate_oldest` drops the oldest context blocks and records how many tokens
went. Either way the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from lsrep.llm.client import LLMClient
from lsrep.llm.context import BlockFit, fit_blocks
from lsrep.llm.prompts import ANSWER_CONTEXT
from lsrep.llm.records import CallRecord

NO_CONTEXT = "(no context was returned)"


def render_answer_messages(
    question: str, now: str, blocks: Sequence[str]
) -> list[dict[str, str]]:
    """The answer prompt for a question, the simulated now and context blocks in order."""
    context = "\n\n".join(f"[{i}] {b}" for i, b in enumerate(blocks, start=1)) or NO_CONTEXT
    return ANSWER_CONTEXT.render(question=question, now=now, context=context)


class ContextAnswer(BaseModel):
    """An answer (or a failure) with the prompt accounting the observation stores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | None
    """The answer, or None when the call failed (see `record`)."""
    record: CallRecord
    """The model call."""
    fit: BlockFit
    """Which context blocks reached the prompt, and what was dropped."""
    prompt_digest: str
    """Digest of the answer template."""


class ContextAnswerer:
    """Answers probe questions from returned context through one client (purpose `answer`)."""

    template = ANSWER_CONTEXT

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    def answer(
        self, question: str, now: str, blocks: Sequence[str], *, repetition: int = 0
    ) -> ContextAnswer:
        """Answer from `blocks` (oldest first; the oldest go first under `truncate_oldest`)."""
        spec = self.client.spec
        budget = spec.prompt_budget if spec.overflow == "truncate_oldest" else None

        def render(kept: Sequence[str]) -> list[dict[str, str]]:
            return render_answer_messages(question, now, kept)

        fit = fit_blocks(blocks, render, budget)
        # Under `fail` (budget None here) the client refuses an oversized prompt itself.
        text, record = self.client.complete(
            render(fit.kept), purpose="answer", repetition=repetition,
            prompt_digest=self.template.digest,
        )
        return ContextAnswer(text=text, record=record, fit=fit, prompt_digest=self.template.digest)
