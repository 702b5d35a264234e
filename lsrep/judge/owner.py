"""A reference's possessive pronoun given by the owner's name, or left out (judge v5).

"for his business" is given by "for Jon's biz" and by "for the business"; "get her a stuffed
animal" by "get Joanna a stuffed animal". The judge already drops a LEADING pronoun ("her mother"
given by "Maria's mom"); this reads a possessive or object pronoun anywhere in the reference as
"this person": the answer may put a name there (a word that is no pronoun) or nothing. Another
person's pronoun is not given: "his mother" does not give "her mother", "their house" not "his house".
"""

from __future__ import annotations

OWNER_PRONOUNS = frozenset({"his", "her", "their", "its", "my", "our", "your", "him", "them", "me", "us"})
THIRD_PERSON = frozenset({"his", "her", "their", "its"})
PRONOUNS = OWNER_PRONOUNS | {"he", "she", "they", "it", "i", "you", "we", "hers", "theirs", "mine", "ours", "yours",
                              "himself", "herself", "themselves", "myself", "ourselves", "yourself", "itself"}


def owner_span(answer: tuple[str, ...], reference: tuple[str, ...]) -> bool:
    """The reference tokens occur in order in `answer`, each pronoun of `OWNER_PRONOUNS` in the
    reference matched by itself, by one non-pronoun word (a name), or by nothing — never by another
    pronoun, nor skipped right after one."""
    if not any(t in OWNER_PRONOUNS for t in reference) or all(t in OWNER_PRONOUNS for t in reference):
        return False

    def match(i: int, j: int) -> bool:
        if j == len(reference):
            return True
        r = reference[j]
        if r in OWNER_PRONOUNS:
            if i < len(answer) and answer[i] == r and match(i + 1, j + 1):
                return True
            if i < len(answer) and answer[i] not in PRONOUNS and match(i + 1, j + 1):
                return True  # a name where the pronoun was
            return (i == 0 or answer[i - 1] not in PRONOUNS) and (i == len(answer) or answer[i] not in PRONOUNS) \
                and match(i, j + 1)
        return i < len(answer) and answer[i] == r and match(i + 1, j + 1)

    return any(match(i, 0) for i in range(len(answer)))


def other_owner(answer: tuple[str, ...], span: tuple[str, ...], pronoun: str) -> bool:
    """Every occurrence of `span` in the answer follows a third-person possessive other than `pronoun`, the
    reference's own leading one ("his brother" for "her brother": another person's brother). "your" and
    "my" are the conversation's own view (Gina telling Jon "your positivity" gives "his positivity")."""
    n = len(span)
    starts = [i for i in range(len(answer) - n + 1) if answer[i:i + n] == span]
    return bool(starts) and all(i > 0 and answer[i - 1] in THIRD_PERSON and answer[i - 1] != pronoun
                                for i in starts)
