"""The offline answerer's rules (`lsrep.answer.extractive`): the best-matching evidence sentence, then the short
span the question asks for.

Deterministic and offline; it reads only what a model would read in the answer
prompt (the question, the simulated now, the fragments' text), never the
references. Its rules, in order (also `RULES`, which every manifest records):

1. **Sentences.** Every fragment line is split into sentences. A line opening with
   a timestamp (``[2023-05-08 13:56] Caroline (user): ...`` as adapters render
   turns, or ``[2026-03-02 Maya] ...``) dates its sentences and names the speaker; a
   line without one takes the fragment's last date, else the simulated now. A typed
   span missing from the best sentence is looked for in the rest of its line.
2. **Best sentence.** Score = the IDF-weighted content words (plural, -ing/-ed and
   common irregular forms folded) the sentence shares with the question, the line's
   speaker counting as a word of the sentence; plus a small bonus when the sentence
   holds the kind of span asked for. A question word is also shared through a related
   word (`lsrep.answer.related`: "live" by "home", "work" by "job"), at 0.7 of its
   weight. Ties go to the earliest. A sentence answers only if its line shares
   ``min(min_overlap, question content words)`` words (the speaker's name counting as
   one, as before; for who / where / which-company questions a sentence naming such a
   thing counts one more) and it shares a word other than a speaker's name itself.
   None does: abstain ("I don't know."), unless exactly one line shares any word with
   the question (unambiguous evidence): then the sentence of that line sharing the most
   (the fullest on a tie) answers — a long turn states its fact in one sentence of many.
3. **Typed span.** when / what date / which year: a date in the sentence, relative
   expressions resolved against the sentence's date ("yesterday" said on 8 May 2023
   is "7 May 2023", "last week" is "the week before 9 June 2023", "next month" is
   "June 2023", "on the 15th" is that day of the month, "I've had them for 3 years"
   is 3 years before); none in the sentence or its line: the sentence's own date.
   How long ago: the "N years ago" phrase. How many / how much: the number (words
   or digits) with the word after it; how often: the frequency ("twice a week"). How long: the duration phrase. Who: the
   capitalised names the question does not already contain (not a greeted listener:
   "Hey John"). Where: the place after in/at/to/from (else a capitalised name). Which
   company / school / team: the capitalised name after at/for/with/join/from. Why: the
   sentence from its causal marker on ("because", "'cause", "so", "to ..."). Yes/no
   questions: "Yes" or "No" (a negation in the sentence) and the clause; a would / could
   / might question whose line states fewer than half of what it asks about: "Likely
   no". Otherwise, or when the typed span is missing: the shortest clause of the
   sentence that holds its shared words (dashes split clauses, not sentences), with the
   next clause when it only repeats the question (the one before, when it is the last);
   the clause is followed by the next sentence of its line when it adds fewer than five
   words of its own or the next sentence goes on about the same thing (opens with
   it/she/he/they/this/that/these/those/we/our); a thin last sentence is preceded by the
   one before it when that one says something. A clause pointing at a shared image
   ("they made this!", followed by "Here's ...") takes the image's caption. A sentence
   that asks ("?") scores half. First-person words of a span are put in the speaker's
   name ("my daughter" said by Melanie: "Melanie's daughter").
4. **Several items.** A list question ("What activities has...", "Which cities...",
   "Where has X camped?", "What has X painted?") answers with one span (typed, else the
   clause) from the best sentence of every line scoring at least a third of the best
   (at most six, joined by "; "). A list question naming a category ("Where has X been",
   "What movies", "What activities": `lsrep.answer.categories`) takes the instances a sentence
   names (a place, a quoted or capitalised title, an activity) even when the sentence shares only
   the speaker's name with the question.
5. **Asking and counting.** A best sentence that asks ("Is that your third one?") gives way to
   the reply to it (the next line, by another speaker), or, with no reply in context and the
   question addressed to the listener, to the nearest stating sentence of its own line
   (`lsrep.answer.asking`). "How many (times)" with no number for the counted noun in the best
   sentence: the number of distinct days whose lines state it (`lsrep.answer.counting`).
6. **Choices and inferences.** "A or B?" is answered by the alternative the context supports more
   (`lsrep.answer.choice`), never yes/no. A would-question whose line does not state what it
   asks: "Likely yes" when it asks about liking and the line likes something, else "Likely no"
   (`lsrep.answer.polarity`). Of several dates in a sentence, the one nearest a question word.
   The noun a what/which question asks about ("what kind of event") weighs double; a clause
   restating the question ("I wanted to feel closer to my faith") is preceded by the sentence
   before it, which says what was done, unless the next sentence goes on ("It ...").
7. **v5: lists of typed items, more dates.** Plural place nouns ("which cities / countries / areas")
   ask for places; "what are the names of ...", "what are X's pets' names", "what people ..." for
   names, and they, "what are the <plural> that ...", "in which cities ..." and "artists/bands" are list
   questions. A list of places or names gathers the typed item of every line scoring at least a third of
   the best (`lsrep.answer.lists.LIST_SHARE`, as every list), when the best sentence holds such an item
   at all; a line sharing nothing with the question but a speaker's name gives no name (v6: on a whole
   history every line of that speaker would). A greeted or addressed name ("Wow John", "Woohoo, Nate!")
   and calendar words ("Friday", "in July") are not names or places; "Luna and Oliver!" opening a
   sentence is. Relative dates the shared resolver leaves open are resolved here
   (`lsrep.answer.when`: "a couple weeks ago", "two years back", "over the weekend", "the previous
   week", a bare weekday, a month without a year). "How long has X ...?" answered "seven years" on a
   2023 line adds when it began ("seven years, since 2016"). A noun-phrase clause ("- a gift from my
   grandma") takes the clause it describes, and a clause ending on the asked-about noun takes the
   noun phrase after its dash ("a new project - a thriller set in ..."); a clause pointing at a
   shared image takes the caption even when the next sentence joins it, and a caption is never the
   "next sentence" of its turn. "How did X feel / what emotions / how does X describe": when the
   best sentence holds no word of feeling (for "describe", no everyday praise either), the nearest
   sentence of its turn that does answers (`lsrep.answer.feeling`). A why-question whose best sentence
   points back ("It reminded me why ...") is answered by the sentence before it. A sentence sharing
   nothing with the question, of at most 25 words, is taken whole (not its longest clause), as is the
   short sentence joined to a thin clause. A nickname is the greeted name ("Hey Jo"). "Besides X":
   of clauses sharing as much, the one without X. Why: a sentence joined by a consequence "so"
   ("I love dance, so I ...") is the reason whole (an intensifier, "so sad", marks nothing). How
   many: an ordinal of the counted noun ("my fourth tournament") counts at least that many. "Which
   day / weekend / season" asks for a date. A caption in an answer is what the image shows ("a photo
   of ..."), without "shares an image". "What do X and Y both / have in common / share": the sentence
   of either holding most of the words said in lines of both. A common place keeps its "of" phrase
   ("the design department of a big firm"). Dates: "about a year ago" said in August 2023 is "August
   2022" (the month said, so many years back; a year alone is coarser than what was said); a when-question
   whose best turn names no date takes a date the same speaker said that day in a sentence sharing a
   word of the question, before the turn's own date.
8. **v6: safe lists, time between events, word forms.** v5's gathering of names and places from every line
   down to a quarter of the best is dropped: on a whole history it collects whatever the subject ever
   named. A list question's words after its verb that are not names and not words any item of its kind
   takes ("visit", "seen", "done", "in order": `GENERIC_LIST_WORDS` in `lsrep.answer.extractive`) must be in
   the part of a line (a sentence, or a ';'-separated fact) that gives an item, or in the part a pronoun
   there points back to ("Pip and Tofu! They are the sweetest pets."); "In which cities ..." is a list
   question. "How many weeks passed between ...", "how long did it take ...": when the best line states
   no length itself, the distance between the event dates of the two best lines dated differently, in the
   unit asked, else the coarsest unit of at least 2 (`lsrep.answer.elapsed`). A noun made from a verb
   matches the verb ("rejection"/"rejected", "education"/"educated", "improvement"/"improved"; stems long
   enough that "station" is not "state"). A causal marker whose clause says only what the question asks
   ("I'm drawn to turtles" for "why does X like turtles") marks no reason; the next marker is tried. A
   caption earns no novelty bonus over the speaker's own sentence. A past when-question ("When did X
   start ...?") is not dated by a date in another sentence of the line that was still ahead when said
   ("I'm also hosting a competition next month"), unless it asks about a plan. "A while" is a length of
   time, not a clause boundary.
9. **v7: more of the turn, and names across turns.** A clause adding fewer than ten content words of its own
   (`THIN_WORDS`, five before) is joined by the next sentence of its turn (the one before, when it is the
   last): a speaker rarely says the fact in the sentence that sets it up ("Tomorrow's gonna be an awesome
   night ... I want to savor all the good vibes"). A clause adding fewer than four words of its own
   (`THIN_CLAUSE`, two before) takes the next clause of its sentence. A "sentence" with no word in it (a
   memory's "(2026-03-02)" stamp) and a caption are never the next sentence. A possessive phrase of the best
   sentence ("my old area", "my home country") that the same speaker named in another turn by an appositive
   ("my old area, West County"; "my home country, Sweden") is followed by that name, so the typed span rules
   find it (`lsrep.answer.bridge`: only "my/our" phrases of the best sentence's own speaker, held word for
   word, never a speaker's name, a weekday or a month).
10. **v8: list items from every line, one by one.** An activity is also named by the class, lesson, course,
   session or workshop it is the subject of ("a pottery class", "a weekend yoga class": never "first",
   "online", "weekend" and the like), by an -ing trip ("a mountaineering trip"; not "a road trip", not the
   listener's "your camping trip"), with the noun before an -ing word after a doing verb ("I've done weight
   training"), after "besides" ("Besides writing, I also enjoy ..."), by a sentence that is only one or two
   -ing words ("Writing and hanging with friends!"), and every item of a series after like / such as /
   including / enjoy / love holds one when one of its items is an activity ("like yoga, kickboxing, and
   circuit training"; "cats, dogs, and birds" is none); "What are X's hobbies?" is an activity question. An
   activity or names list gives each activity or name once, joined by ", " ("weight training, yoga,
   kickboxing, circuit training", not the per-line pieces joined by "; "). "Partake", "participate" and "engage" join
   `GENERIC_LIST_WORDS`: they tell no item from another. A sentence that only names people or animals
   ("Luna and Oliver!"), said by a speaker the question names, is the reply to a question for their names:
   in a names list it counts as sharing the question's words and gives its names even where it repeats
   none of them (someone else's roll, "Rex and Fido!" said by Ben, never).
"""

from __future__ import annotations

RULES = ("best IDF-weighted sentence (speaker counts, -ing/-ed/plural folded, related words at 0.7); typed span "
         "from it or its line: "
         "date (relative expressions resolved against the turn date) / ago / count / duration / person / place / org / "
         "reason / yes-no (would-questions 'Likely no' unless stated), else the shortest clause holding the shared "
         "words, joined by the next sentence when thin, an image caption when pointed at; list questions join one "
         "span per matching line (up to 6); asking sentences score half; first person put in the speaker's name; "
         "abstain below min_overlap shared words; category lists (places, titles, activities) take instances; an "
         "asking best sentence gives way to its reply; how-many without a number counts the days stating it; "
         "'A or B' answered by the better-supported alternative; unstated would-questions inferred (liking: likely "
         "yes); of several dates, the one nearest the question's words; the asked-about noun weighs double; a clause "
         "restating the question takes the sentence before; v5: plural place nouns and name lists typed, list questions "
         "gather typed places / names from lines scoring a third of the best (not lines sharing only a name), addressed names and calendar words are not names, "
         "more relative dates (couple weeks ago, N back, over the weekend, previous week, bare weekday, month without "
         "year), 'how long has' adds since when, noun-phrase clauses take what they describe, deictic clauses take "
         "the image caption, a dash's noun phrase completes a clause ending on the asked-about noun, a caption is not the "
         "next sentence; feeling questions take the nearest sentence of the turn holding a feeling word; a why-sentence "
         "pointing back takes the sentence before; short sentences whole; nicknames are greeted names; 'besides X' "
         "avoids X; a consequence 'so' gives the whole sentence as the reason; ordinals count at least that many; which day/weekend/season is a date question; captions without 'shares an "
         "image'; 'both / in common' answered by the sentence holding most words said by both; common places keep "
         "their 'of' phrase; N years ago keeps the month; an undated best turn takes the date its speaker said that "
         "day in a sentence sharing the question's words; v6: no gathering from lines sharing only a name, a list item "
         "only from the part of a line holding the list question's own words (or the part its pronoun points to), "
         "'in which ...' lists, time between two events by date arithmetic unless a length is stated, nouns made "
         "from verbs match the verb, a causal clause echoing the question is no reason, captions earn no novelty "
         "bonus, a past when-question is not dated by another sentence's future date unless it asks about a plan, "
         "'a while' is no clause boundary; v7: a clause saying fewer than ten words of its own is joined by the next "
         "sentence of its turn and one saying fewer than four by the next clause of its sentence (a wordless "
         "'(date)' sentence or a caption never), a 'my X' phrase the same speaker named elsewhere ('my old area, "
         "West County') takes that name; v8: activities named by a class / lesson / -ing trip, 'done weight training', "
         "'besides X-ing', a bare '-ing and -ing!' reply and every item of a series holding one, each activity or name "
         "once joined by ', '; partake / participate / engage generic list words; a sentence of names only, said by "
         "the speaker asked about, answers a names list")
