"""Tokenisation, normalisation and token estimates shared by the answerer, scorer and stores."""

from __future__ import annotations

import re
import string

_TOKEN = re.compile(r"[A-Za-z0-9]+")

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t don did didn doesn isn wasn weren won
    ll re ve d m o y also us let get got""".split()
)
"""A standard English stopword list (about 130 words), used for content-word tests."""


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric tokens, in order, repeats kept."""
    return _TOKEN.findall(text.lower())


def stem(token: str) -> str:
    """Fold plural and possessive endings of a lowercase token (`agencies` → `agency`, `books` → `book`)."""
    if token.isdigit() or len(token) <= 3:
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "sses", "xes", "zes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


IRREGULAR: dict[str, str] = {
    "went": "go", "gone": "go", "goes": "go", "going": "go", "made": "make", "making": "make",
    "took": "take", "taken": "take", "taking": "take", "saw": "see", "seen": "see", "got": "get",
    "gotten": "get", "bought": "buy", "ran": "run", "running": "run", "began": "begin", "begun": "begin",
    "did": "do", "done": "do", "does": "do", "had": "have", "has": "have", "having": "have",
    "met": "meet", "read": "read", "wrote": "write", "written": "write", "gave": "give", "given": "give",
    "found": "find", "felt": "feel", "left": "leave", "kept": "keep", "thought": "think", "told": "tell",
    "said": "say", "came": "come", "won": "win", "lost": "lose", "built": "build", "sent": "send",
    "spent": "spend", "taught": "teach", "brought": "bring", "caught": "catch", "drew": "draw",
    "drawn": "draw", "flew": "fly", "grew": "grow", "knew": "know", "swam": "swim", "sang": "sing",
    "sold": "sell", "paid": "pay", "held": "hold", "joined": "join", "moved": "move", "painted": "paint",
    "adopted": "adopt", "started": "start", "visited": "visit", "finished": "finish", "learned": "learn",
    "learnt": "learn", "mom": "mother", "mum": "mother", "dad": "father", "kids": "child",
    "kid": "child", "children": "child",
}
"""Irregular and common inflected forms mapped to a base form (plus a few family words)."""


def fold(token: str) -> str:
    """A lowercase token's matching form: irregular forms mapped, plural and -ing/-ed endings folded."""
    t = IRREGULAR.get(token, token)
    if len(t) > 5 and t.endswith("ing"):
        t = t[:-3]
    elif len(t) > 4 and t.endswith("ied"):
        t = t[:-3] + "y"
    elif len(t) > 4 and t.endswith("ed"):
        t = t[:-2]
    if t != token and len(t) > 2 and t[-1] == t[-2] and t[-1] not in "lsz":
        t = t[:-1]  # running, stopped
    t = stem(t)
    return t.rstrip("e") if len(t) > 3 else t


def estimate_tokens(text: str) -> int:
    """The harness's one token estimator for prompts: characters / 4, rounded up."""
    return (len(text) + 3) // 4


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation})


_ASCII_BREAKS = "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""The ASCII characters `str.split()` splits on besides the space."""


def collapse_whitespace(text: str) -> str:
    """`" ".join(text.split())`: runs of whitespace made one space, none at either end.

    A text that is already so (ASCII, single spaces only, no other whitespace, none at either end:
    most turns) is returned as it is, found by substring searches instead of splitting it into a
    list of words and joining them again (a fifth of the time on a turn of ~900 characters)."""
    if not text.isascii() or "  " in text or text[:1] == " " or text[-1:] == " ":
        return " ".join(text.split())
    for c in _ASCII_BREAKS:
        if c in text:
            return " ".join(text.split())
    return text


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, drop punctuation and articles, fold spaces."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())
