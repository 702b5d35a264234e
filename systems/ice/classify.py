"""The rule-based pre-classifier: topic, intent and context reliance (seed-systems 5.3).

Context reliance follows ordered density rules, first match wins; the reference rule forces
long-term memory. Intent and topic are keyword rules (chosen). The long-conversation bias
upgrades `short_term` to `long_term_memory` when the query names a known Codex entity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .text import words

# The Hermes host's trivial-prompt test, restated: acknowledgements, greetings, slash commands.
_TRIVIAL = re.compile(
    r"^\s*(?:/\S.*|(?:ok(?:ay)?|k|thanks?(?: you)?|thx|ty|hi|hello|hey|yes|no|yep|nope|sure|cool"
    r"|great|nice|bye|good (?:morning|night|evening|afternoon))[\s!.?]*)$", re.I)
_REFERENCE = re.compile(
    r"\b(?:remember when|remember that|do you remember|last time|did i (?:tell|mention|say)"
    r"|what did i (?:say|tell you|mention)|as i (?:mentioned|said|told you)|i told you"
    r"|i mentioned|that i told you|we (?:talked|discussed|spoke) about)\b", re.I)
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd"})
_MEMORY_WORDS = frozenset({"remember", "recall", "mentioned", "told", "said", "before",
                           "previously", "earlier", "last", "ago"})

_INTENT_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("procedural", re.compile(
        r"\b(?:how (?:do|should|would) (?:i|you) usually|how should you|how do you usually"
        r"|format|formatting|style|instructions?|rules? (?:for|about) you|how do i usually"
        r"|should you (?:always|never))\b", re.I)),
    ("temporal", re.compile(
        r"\b(?:when (?:did|was|were|is|will)|what (?:date|day|year|month|time)|how long"
        r"|before|after|used to|previously|as of|ago|since when|first time|in which year"
        r"|how many (?:days|weeks|months|years))\b", re.I)),
    ("preference", re.compile(
        r"\b(?:favou?rite|prefer(?:ence|s)?|like|love|enjoy|hate|dislike|fond of)\b", re.I)),
    ("task", re.compile(
        r"\b(?:write|draft|implement|code|debug|fix|refactor|translate|compose|generate"
        r"|function|script|email to)\b", re.I)),
]
_TOPICS: list[tuple[str, frozenset[str]]] = [
    ("code", frozenset("code python function bug script api database sql program compile "
                       "library deploy server git".split())),
    ("health", frozenset("health doctor sick pain medicine workout run running sleep diet "
                         "allergy allergic hospital".split())),
    ("work", frozenset("work job office boss colleague meeting project career salary client "
                       "manager".split())),
    ("personal", frozenset("family friend partner wife husband sister brother mom dad dog cat "
                           "home live moved birthday hobby book movie travel trip".split())),
]


@dataclass(frozen=True)
class Classification:
    """The classifier's outputs and the rules that produced them."""

    topic: str
    intent: str
    reliance: str
    """`none`, `short_term` or `long_term_memory`."""
    rule: str
    """The reliance rule that fired."""
    intent_rule: str


def classify_topic(text: str) -> str:
    toks = set(words(text))
    best, best_n = "general", 0
    for topic, vocab in _TOPICS:
        n = len(toks & vocab)
        if n > best_n:
            best, best_n = topic, n
    return best


def classify(text: str, *, conversation_turns: int, long_conversation_turns: int,
             names_known_entity: Callable[[str], bool]) -> Classification:
    """Classify a prompt. `names_known_entity` asks the Codex (called only when needed)."""
    topic = classify_topic(text)
    intent, intent_rule = "recall_fact", "default"
    trivial = bool(_TRIVIAL.match(text))
    if trivial:
        intent, intent_rule = "chit_chat", "trivial"
    else:
        for name, pattern in _INTENT_RULES:
            if pattern.search(text):
                intent, intent_rule = name, name
                break
    toks = set(words(text))
    if trivial:
        reliance, rule = "none", "trivial"
    elif _REFERENCE.search(text):
        reliance, rule = "long_term_memory", "reference"
    elif toks & _FIRST_PERSON and (text.rstrip().endswith("?") or toks & _MEMORY_WORDS):
        reliance, rule = "long_term_memory", "personal_question"
    elif toks & _MEMORY_WORDS:
        reliance, rule = "long_term_memory", "memory_words"
    else:
        reliance, rule = "short_term", "default"
    if (reliance == "short_term" and conversation_turns > long_conversation_turns
            and names_known_entity(text)):
        reliance, rule = "long_term_memory", "long_conversation_bias"
    return Classification(topic=topic, intent=intent, reliance=reliance, rule=rule,
                          intent_rule=intent_rule)
