"""ICE's retrieval legs pinned by exact outputs and events, on real stores and hand-built contexts:
leg eligibility (switch, reliance, intent weight, store content) and its reporting, the idle
reasons, each leg's ranking (episodic vector/lexical, graph traversal and MERA, entity contexts,
procedural, document, summary), and access reinforcement / decay bookkeeping of the stores
(scripts/mutation/ice-legs.toml, scripts/mutation/ice-rankers.toml)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from lsrep.systems.ice.classify import Classification
from lsrep.systems.ice.codex import USER_ID, Triple, WriteOutcome, entity_id
from lsrep.systems.ice.config import IceConfig
from lsrep.systems.ice.embedding import HashingEmbedder, embed_one
from lsrep.systems.ice.episodic import TurnRecord, top_k_stable
from lsrep.systems.ice.events import EventRelay, StageEvent
from lsrep.systems.ice.legs import (
    LEG_FUNCTIONS,
    LegContext,
    enumeration_category,
    leg_document,
    leg_episodic_lexical,
    leg_episodic_vector,
    leg_graph,
    leg_procedural,
    leg_summary,
    mentions_user,
    run_legs,
    store_has_content,
)
from lsrep.systems.ice.stores import Stores

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
EMB = HashingEmbedder(64)
LEGS = list(LEG_FUNCTIONS)
ALL_ON = dict.fromkeys(LEGS, 1.0)


def fresh(s: str) -> str:
    """An equal string that is not the interned literal (as a host or a parser would build it)."""
    return "".join(list(s))


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


class World:
    """Real ICE stores in a tmp dir, and contexts over them with a recorded event relay."""

    def __init__(self, root: Path) -> None:
        self.stores = Stores.open(root, EMB)
        self.events: list[StageEvent] = []
        self.n = 0

    def turn(self, text: str, *, conv: str = "c1", topic: str = "general", role: str = "user") -> str:
        tid = f"t{self.n:03d}"
        rec = TurnRecord(tid, conv, "s1", self.n, at(self.n), role, text)
        self.stores.episodic.add(rec, embed_one(EMB, text), topic)
        self.n += 1
        return tid

    def fact(self, subject: str, relation: str, obj: str, *, turn: str = "t900", conv: str = "c1",
             object_type: str | None = "entity", confidence: float = 0.9, day: float = 0,
             kind: str = "property", date: str | None = None) -> None:
        self.stores.codex.apply([Triple(subject, relation, obj, kind=kind, date=date,
                                        confidence=confidence, object_type=object_type)],
                                [], turn_id=turn, conv_id=conv, now=at(day))

    def ctx(self, query: str, *, intent: str = "recall_fact", reliance: str = "long_term_memory",
            topic: str = "general", conv: str = "c1", qvec: np.ndarray | None = None,
            **config) -> LegContext:
        self.events.clear()
        cls = Classification(topic=topic, intent=intent, reliance=reliance, rule="r", intent_rule="r")
        s = self.stores
        return LegContext(query=query, qvec=embed_one(EMB, query) if qvec is None else qvec, cls=cls,
                          conversation_id=conv, config=IceConfig(**config),
                          emit=EventRelay(self.events.append), episodic=s.episodic, codex=s.codex,
                          procedures=s.procedures, documents=s.documents, summaries=s.summaries)

    def of(self, mechanism: str) -> list[StageEvent]:
        return [e for e in self.events if e.mechanism == mechanism]

    def stages(self, mechanism: str) -> list[str]:
        return [e.stage for e in self.of(mechanism)]

    def one(self, mechanism: str, stage: str) -> StageEvent:
        [event] = [e for e in self.of(mechanism) if e.stage == stage]
        return event

    def fill(self) -> None:
        """Content in every store, all about bread."""
        self.turn("I baked rye bread on Sunday.")
        self.turn("The weather was grey and mild.")
        self.fact("user", "bakes", "Rye Bread", turn="t000")
        self.stores.procedures.add("bread", "mention the bread recipe", turn_id="t000", now=at(0))
        self.stores.documents.add("recipes", "Rye bread needs a sour starter.", target_tokens=200,
                                  now=at(0))
        self.stores.summaries.add("c1", 0, 1, at(0).isoformat(), at(1).isoformat(),
                                  "The user baked rye bread.", ["t000", "t001"],
                                  embed_one(EMB, "The user baked rye bread."), at(2))


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path / "state")
    yield w
    w.stores.close()


# -- the stable top-k of the vector search ------------------------------------------------------

def test_top_k_stable_of_no_or_a_negative_k_is_empty():
    scores = np.array([0.3, 0.9, 0.1], dtype=np.float32)
    for k in (0, -1, -3):
        got = top_k_stable(scores, k)
        assert got.tolist() == [] and got.dtype == np.int64
    assert top_k_stable(np.zeros(0, dtype=np.float32), 2).tolist() == []
    assert top_k_stable(scores, 1).tolist() == [1]


# -- store content -------------------------------------------------------------------------------

def test_each_leg_reads_its_own_store_for_content(tmp_path):
    def has(w: World) -> dict[str, bool]:
        ctx = w.ctx("bread")
        return {leg: store_has_content(ctx, fresh(leg)) for leg in LEGS}

    none = dict.fromkeys(LEGS, False)
    w = World(tmp_path / "empty")
    assert has(w) == none
    w.turn("hello")
    assert has(w) == {**none, "episodic_vector": True, "episodic_lexical": True}

    w = World(tmp_path / "graph")
    w.stores.codex.resolve("Dune", type_="book", now=at(0), conv_id="c1",
                           out=WriteOutcome())
    assert has(w) == none  # an entity without edges is no graph content
    w.fact("user", "likes", "Dune")
    assert has(w) == {**none, "graph": True}

    w = World(tmp_path / "procedural")
    w.stores.procedures.add("", "answer in bullet points", turn_id="t0", now=at(0))
    assert has(w) == {**none, "procedural": True}
    w.stores.procedures.revoke("bullet points", turn_id="t1")
    assert has(w) == none  # only active patterns count

    w = World(tmp_path / "document")
    w.stores.documents.add("d", "One sentence.", target_tokens=200, now=at(0))
    assert has(w) == {**none, "document": True}

    w = World(tmp_path / "summary")
    w.stores.summaries.add("c1", 0, 0, "2024", "2024", "s", ["t0"], embed_one(EMB, "s"), at(0))
    assert has(w) == {**none, "summary": True}


# -- eligibility and its events ------------------------------------------------------------------

def test_every_eligible_leg_reports_eligible_executed_output_with_its_parameters(world):
    world.fill()
    weights = {leg: 0.1 * (i + 1) for i, leg in enumerate(LEGS)}
    depths = {"episodic_vector": 2, "episodic_lexical": 3, "graph": 4, "procedural": 5,
              "document": 6, "summary": 7}
    ctx = world.ctx("What rye bread did I bake?", leg_depths=depths)
    results = run_legs(ctx, weights)
    assert list(results) == LEGS
    for leg in LEGS:
        name = f"leg.{leg}"
        cands = results[leg]
        assert cands, leg
        assert world.stages(name) == ["eligible", "executed", "output"]
        assert world.one(name, "eligible").params == {"weight": weights[leg], "depth": depths[leg]}
        executed = world.one(name, "executed")
        assert (executed.count, executed.reason, executed.params) == (len(cands), None,
                                                                     {"depth": depths[leg]})
        out = world.one(name, "output")
        assert out.count == len(cands) and out.ids == tuple(c.id for c in cands)
        turns = tuple(dict.fromkeys(t for c in cands for t in c.source_turn_ids))
        assert out.source_turn_ids == turns
    assert [c.id for c in results["episodic_vector"]] == ["turn:t000", "turn:t001"]  # depth 2
    assert world.one("leg.summary", "output").source_turn_ids == ("t000", "t001")
    assert world.one("leg.document", "output").source_turn_ids == ()


def test_output_turns_are_deduplicated_in_first_seen_order(world):
    world.fact("user", "owns", "Rex", turn="t007", object_type="dog")
    world.fact("user", "likes", "Tea", turn="t003")
    world.fact("Rex", "eats", "Kibble", turn="t007")
    ctx = world.ctx("What do I have?")
    results = run_legs(ctx, ALL_ON)
    assert [c.source_turn_ids for c in results["graph"]] == [("t003", "t007"), ("t007",)]
    assert world.one("leg.graph", "output").source_turn_ids == ("t003", "t007")


def test_ineligibility_reasons_in_order_reliance_weight_store(world):
    world.turn("I baked rye bread.")
    ctx = world.ctx("bread?", reliance=fresh("none"), intent="preference")
    assert run_legs(ctx, ALL_ON) == {}
    for leg in LEGS:
        assert world.stages(f"leg.{leg}") == ["ineligible"]
        assert world.one(f"leg.{leg}", "ineligible").reason == "context_reliance=none"

    weights = {"episodic_vector": 0.0, "episodic_lexical": -0.5, "graph": 0.0, "procedural": 1.0,
               "document": 1e-9}
    ctx = world.ctx("bread?", intent="preference")
    assert run_legs(ctx, weights) == {}
    reasons = {leg: [(e.stage, e.reason) for e in world.of(f"leg.{leg}")] for leg in LEGS}
    weight0 = [("ineligible", "weight 0 for intent preference")]
    assert reasons == {"episodic_vector": weight0, "episodic_lexical": weight0, "graph": weight0,
                       "procedural": [("ineligible", "store empty")],
                       "document": [("ineligible", "store empty")],
                       "summary": weight0}  # a leg missing from the weights has weight 0


def test_the_short_term_reliance_retrieves(world):
    world.turn("I baked rye bread.")
    ctx = world.ctx("bread", reliance=fresh("short_term"))
    assert [c.id for c in run_legs(ctx, ALL_ON)["episodic_lexical"]] == ["turn:t000"]


def test_a_disabled_leg_is_skipped_and_the_others_still_run(world):
    world.fill()
    ctx = world.ctx("rye bread", disabled=frozenset({"leg.episodic_vector", "leg.document"}))
    results = run_legs(ctx, ALL_ON)
    assert list(results) == ["episodic_lexical", "graph", "procedural", "summary"]
    for leg in ("episodic_vector", "document"):
        assert world.stages(f"leg.{leg}") == ["skipped"]
        assert world.one(f"leg.{leg}", "skipped").reason == "disabled"
    for leg in results:
        assert world.stages(f"leg.{leg}") == ["eligible", "executed", "output"]


def test_a_failing_leg_is_reported_and_the_others_still_run(world):
    world.fill()
    wrong = np.ones(7, dtype=np.float32)  # a query vector of the wrong dimension
    ctx = world.ctx("What rye bread did I bake?", qvec=wrong)
    results = run_legs(ctx, ALL_ON)
    assert list(results) == ["episodic_lexical", "graph"]  # the vector legs fail
    for leg in ("episodic_vector", "procedural", "document", "summary"):
        assert world.stages(f"leg.{leg}") == ["eligible", "error"]
        assert world.one(f"leg.{leg}", "error").reason.startswith("ValueError: ")
    assert world.stages("leg.graph") == ["eligible", "executed", "output"]


def test_idle_reasons_only_for_a_leg_that_knows_it_matched_nothing(world):
    world.turn("I baked rye bread.", topic="personal")
    world.fact("user", "likes", "Tea")
    world.stores.procedures.add("bread", "mention the recipe", turn_id="t0", now=at(0))
    world.stores.documents.add("d", "Rye bread needs a starter.", target_tokens=200, now=at(0))
    ctx = world.ctx("zzz qqq", topic="work", cluster_scope=True)
    results = run_legs(ctx, ALL_ON)
    assert results["episodic_vector"] == [] and results["episodic_lexical"] == []
    ex = {leg: world.one(f"leg.{leg}", "executed") for leg in results}
    assert ex["episodic_vector"].reason is None  # no idle reason: the vector leg cannot say why
    assert ex["episodic_lexical"].reason == "idle: no stored turn shares a term with the query"
    assert ex["graph"].reason == "idle: no entity of the query resolves in the graph"
    assert ex["procedural"].reason == "idle: no active pattern's trigger matches the query"
    assert ex["episodic_lexical"].count == 0
    for leg in ("episodic_vector", "episodic_lexical", "graph", "procedural"):
        assert world.stages(f"leg.{leg}") == ["eligible", "executed"]
    assert results["document"]  # the document leg's vector half always ranks something
    assert world.one("leg.document", "executed").reason is None

    ctx = world.ctx("zzz qqq", seed_defects={"procedural_leg": True, "document_leg": True})
    results = run_legs(ctx, ALL_ON)
    assert results["procedural"] == [] and results["document"] == []
    assert world.one("leg.procedural", "executed").reason is None  # the defect cannot know
    assert world.one("leg.document", "executed").reason is None


def test_graph_idle_when_resolved_entities_have_no_current_edges(world):
    world.fact("Dune", "genre", "science fiction", object_type=None)
    world.stores.codex.resolve("Emma", type_="book", now=at(0), conv_id="c1",
                               out=WriteOutcome())
    ctx = world.ctx("Tell me about Emma")
    assert run_legs(ctx, ALL_ON)["graph"] == []
    assert world.one("leg.graph", "executed").reason == (
        "idle: the resolved entities have no current edges")


# -- episodic legs -------------------------------------------------------------------------------

def test_episodic_candidates_carry_rank_turn_strength_and_conversation(world):
    a = world.turn("I baked rye bread.", conv="c1")
    b = world.turn("Rye bread again, with seeds.", conv="c2")
    world.stores.episodic.set_strengths([(b, 0.25)], at(5))
    ctx = world.ctx("rye bread")
    for fn, leg in ((leg_episodic_vector, "episodic_vector"), (leg_episodic_lexical, "episodic_lexical")):
        cands = fn(ctx, 10)
        assert {c.id for c in cands} == {f"turn:{a}", f"turn:{b}"}
        assert [c.legs for c in cands] == [{leg: 1}, {leg: 2}]
        by = {c.id: c for c in cands}
        assert by[f"turn:{b}"].strength == 0.25 and by[f"turn:{a}"].strength == 1.0
        assert by[f"turn:{b}"].conversation_id == "c2" and by[f"turn:{b}"].source_turn_ids == (b,)
        assert by[f"turn:{a}"].text == "[2024-03-01 user] I baked rye bread."
        assert {c.source_type for c in cands} == {"episodic"}


@pytest.mark.parametrize("fn", [leg_episodic_vector, leg_episodic_lexical])
def test_cluster_scope_restricts_the_episodic_legs_to_the_query_topic(world, fn):
    world.turn("rye bread at work", topic="work")
    world.turn("rye bread at home", topic="personal")
    world.turn("rye bread anywhere", topic="general")
    world.turn("rye bread in code", topic="code")  # a topic that sorts before "general"

    def ids(**kw) -> list[str]:
        return sorted(c.source_turn_ids[0] for c in fn(world.ctx("rye bread", **kw), 10))

    everything = ["t000", "t001", "t002", "t003"]
    assert ids(topic="work", cluster_scope=True) == ["t000"]
    assert ids(topic="personal", cluster_scope=True) == ["t001"]
    assert ids(topic="code", cluster_scope=True) == ["t003"]
    assert ids(topic="health", cluster_scope=True) == []
    assert ids(topic="work", cluster_scope=False) == everything
    assert ids(topic=fresh("general"), cluster_scope=True) == everything  # no cluster: everything


# -- who the query is about --------------------------------------------------------------------

def test_mentions_user_by_first_person_or_the_users_names_up_to_three_words(world):
    codex = world.stores.codex
    assert not mentions_user(codex, "What does Mary Ann Smith like?")
    world.fact("user", "name", "Mary Ann Smith", object_type=None)
    world.fact("Tom", "likes", "tea")
    world.fact("Ann", "likes", "tea")
    assert entity_id("Tom") < USER_ID < entity_id("Ann")
    assert mentions_user(codex, "What does Mary Ann Smith like?")
    assert mentions_user(codex, "What do I like?") and mentions_user(codex, "and MY tea")
    assert not mentions_user(codex, "What does Tom like?")  # another entity is not the user
    assert not mentions_user(codex, "What does Ann like?")
    assert not mentions_user(codex, "What does Mary like?")
    world.fact("user", "name", "Ada Lee Mae Kim", object_type=None)
    assert codex.lookup("Ada Lee Mae Kim") == (USER_ID, "alias")
    assert not mentions_user(codex, "What does Ada Lee Mae Kim like?")  # names of 4+ words: no


@pytest.mark.parametrize(("text", "category"), [
    ("List all my hobbies", "hobby"),
    ("How many books did I read?", "book"),
    ("Name every city I visited", "city"),
    ("What are my glasses", "glasse"),
    ("all of the business", "business"),
    ("Which dogs have I owned?", "dog"),
    ("which cat did i adopt", "cat"),
    ("Tell me about Dune", None),
])
def test_enumeration_category_singularises_the_category_word(text, category):
    assert enumeration_category(text) == category


# -- the graph leg ---------------------------------------------------------------------------------

def chain(world: World) -> None:
    """user -> Lyon -> France -> Europe -> Earth; Lyon and France also have a property each."""
    world.fact("user", "lives_in", "Lyon", turn="t001", confidence=0.9, object_type="city")
    world.fact("Lyon", "located_in", "France", turn="t002", confidence=0.5, object_type="country")
    world.fact("France", "part_of", "Europe", turn="t003", confidence=0.8, object_type="region")
    world.fact("Europe", "on", "Earth", turn="t004", confidence=0.8, object_type="planet")
    world.fact("Earth", "orbits", "Sun", turn="t005", object_type="star")


def test_graph_ranks_by_hop_distance_to_depth_three(world):
    chain(world)
    cands = leg_graph(world.ctx("Where do I live?"), 20)
    assert [c.id for c in cands] == [f"entity:{entity_id(n)}" for n in ("user", "Lyon", "France",
                                                                          "Europe")]
    assert [c.legs for c in cands] == [{"graph": r} for r in (1, 2, 3, 4)]
    assert [c.base_score for c in cands] == [1.0, 0.5, 1 / 3, 0.25]
    assert [c.source_type for c in cands] == ["graph"] * 4
    assert cands[1].text.startswith("Lyon (city): located in: France (since 2024-03-01)")
    assert [c.conversation_id for c in cands] == [None] * 4
    assert [c.id for c in leg_graph(world.ctx("Where do I live?"), 2)] == [c.id for c in cands[:2]]
    assert leg_graph(world.ctx("Where do I live?", traversal_depth=1), 20)[-1].id == cands[1].id
    world.fact("Earth", "mass", "6e24 kg", object_type=None)
    assert len(leg_graph(world.ctx("Where do I live?"), 20)) == 4  # Earth is four hops away


def test_graph_with_the_traversal_strength_fix_weighs_the_weakest_path_edge(world):
    chain(world)
    lyon, france = entity_id("Lyon"), entity_id("France")
    world.stores.codex.set_strengths([(e.id, 0.5) for e in world.stores.codex.outgoing(
        france, limit=5, history=False)], at(3))
    cands = leg_graph(world.ctx("Where do I live?", fix={"traversal_strength": True}), 20)
    scores = {c.id.removeprefix("entity:"): c.base_score for c in cands}
    assert scores == pytest.approx({USER_ID: 1.0, lyon: 0.5 * 0.9, france: 0.5 / 3,
                                    entity_id("Europe"): 0.25 * 0.8 * 0.5})
    assert [c.id.removeprefix("entity:") for c in cands] == [USER_ID, lyon, france,
                                                             entity_id("Europe")]
    plain = leg_graph(world.ctx("Where do I live?"), 20)
    assert [c.base_score for c in plain] == [1.0, 0.5, 1 / 3, 0.25]


def test_graph_ties_rank_by_name_and_skip_entities_without_context(world):
    world.fact("user", "knows", "Kiwi", turn="t0")  # reached first, nothing to show
    world.fact("user", "likes", "zebra", turn="t1")
    world.fact("user", "likes", "Apple", turn="t2", kind="multi")
    world.fact("zebra", "colour", "striped", object_type=None)
    world.fact("Apple", "colour", "red", object_type=None)
    world.fact("Mango", "colour", "yellow", object_type=None)
    cands = leg_graph(world.ctx("What do I like?"), 20)
    assert [c.id for c in cands] == [f"entity:{entity_id(n)}" for n in ("user", "Apple", "zebra")]


def test_graph_seeds_named_entities_and_the_user(world):
    world.fact("Tom", "knows", "Ann", turn="t1")
    world.fact("Ann", "likes", "tea", object_type=None, turn="t2")
    world.fact("user", "knows", "Bob", turn="t3")
    world.fact("Bob", "likes", "coffee", object_type=None, turn="t4")
    cands = leg_graph(world.ctx("Does Tom know me?"), 20)
    assert [c.id for c in cands] == [f"entity:{entity_id(n)}" for n in ("Tom", "user", "Ann", "Bob")]
    assert [c.base_score for c in cands] == [1.0, 1.0, 0.5, 0.5]
    cands = leg_graph(world.ctx("Does Tom know Ann?"), 20)
    assert [c.id for c in cands] == [f"entity:{entity_id(n)}" for n in ("Ann", "Tom")]


def test_the_user_seeds_first_so_its_paths_win_ties_of_hop(world):
    world.fact("user", "knows", "Ann", turn="t1", confidence=0.5)
    world.fact("Tom", "knows", "Ann", turn="t2", confidence=0.9)
    world.fact("Zed", "knows", "Ann", turn="t3", confidence=0.9)
    world.fact("Ann", "likes", "tea", turn="t4", object_type=None)
    for query in ("Does Tom know me?", "Do Tom and Zed know me?"):
        cands = leg_graph(world.ctx(query, fix={"traversal_strength": True}), 20)
        [ann] = [c for c in cands if c.id == f"entity:{entity_id('Ann')}"]
        assert ann.base_score == pytest.approx(0.5 * 0.5)  # via the user's edge, not Tom's


def test_a_named_object_shows_who_points_at_it_an_unnamed_one_does_not(world):
    world.fact("user", "read", "Dune", turn="t1", object_type="book", day=2)
    world.fact("Paul", "read", "Dune", turn="t2", object_type="book", day=3)
    [dune] = [c for c in leg_graph(world.ctx("Tell me about Dune"), 20)
              if c.id == f"entity:{entity_id('Dune')}"]
    assert dune.text == "Dune (book): Paul read Dune (2024-03-04); user read Dune (2024-03-03)"
    assert dune.source_turn_ids == ("t2", "t1")
    assert [c.id for c in leg_graph(world.ctx("What did I read?"), 20)] == [f"entity:{USER_ID}"]


def test_entity_context_limits_edges_flags_confidence_and_dedupes_turns(world):
    world.fact("Ann", "likes", "tea", turn="t1", object_type=None, confidence=0.79, kind="multi")
    world.fact("Ann", "likes", "jam", turn="t1", object_type=None, confidence=0.79, kind="multi")
    [ann] = leg_graph(world.ctx("Tell me about Ann"), 20)
    assert ann.text == "Ann (entity): likes: jam (since 2024-03-01); likes: tea (since 2024-03-01)"
    assert ann.source_turn_ids == ("t1",) and not ann.confident
    [ann] = leg_graph(world.ctx("Tell me about Ann", context_edges=1), 20)
    assert ann.text == "Ann (entity): likes: jam (since 2024-03-01)"
    world.fact("Ann", "age", "40", turn="t2", object_type=None, confidence=0.8)
    [ann] = leg_graph(world.ctx("Tell me about Ann"), 20)
    assert ann.confident and ann.source_turn_ids == ("t2", "t1")
    [ann] = leg_graph(world.ctx("Tell me about Ann", confidence_flag_threshold=0.81), 20)
    assert not ann.confident
    [ann] = leg_graph(world.ctx("Tell me about Ann", confidence_flag_threshold=0.7), 20)
    assert ann.confident  # every edge above the threshold


def test_history_cues_or_a_temporal_intent_show_superseded_edges(world):
    world.fact("user", "lives_in", "Lyon", turn="t1", object_type=None, day=0)
    world.fact("user", "lives_in", "Paris", turn="t2", object_type=None, day=5)
    past = "lives in: Lyon (from 2024-03-01 until 2024-03-06)"

    def text(query: str, **kw) -> str:
        [user] = leg_graph(world.ctx(query, **kw), 20)
        return user.text

    assert past not in text("Where do I live?")
    assert "lives in: Paris (since 2024-03-06)" in text("Where do I live?")
    assert past in text("Where did I live before?")
    assert past in text("Where do I live?", intent=fresh("temporal"))
    assert past not in text("Where do I live?", intent="preference")


def test_graph_conversation_scope_keeps_the_current_conversations_edges(world):
    world.fact("user", "knows", "Ann", conv="c1", turn="t1")
    world.fact("Ann", "likes", "tea", conv="c1", turn="t1", object_type=None)
    world.fact("user", "knows", "Bob", conv="c2", turn="t2", kind="multi")
    world.fact("Bob", "likes", "jam", conv="c2", turn="t2", object_type=None)
    world.fact("Ann", "likes", "rum", conv="c2", turn="t3", object_type=None, kind="multi")
    everywhere = leg_graph(world.ctx("Who do I know?"), 20)
    assert [c.id for c in everywhere] == [f"entity:{entity_id(n)}" for n in ("user", "Ann", "Bob")]
    scoped = leg_graph(world.ctx("Who do I know?", graph_conversation_scope=True), 20)
    assert [c.id for c in scoped] == [f"entity:{entity_id(n)}" for n in ("user", "Ann")]
    assert scoped[1].text == "Ann (entity): likes: tea (since 2024-03-01)"
    other = leg_graph(world.ctx("Who do I know?", conv="c2", graph_conversation_scope=True), 20)
    assert [c.id for c in other] == [f"entity:{entity_id(n)}" for n in ("user", "Bob")]
    assert other[0].text == "user (person): knows: Bob (since 2024-03-01)"
    assert other[1].text == "Bob (entity): likes: jam (since 2024-03-01)"


# -- MERA ------------------------------------------------------------------------------------------

def books(world: World) -> None:
    world.fact("user", "read", "Dune", turn="t1", object_type="book", kind="multi")
    world.fact("Dune", "author", "Herbert", turn="t1", object_type=None)
    world.fact("Emma", "author", "Austen", turn="t2", object_type=None)
    world.fact("Zoe", "pages", "300", turn="t3", object_type=None)
    world.fact("Aardvark", "pages", "90", turn="t3", object_type=None)
    codex, out = world.stores.codex, WriteOutcome()
    for name in ("Emma", "Zoe", "Aardvark"):
        codex.conn.execute("UPDATE entities SET type = 'book' WHERE id = ?", (entity_id(name),))
    codex.resolve("Ghost", type_="book", now=at(0), conv_id="c1", out=out)  # no edges at all
    world.fact("Paul", "read", "Ulysses", turn="t5", object_type="book")  # only pointed at


def test_mera_enumerates_the_category_after_the_traversal(world):
    books(world)
    ctx = world.ctx("List all my books")
    cands = leg_graph(ctx, 20)
    ids = [entity_id(n) for n in ("user", "Dune", "Emma", "Zoe", "Aardvark", "Ulysses")]
    assert [c.id for c in cands] == [f"entity:{i}" for i in ids]
    assert [c.base_score for c in cands] == [1.0, 0.5, 0.5, 0.5, 0.5, 0.5]
    assert [sorted(c.mechanisms) for c in cands] == [[]] + [["mera"]] * 5
    assert [c.legs for c in cands] == [{"graph": r} for r in range(1, 7)]
    assert cands[-1].text == "Ulysses (book): Paul read Ulysses (2024-03-01)"
    assert world.stages("mera") == ["eligible", "executed", "output"]
    assert world.one("mera", "eligible").params == {"category": "book"}
    executed = world.one("mera", "executed")
    mera = [entity_id(n) for n in ("Dune", "Emma", "Zoe", "Aardvark", "Ghost", "Ulysses")]
    assert (executed.count, executed.ids, executed.reason) == (6, tuple(mera), None)  # storage order
    assert executed.params == {"category": "book"}
    out = world.one("mera", "output")
    assert out.count == 5 and out.ids == tuple(c.id for c in cands[1:])
    assert [c.id for c in leg_graph(world.ctx("List all my books"), 3)] == [f"entity:{i}" for i in ids[:3]]
    assert leg_graph(world.ctx("List all my books"), 2)[1].id == f"entity:{ids[1]}"
    assert world.one("mera", "executed").count == 2  # MERA's own limit is the depth


def test_mera_only_entities_rank_below_reached_ones_of_the_same_score(world):
    books(world)
    world.fact("user", "knows", "Zed", turn="t4", object_type="person", kind="multi")
    world.fact("Zed", "likes", "tea", turn="t4", object_type=None)
    world.fact("Zed", "knows", "Quin", turn="t6", object_type="person")
    world.fact("Quin", "likes", "rum", turn="t6", object_type=None)
    cands = leg_graph(world.ctx("List all my books"), 20)
    names = ["user", "Dune", "Zed", "Emma", "Zoe", "Aardvark", "Ulysses", "Quin"]  # Quin: hop 2
    assert [c.id for c in cands] == [f"entity:{entity_id(n)}" for n in names]


def test_mera_gates_and_idle(world):
    books(world)
    cands = leg_graph(world.ctx("List all my books", disabled=frozenset({"mera"})), 20)
    assert world.stages("mera") == ["eligible", "skipped"]
    assert world.one("mera", "skipped").reason == "disabled"
    assert [c.id for c in cands] == [f"entity:{USER_ID}", f"entity:{entity_id('Dune')}"]
    assert all(not c.mechanisms for c in cands)

    leg_graph(world.ctx("List all my spaceships"), 20)
    assert world.stages("mera") == ["eligible", "executed"]
    executed = world.one("mera", "executed")
    assert (executed.count, executed.ids) == (0, ())
    assert executed.reason == "idle: no spaceship entity in the graph"

    leg_graph(world.ctx("List all the books about Dune"), 20)
    assert world.stages("mera") == ["ineligible"]
    assert world.one("mera", "ineligible").reason == "named entities found"
    leg_graph(world.ctx("What did I read?"), 20)
    assert world.one("mera", "ineligible").reason == "no enumeration trigger"


def test_mera_without_a_showable_entity_has_no_output(world):
    world.fact("user", "likes", "tea", object_type=None)
    world.stores.codex.resolve("Ghost", type_="book", now=at(0), conv_id="c1", out=WriteOutcome())
    cands = leg_graph(world.ctx("List all my books"), 20)
    assert [c.id for c in cands] == [f"entity:{USER_ID}"]
    assert world.stages("mera") == ["eligible", "executed"]
    assert world.one("mera", "executed").count == 1


# -- procedural, document, summary legs --------------------------------------------------------

def test_procedural_leg_ranks_matching_patterns(world):
    p1, _ = world.stores.procedures.add("format answers", "use bullet points", turn_id="t1", now=at(0))
    p2, _ = world.stores.procedures.add("format answers", "use short answers", turn_id="t2", now=at(1))
    world.stores.procedures.add("format answers", "use short answers", turn_id="t3", now=at(2))
    world.stores.procedures.set_strengths([(p1, 0.5)], at(3))
    cands = leg_procedural(world.ctx("How should you format answers?"), 5)
    assert [c.id for c in cands] == [f"proc:{p2}", f"proc:{p1}"]  # more support first
    assert [c.legs for c in cands] == [{"procedural": 1}, {"procedural": 2}]
    assert [c.strength for c in cands] == [1.0, 0.5]
    assert cands[0].source_turn_ids == ("t2", "t3") and cands[0].conversation_id is None
    assert cands[0].text == "User instruction (since 2024-03-02): use short answers"
    assert [c.id for c in leg_procedural(world.ctx("How should you format answers?"), 1)] == [
        f"proc:{p2}"]


def test_document_leg_ranks_chunks(world):
    world.stores.documents.add("garden", "Tomatoes need sun. " * 1 + "Water them at dawn.",
                               target_tokens=5, now=at(0))
    cands = leg_document(world.ctx("When do I water tomatoes at dawn?"), 10)
    assert [c.id for c in cands] == ["doc:garden#1", "doc:garden#0"]
    assert [c.legs for c in cands] == [{"document": 1}, {"document": 2}]
    assert cands[0].text == "[document garden] Water them at dawn."
    assert cands[0].source_turn_ids == () and cands[0].conversation_id is None


def test_summary_leg_ranks_summaries(world):
    for n, text in enumerate(["We talked about tomatoes.", "We talked about rye bread."]):
        world.stores.summaries.add(f"c{n}", 0, 1, at(n).isoformat(), at(n + 1).isoformat(), text,
                                   [f"t{n}a", f"t{n}b"], embed_one(EMB, text), at(n + 2))
    cands = leg_summary(world.ctx("We talked about rye bread."), 10)
    assert [c.id for c in cands] == ["summary:summary-00002", "summary:summary-00001"]
    assert [c.legs for c in cands] == [{"summary": 1}, {"summary": 2}]
    assert cands[0].conversation_id == "c1" and cands[0].source_turn_ids == ("t1a", "t1b")
    assert cands[0].text == "Summary (2024-03-02 to 2024-03-03): We talked about rye bread."


# -- strengths: reinforcement and decay bookkeeping -------------------------------------------

def strength_row(world: World, tid: str) -> tuple:
    return tuple(world.stores.episodic.conn.execute(
        "SELECT s.strength, s.strength_at, s.last_access FROM turn_strength s"
        " JOIN turns t ON t.rowid = s.rowid WHERE t.turn_id = ?", (tid,)).fetchone())


def test_reinforce_restores_the_named_turns_only(world):
    a, b, c = world.turn("one"), world.turn("two"), world.turn("three")
    ep = world.stores.episodic
    ep.set_strengths([(a, 0.3), (b, 0.2), (c, 0.1)], at(10))
    assert ep.strengths() == [(a, 0.3, at(10).isoformat()), (b, 0.2, at(10).isoformat()),
                              (c, 0.1, at(10).isoformat())]
    assert ep.reinforce([c, a], at(12)) == [c, a]
    stamp = at(12).isoformat()
    assert strength_row(world, a) == (1.0, stamp, stamp)
    assert strength_row(world, b) == (0.2, at(10).isoformat(), None)
    assert strength_row(world, c) == (1.0, stamp, stamp)
    assert ep.strengths(above=0.2) == [(a, 1.0, stamp), (c, 1.0, stamp)]
    assert ep.reinforce([], at(13)) == []


def test_codex_edge_strengths_are_set_and_listed_in_storage_order(world):
    world.fact("user", "likes", "tea", object_type=None, day=0)
    world.fact("user", "knows", "Ann", day=1)
    codex = world.stores.codex
    e1, e2 = (r[0] for r in codex.conn.execute("SELECT id FROM edges ORDER BY seq"))
    assert codex.strengths() == [(e1, 1.0, at(0).isoformat()), (e2, 1.0, at(1).isoformat())]
    codex.set_strengths([(e2, 0.4)], at(7))
    assert codex.strengths() == [(e1, 1.0, at(0).isoformat()), (e2, 0.4, at(7).isoformat())]
    assert codex.strengths(above=0.4) == [(e1, 1.0, at(0).isoformat())]
    assert codex.strength_stats() == (2, pytest.approx(1.4))


# -- the Codex reads behind the graph leg (scripts/mutation/ice-graph.toml) ------------------------

def test_find_entities_by_name_then_alias_without_the_user_then_fuzzy(world):
    codex = world.stores.codex
    assert codex.find_entities("Constantinoples", 0.85) == []  # an empty graph
    world.fact("user", "name", "Ada", object_type=None)
    world.fact("Tom", "visited", "The Hague", object_type="city")
    world.fact("Tom", "saw", "Constantinople", object_type="city", kind="multi")
    tom, hague, city = entity_id("Tom"), entity_id("The Hague"), entity_id("Constantinople")
    assert codex.find_entities("Did Tom visit Hague?", 0.85) == [(tom, "name"), (hague, "alias")]
    assert codex.find_entities("Hague, The Hague, tom", 0.85) == [(hague, "name"), (tom, "name")]
    assert codex.find_entities("Did Ada meet Tom?", 0.85) == [(tom, "name")]  # not the user
    assert codex.find_entities("Did I meet the user?", 0.85) == []
    assert codex.find_entities("I love Constantinoples", 0.85) == [(city, "fuzzy")]
    assert codex.find_entities("I love Constantinoples", 0.92) == []
    assert codex.find_entities("Mediterraneans", 0.85) == []
    assert codex.find_entities("?!", -1.0) == []  # no words, nothing to compare
    everything = [(tom, "fuzzy"), (hague, "fuzzy"), (city, "fuzzy")]  # storage order, no user
    assert codex.find_entities("qqq", -1.0) == everything


def test_a_fuzzy_cosine_exactly_at_the_threshold_matches(world):
    world.fact("Tom", "saw", "Constantinople", object_type="city")
    world.fact("Tom", "saw", "Mediterranean", object_type="sea", kind="multi")
    codex = world.stores.codex
    rows = codex.conn.execute("SELECT id, vec FROM entities WHERE id != ? ORDER BY rowid",
                              (USER_ID,)).fetchall()
    matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    query = np.asarray(EMB.embed(["constantinoples"]), dtype=np.float32)
    cosine = (query @ matrix.T).max(axis=0)[[r[0] for r in rows].index(entity_id("Constantinople"))]
    assert 0.85 < cosine < 1
    city = entity_id("Constantinople")
    assert codex.find_entities("Constantinoples", float(cosine)) == [(city, "fuzzy")]
    assert codex.find_entities("Constantinoples", float(np.nextafter(cosine, np.float32(2)))) == []


def test_outgoing_edges_newest_first_then_superseded_with_scope_and_limit(world):
    world.fact("user", "lives_in", "Lyon", conv="c1", object_type=None, day=0)
    world.fact("user", "lives_in", "Paris", conv="c2", object_type=None, day=1)
    world.fact("user", "likes", "tea", conv="c1", object_type=None, day=2)
    world.fact("user", "likes", "jam", conv="c2", object_type=None, day=3)
    world.fact("user", "likes", "rum", conv="c1", object_type=None, day=4, kind="multi")
    codex = world.stores.codex

    def values(**kw) -> list[str]:
        return [e.value for e in codex.outgoing(USER_ID, **kw)]

    assert values(limit=10, history=False) == ["rum", "jam", "Paris"]
    assert values(limit=2, history=False) == ["rum", "jam"]
    assert values(limit=10, history=True) == ["rum", "jam", "Paris", "tea", "Lyon"]
    assert values(limit=1, history=True) == ["rum", "tea"]
    assert values(limit=10, history=False, conv_scope="c1") == ["rum"]
    assert values(limit=10, history=True, conv_scope="c1") == ["rum", "tea", "Lyon"]
    assert values(limit=10, history=True, conv_scope="c2") == ["jam", "Paris"]


def test_incoming_edges_are_current_newest_first_and_limited(world):
    world.fact("Ann", "reads", "Dune", object_type="book", day=0)
    world.fact("Bob", "reads", "Dune", object_type="book", day=1)
    world.fact("Cy", "reads", "Dune", object_type="book", day=2)
    world.fact("Cy", "reads", "Emma", object_type="book", day=3)  # supersedes Cy -> Dune
    codex = world.stores.codex
    assert [e.src for e in codex.incoming(entity_id("Dune"), 10)] == [entity_id("Bob"), entity_id("Ann")]
    assert [e.src for e in codex.incoming(entity_id("Dune"), 1)] == [entity_id("Bob")]


def test_traverse_keeps_each_entitys_first_path_and_hop(world):
    world.fact("user", "knows", "Ann", turn="t1")
    world.fact("user", "likes", "Bob", turn="t2", kind="multi")
    world.fact("Ann", "knows", "Cy", turn="t3", conv="c2")
    world.fact("Bob", "knows", "Cy", turn="t4")
    world.fact("Cy", "knows", "user", turn="t5")
    world.fact("Cy", "likes", "tea", turn="t6", object_type=None)
    codex = world.stores.codex
    ann, bob, cy = entity_id("Ann"), entity_id("Bob"), entity_id("Cy")

    def walk(depth: int, scope: str | None = None) -> dict[str, tuple[int, list[str]]]:
        got = codex.traverse([USER_ID], depth, scope)
        return {k: (hop, [e.source_turn for e in path]) for k, (hop, path) in got.items()}

    assert walk(0) == {USER_ID: (0, [])}
    assert walk(1) == {USER_ID: (0, []), ann: (1, ["t1"]), bob: (1, ["t2"])}
    assert walk(3) == {USER_ID: (0, []), ann: (1, ["t1"]), bob: (1, ["t2"]), cy: (2, ["t1", "t3"])}
    assert walk(3, "c1") == {USER_ID: (0, []), ann: (1, ["t1"]), bob: (1, ["t2"]),
                             cy: (2, ["t2", "t4"])}
    assert list(walk(3)) == [USER_ID, ann, bob, cy]
    assert codex.traverse([], 3) == {}
    two = codex.traverse([ann, bob], 1)
    assert {k: v[0] for k, v in two.items()} == {ann: 0, bob: 0, cy: 1}


def test_enumerate_category_in_storage_order_up_to_the_limit(world):
    for name in ("Dune", "Emma", "Zoe"):
        world.fact("user", "read", name, object_type="book", kind="multi")
    world.fact("user", "visited", "Lyon", object_type="city")
    codex = world.stores.codex
    books = [entity_id(n) for n in ("Dune", "Emma", "Zoe")]
    assert codex.enumerate_category("book", 10) == books
    assert codex.enumerate_category("book", 2) == books[:2]
    assert codex.enumerate_category("city", 10) == [entity_id("Lyon")]
    assert codex.enumerate_category("planet", 10) == []


# -- work of the merged caches (scripts/mutation/ice-strengths.toml) -------------------------------

class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def test_the_codex_keeps_the_gram_vectors_of_the_last_gram_cache_prompts(tmp_path):
    from lsrep.systems.ice.codex import GRAM_CACHE, Codex

    emb = CountingEmbedder()
    codex = Codex(tmp_path / "codex.sqlite", emb)
    codex.apply([Triple("Tom", "saw", "Constantinople", object_type="city")], [], turn_id="t0",
                conv_id="c1", now=at(0))
    prompts = [f"qq{n}" for n in range(2 * GRAM_CACHE)]
    for p in prompts[:GRAM_CACHE]:
        assert codex.find_entities(p, 0.85) == []
    before = emb.texts
    codex.find_entities(prompts[0], 0.85)  # still kept: GRAM_CACHE prompts fit
    assert emb.texts == before
    for p in prompts[GRAM_CACHE:]:
        codex.find_entities(p, 0.85)
    before = emb.texts
    codex.find_entities(prompts[0], 0.85)  # GRAM_CACHE newer prompts pushed it out
    assert emb.texts == before + 1
    codex.close()


def test_a_repeated_decay_read_at_the_same_floor_does_not_scan_the_turns(world):
    a, b = world.turn("one"), world.turn("two")
    ep = world.stores.episodic
    ep.set_strengths([(b, 0.05)], at(3))
    assert ep.strengths(above=float("0.05")) == [(a, 1.0, at(0).isoformat())]
    statements: list[str] = []
    ep.conn.set_trace_callback(statements.append)
    assert ep.strengths(above=float("0.05")) == [(a, 1.0, at(0).isoformat())]
    assert ep.strengths(above=0.5) == [(a, 1.0, at(0).isoformat())]  # a higher floor: filtered
    ep.conn.set_trace_callback(None)
    assert statements == []


def test_strengths_above_a_higher_floor_are_strictly_above_it(world):
    a, b, c = world.turn("one"), world.turn("two"), world.turn("three")
    ep = world.stores.episodic
    ep.set_strengths([(a, 0.3), (b, 0.05)], at(3))
    assert [r[0] for r in ep.strengths(above=0.05)] == [a, c]
    assert [r[0] for r in ep.strengths(above=0.3)] == [c]  # 0.3 is not above 0.3
    assert [r[0] for r in ep.strengths(above=0.01)] == [a, b, c]
