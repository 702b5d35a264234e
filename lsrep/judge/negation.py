"""What a negation denies (judge v7): its verb phrase, up to the end of its clause.

v4-v6 let a negation negate only the first content word after it, so "She never tried pottery" gave
"pottery" (the negation stopped at "tried") and "She never did pottery, camping or swimming" gave
the whole list. v7 reads a negation's **scope**: every word after a negator up to the end of its
clause, so a denied object, or a denied coordinated list, is not given.

Negators (`_NEGATOR_WORD`, found on the words as written, since a folded token misleads: "note"
folds to "not"): not, n't, never, no (so "no longer"), nor, neither, none, nothing, nobody, without,
cannot, and the apostrophe-less "dont", "didnt", "isnt", ...

A clause ends (`_STRONG`, `_SOFT`) at

- sentence or clause punctuation: . ! ? ; : ( ) a dash, a new line, and the comma after a bare
  "No," / "Not really," (an answer, not a denial of what follows);
- a word that opens a contrasting, subordinate or relative clause: but, because, although, though,
  however, whereas, instead, except, unless, rather, now ("no longer in Boston, now in Denver"),
  since, when, whenever, while, after, before, where, who, which, whose, whom, why, besides, other
  than, apart from ("not much is new other than the screenplay"; "she hasn't painted
  since the move in May": the move is said; "didn't meet the woman who runs the pottery studio":
  the studio is), "and then", and so,
  therefore, thus, hence ("the infrastructure wasn't great so lots of homes were ruined"; not
  right after a negator: "not so much");
- a comma, unless it separates the items of a coordinated list (short segments, the last joined
  by "and"/"or"/"nor": "never did pottery, camping, painting or swimming" denies all four);
  "rejections don't define her, keep grinding" is two clauses;
- a comma followed by a sentence adverb (`_ADVERBS`: usually, only, maybe, probably, sadly, ...):
  "We don't go often, usually only once or twice a year" says once or twice a year;
- a comma or "and" followed by a new subject pronoun ("She didn't like hiking, she loved pottery";
  "... and she loved pottery"). A subject pronoun right after a verb ("I don't think she went") is a
  complement clause: it stays in scope.

A negator negates nothing (`_no_scope`) when it is

- a question or its tag: followed by a subject pronoun ("don't you think", "didn't she?"; v5);
- "not only", "not just", "not merely", "not to mention", "no doubt", "no wonder", "no matter",
  "none other than": each asserts what follows;
- "nothing but X", "not X but Y": "but" ends the clause, so X (resp. Y) stays given;
- "why not ..." (a suggestion); "can't"/"couldn't" before wait, believe, stop, help, let ("can't wait
  to see your dance studio"); "nothing beats", "nothing like", "no better", "you never know";
- before a verb that presupposes what follows (`_FACTIVE`: realize, expect, imagine, dream; with
  "never" also think: "you'd never have thought you'd get a third turtle"; "I don't think she went
  camping" still denies);
- a **double negation** (`DOUBLE_NEGATIVE_VERBS`): the first content word after it is a verb of not
  doing — miss, skip, fail, stop, quit, forget, neglect, cease, hesitate, mind, regret — so "never
  missed a yoga class" gives "yoga" (she went to every one), "didn't stop painting" gives "painting";
- right before a degree word (`_DEGREE`: extremely, overly, entirely, completely, fully, totally,
  always, super, terribly, too): "somewhat, but not extremely religious" is religious, "doesn't
  always go camping" goes sometimes;
- followed, in its clause, by "until"/"till": "she didn't go camping until July" says she went.

Known limits: a negation that follows its object ("Pottery isn't something she tried") is not read;
a new clause whose subject is a name, with no comma, "but" or pronoun ("she didn't hike and Mel
swam") stays in scope; a hedge "I'm not sure she went camping" is read as a denial (it asserts
nothing: it is not credited either way).
"""

from __future__ import annotations

import re
from functools import lru_cache

from lsrep.text import STOPWORDS, fold

NEGATORS = frozenset(
    "not no never t nor neither none noth nobody without cannot dont didnt doesnt isnt wasnt arent werent hasnt "
    "havent hadnt wont cant couldnt wouldnt shouldnt".split())
"""Normalised tokens that negate what follows them in their clause ("n't" becomes the token "t")."""

_NEGATOR_WORD = re.compile(
    r"n't\b|\b(?:not|no|never|nor|neither|none|nothing|nobody|without|cannot|dont|didnt|doesnt|isnt|wasnt|"
    r"arent|werent|hasnt|havent|hadnt|wont|cant|couldnt|wouldnt|shouldnt)\b", re.IGNORECASE)
"""Negators found on the words as written: a folded token is no guide ("note" folds to "not")."""
SUBJECT_PRONOUNS = frozenset("i he she they we you it".split())

_INTENSIFIERS = frozenset(fold(w) for w in "really truly actually even ever quite always yet exactly necessarily "
                          "particularly totally much at all longer".split())
_AUXILIARIES = frozenset(fold(w) for w in "have has had be been being do does did will would can could may might "
                         "must shall should ever".split())
"""Skipped when looking for the verb a negation governs ("never have thought": thought)."""
DOUBLE_NEGATIVE_VERBS = frozenset(fold(w) for w in
                                  "miss missed skip skipped fail failed stop stopped quit forget forgot forgotten "
                                  "neglect neglected cease ceased hesitate hesitated mind minded regret "
                                  "regretted".split())
"""A negated verb of not doing asserts the doing ("never missed a yoga class": she went)."""
_ASSERTING_PHRASES = ("not only", "not just", "not merely", "not to mention", "no doubt", "no wonder", "no matter",
                      "none other than", "nothing beats", "nothing compares", "nothing like", "nothing better",
                      "no better", "never know")
"""A negator opening one of these asserts what follows ("nothing beats a good meal", "you never know")."""


@lru_cache(maxsize=1)
def _asserting() -> tuple[tuple[str, ...], ...]:
    from lsrep.judge.normalize import normal_tokens

    return tuple(normal_tokens(p) for p in _ASSERTING_PHRASES)


_CANT_ASSERT = frozenset(fold(w) for w in "wait believe stop help let".split())
"""After "can't"/"couldn't" these assert: "can't wait to see", "can't believe I won", "can't let go of"."""
_FACTIVE = frozenset(fold(w) for w in "realize realized realise realised expect expected imagine imagined dream "
                     "dreamed dreamt".split())
"""A negated verb that presupposes what follows ("didn't expect to win the tournament": she won)."""
_NEVER_FACTIVE = frozenset(fold(w) for w in "think thought".split())
"""With "never" only: "never thought I'd get a third turtle" (but "I don't think she went" denies)."""
_DEGREE = frozenset(fold(w) for w in "extremely overly entirely completely fully totally always super terribly "
                    "too".split())
"""A negator right before one of these limits the degree, it does not deny what follows."""
_CANCELLING = frozenset({"until", "till"})
"""Later in the clause, these turn a denial into a time ("didn't go camping until July": she went)."""

_STRONG = re.compile(r"[.!?;:]+(?=\s|$)|[()\[\]\n]|\s[-–—]+\s|[–—]")
"""Punctuation that ends a clause (a full stop only before a space: "3.5" and "U.S." stay whole)."""
_ADVERBS = ("usually|only|just|also|even|maybe|perhaps|probably|sometimes|often|mostly|always|actually|really|"
            "honestly|normally|generally|typically|mainly|luckily|sadly|hopefully|thankfully|fortunately|"
            "unfortunately")
"""A comma then one of these opens a new statement ("We don't go often, usually only once or twice a year")."""
_SUBJ = r"(?:i|he|she|they|we|you|it)(?:'\w+)?"
_SOFT = re.compile(
    rf",\s*(?={_SUBJ}\b|(?:then|so|which|who|now|instead|rather|still|plus|{_ADVERBS})\b)"
    rf"|\b(?=(?:but|because|although|though|however|whereas|instead|except|unless|rather|now|since|when|"
    rf"whenever|while|after|before|where|who|which|whose|whom|why|besides|other than|apart from)\b)"
    rf"|(?<!not )(?<!n't )\b(?=(?:so|therefore|thus|hence)\b)"
    rf"|\band\s+(?=(?:then|now)\b|{_SUBJ}\b)",
    re.IGNORECASE)
"""Where a new clause opens inside a sentence (the opening word stays with the new clause)."""
_COMMA = re.compile(r",(?!(?<=\d,)\d)\s*")
_JOIN = re.compile(r"\b(?:and|or|nor)\b|&", re.IGNORECASE)
LIST_ITEM_WORDS = 4
"""The most words a list item between commas has ("pottery, going camping, painting or ...")."""
_INTERJECTION = re.compile(r"\b(no|nope|not really|not at all)\s*,", re.IGNORECASE)
"""A bare "No," answers; it denies nothing after its comma ("No, she went camping")."""


def clauses(text: str) -> list[str]:
    """The text cut into clauses (`_STRONG`, `_SOFT`)."""
    out: list[str] = []
    text = _INTERJECTION.sub(r"\1.", text.replace("’", "'"))
    for part in _STRONG.split(text):
        for p in _SOFT.split(part):
            out.extend(c for c in _comma_clauses(p) if c.strip())
    return out


def _comma_clauses(text: str) -> list[str]:
    """A comma ends a clause unless it separates the items of a coordinated list: a run of short
    segments (`LIST_ITEM_WORDS` words or fewer) whose last one holds "and", "or" or "nor"
    ("never did pottery, camping, painting or swimming"); "don't define her, keep grinding" is two."""
    parts = _COMMA.split(text)
    out: list[str] = []
    i = 0
    while i < len(parts):
        k = i + 1
        while k < len(parts) and len(parts[k].split()) <= LIST_ITEM_WORDS and not _JOIN.search(parts[k]):
            k += 1
        if k < len(parts) and _JOIN.search(parts[k]):
            out.append(", ".join(parts[i:k + 1]))
            i = k + 1
        else:
            out.append(parts[i])
            i += 1
    return out


def _no_scope(tokens: tuple[str, ...], i: int) -> bool:
    """The negator at `i` asserts, asks or is cancelled instead of denying (module docstring)."""
    rest = tokens[i + 1:]
    if rest and rest[0] in SUBJECT_PRONOUNS:
        return True  # "don't you think", "isn't it lovely": a question (tag) asks, it denies nothing
    if any(tokens[i:i + len(p)] == p for p in _asserting()):
        return True
    if i > 0 and tokens[i - 1] == "why":
        return True  # "why not share the love": a suggestion
    if i > 0 and tokens[i - 1] in ("can", "could") and rest and rest[0] in _CANT_ASSERT:
        return True  # "can't wait to see your dance studio", "couldn't stop talking about pottery"
    if rest and rest[0] in _DEGREE:
        return True  # "not extremely religious": somewhat religious; the negation denies the degree only
    if _CANCELLING & set(rest):
        return True
    head = next((w for w in rest if w not in STOPWORDS and w not in NEGATORS and w not in _INTENSIFIERS
                 and w not in _AUXILIARIES), None)
    if tokens[i] == "never" and head in _NEVER_FACTIVE:
        return True  # "you would never have thought you'd get a third turtle": she got it
    return head in DOUBLE_NEGATIVE_VERBS or head in _FACTIVE


@lru_cache(maxsize=65536)
def scoped(text: str) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The text's normalised tokens, clause by clause, and for each whether a negation denies it."""
    from lsrep.judge.normalize import normal_tokens

    tokens: list[str] = []
    denied: list[bool] = []
    for clause in clauses(text):
        toks = normal_tokens(clause)
        marks = normal_tokens(_NEGATOR_WORD.sub(" zzneg ", clause))
        if len(marks) == len(toks):
            negators = {i for i, m in enumerate(marks) if m == "zzneg"}
        else:  # the marked text tokenises otherwise (never seen): read the normalised tokens
            negators = {i for i, t in enumerate(toks) if t in NEGATORS}
        flags = [False] * len(toks)
        for i in sorted(negators):
            if not _no_scope(toks, i):
                for j in range(i + 1, len(toks)):
                    flags[j] = True
                break  # the rest of the clause is denied; a later negator in it changes nothing
        tokens.extend(toks)
        denied.extend(flags)
    return tuple(tokens), tuple(denied)


def span_denied(text: str, span: tuple[str, ...]) -> bool | None:
    """Every occurrence of the token span in the text lies in a negation's scope (it is denied);
    None when the span does not occur in the clause-by-clause tokens (the caller keeps its reading)."""
    tokens, denied = scoped(text)
    n = len(span)
    starts = [i for i in range(len(tokens) - n + 1) if tokens[i:i + n] == span]
    if not starts:
        return None
    return all(denied[i] for i in starts)


def denied_words(text: str, words: set[str]) -> set[str]:
    """The words (of `words`) every occurrence of which in the text lies in a negation's scope."""
    tokens, denied = scoped(text)
    out = set()
    for w in words:
        where = [k for k, t in enumerate(tokens) if t == w]
        if where and all(denied[k] for k in where):
            out.add(w)
    return out


def denied_at(text: str, start: int, end: int) -> bool:
    """The words text[start:end] (a date the answer names) lie in a negation's scope, read on the text
    up to there (a scope runs forward: what follows cannot open one); the date's own commas ("May 7th,
    2023") end no clause."""
    _, denied = scoped(text[:start] + text[start:end].replace(",", " "))
    return bool(denied) and denied[-1]
