"""Words a person reads as the same word, for the deterministic judge (judge v5).

Conversation says "biz", "pics", "fave", "tourney" where a reference says "business", "photos",
"favorite", "tournament"; a reference says "job loss" where the answer says "lost her job". Each entry
maps a word to the plain word it stands for, before the judge's usual folding (`lsrep.text.fold`):

- informal or clipped forms of one word ("biz", "pic", "fam", "fave", "tourney", "bday", "convo", "comfy",
  "info", "vid", "grad", "uni", "fridge", "bike", "pup");
- spelling variants ("favourite");
- nouns made from a verb irregularly, read as the verb ("loss"/"lose", "death"/"die", "choice"/"choose",
  "growth"/"grow", "belief"/"believe", "failure"/"fail", "imagination"/"imagine", "marriage"/"marry").

Only words with one everyday sense are listed: "folks" (people, or one's parents) and "sale" ("on
sale" is no selling) are not. Nothing here names a particular conversation's words.
"""

from __future__ import annotations

SAME_WORD: dict[str, str] = {
    # informal / clipped
    "biz": "business", "pic": "photo", "pics": "photo", "picture": "photo", "pictures": "photo",
    "photograph": "photo", "photographs": "photo", "photos": "photo", "fam": "family", "kiddo": "kid",
    "kiddos": "kid", "fave": "favorite", "faves": "favorite", "fav": "favorite", "favs": "favorite",
    "bday": "birthday", "tourney": "tournament", "tourneys": "tournament", "convo": "conversation",
    "convos": "conversation", "vacay": "vacation", "grandma": "grandmother", "grandpa": "grandfather",
    "comfy": "comfortable", "info": "information", "vid": "video", "vids": "video", "veggies": "vegetables",
    "grad": "graduate", "uni": "university", "prof": "professor", "fridge": "refrigerator", "bike": "bicycle",
    "bikes": "bicycle", "mic": "microphone", "ppl": "people", "pup": "puppy", "pups": "puppy",
    "auntie": "aunt", "aunty": "aunt", "hubby": "husband",
    # spelling
    "favourite": "favorite", "favourites": "favorite", "colour": "color", "colours": "color",
    # irregular nouns of verbs
    "loss": "lose", "losses": "lose", "losing": "lose", "death": "die", "died": "die", "dying": "die",
    "choice": "choose", "choices": "choose", "chose": "choose", "chosen": "choose", "growth": "grow",
    "grown": "grow", "belief": "believe", "beliefs": "believe", "failure": "fail", "failures": "fail",
    "imagination": "imagine", "imagined": "imagine", "imagining": "imagine", "marriage": "marry",
    "married": "marry",
}


def same_word(word: str) -> str:
    """The plain word a lowercase word stands for (itself when it is not listed)."""
    return SAME_WORD.get(word, word)
