"""Question kinds for the offline answerer: which span a question asks for (`question_type`)."""

from __future__ import annotations

import re


def question_type(question: str) -> str:
    """`ago`, `date`, `count`, `duration`, `person`, `org`, `reason`, `place` or `other`."""
    q = question.lower().strip()
    if re.search(r"\bhow long ago\b", q):
        return "ago"
    if re.search(r"^(?:\W*)(?:when|on what date|what date|what day|what time|which year|what year|which month|"
                 r"what month|which week|what week|in what year|in which year|in what month|in which month|"
                 r"since when|(?:in |during |on |at )?(?:which|what) (?:day|weekend|season|decade|time of (?:the )?year))\b|"
                 r"\bwhen did\b|\bwhen is\b|"
                 r"\bwhen was\b|\bwhat date\b", q):
        return "date"
    if re.search(r"\bhow (?:many|much)\b|\bwhat number\b|\bhow often\b", q):
        return "count"
    if re.search(r"\bhow long\b|\bfor how long\b|\bwhat duration\b", q):
        return "duration"
    if re.search(r"^(?:\W*)(?:who|whom|whose|with whom)\b|\bwhat(?:'s| is| are| were) the names?\b|\bnames? of\b|"
                 r"^\W*(?:what|which) (?:people|persons)\b|'s? names\W*$|\bnick ?names?\b|^\W*what does \w+ call\b", q):
        return "person"
    if re.search(r"^(?:\W*)why\b|\bwhat (?:is|was|are|were) (?:\w+'s |the |her |his |their )?reasons?\b", q):
        return "reason"
    if re.search(r"\b(?:what|which) (?:company|employer|firm|organi[sz]ation|business|school|university|college|"
                 r"team|club|band|shop|store)\b", q):
        return "org"
    if re.search(r"^(?:\W*)where\b|\b(?:what|which) (?:[\w.]+ )?(?:city|cities|countr(?:y|ies)|towns?|places?|states?|"
                 r"restaurants?|parks?|areas?|regions?|locations?|destinations?)\b", q):
        return "place"
    return "other"
