"""Would-questions for the offline answerer: "Would X enjoy ...?" when the context does not say so outright.

When the best line states most of what a would / could / might question asks about, the answer
is "Yes" or "No" by its negation (`lsrep.answer.extractive`). When it does not, the question asks
for an inference, and two plain readings of the line decide it here:

- a counterfactual that takes something away ("... if she hadn't received support?") is "Likely no";
- a question about liking or wanting ("Would X enjoy ...", "be interested in ...") whose line says,
  without negation, that the person likes something ("I'm a fan of classical music") is "Likely yes";
- anything else the line does not state is "Likely no".
"""

from __future__ import annotations

import re

_COUNTERFACTUAL = re.compile(r"\bif\b.*\b(?:hadn'?t|had not|didn'?t|did not|wasn'?t|was not|weren'?t|were not|never|"
                             r"no longer|without)\b", re.I)
_LIKING = re.compile(r"\b(?:enjoy|like|love|interested|into|fan|appreciate|prefer)\b", re.I)
_POSITIVE = re.compile(r"\b(?:love[sd]?|loving|fan|enjoy(?:s|ed|ing)?|like[sd]?|favou?rite|passionate|into|"
                       r"interested|excited|amazing|awesome)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no|nothing|hate[sd]?|dislike[sd]?)\b|n't\b", re.I)


def unstated(question: str, line: str) -> str:
    """"Likely yes" or "Likely no" for a would-question whose line does not state what it asks about."""
    if _COUNTERFACTUAL.search(question):
        return "Likely no"
    if _LIKING.search(question) and _POSITIVE.search(line) and not _NEGATION.search(line):
        return "Likely yes"
    return "Likely no"
