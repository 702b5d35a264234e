"""The offline answerer's matching forms of words (`keys`), shared by its modules."""

from __future__ import annotations

import re
from functools import lru_cache

from lsrep.answer.related import verbal
from lsrep.text import STOPWORDS, fold, tokens

HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")
QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how many much long often kind type sort ever "
    "likely would could might".split())
"""Words that say what is asked, not what it is about."""


@lru_cache(maxsize=1 << 16)
def keys(text: str) -> frozenset[str]:
    """Matching forms of the content words (folded; a noun made from a verb as the verb, `verbal`);
    hyphenated words also count joined ("de-stress": destress). Memoised: the same retrieved lines come
    back probe after probe."""
    joined = {fold(w.replace("-", "").lower()) for w in HYPHENATED.findall(text)}
    return frozenset(verbal(fold(t)) for t in tokens(text) if t not in STOPWORDS) | joined
