"""Recall: the hybrid strategy finds the relevant memory, for its owner only, and says why."""

from datetime import date, datetime

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memories.recall import lexical_index, search, sqlite_search
from memories.models import Consolidation, Memory, MemoryLink
from memories.recall import FULL_TEXT_RANKS, date_spans, recall

pytestmark = pytest.mark.django_db

FALCON = "Q1 planning: we decided to launch Project Falcon on March 15 with a budget of $2.5M. Sarah Chen leads it."


def when(y, m, d):
    return timezone.make_aware(datetime(y, m, d, 12, 0))


def fillers(memory_factory, n, *, owner=None, source="diary"):
    return [
        memory_factory(f"Ordinary day number {i}: walked the dog, cooked pasta, read a chapter {i}.", owner=owner, source=source)
        for i in range(n)
    ]


def hybrid(owner, question, k=10, **kw):
    return recall(owner=owner, question=question, strategy="hybrid", k=k, **kw)


def index_ids(owner, *query):
    """What the lexical index itself holds, without the ORM's filters on top."""
    return {h.memory_id for h in search.lexical_search(owner=owner, query=list(query), limit=100)}


def reasons_of(result, memory):
    return next(r.reasons for r in result.memories if r.memory.pk == memory.pk)


def test_hybrid_finds_the_old_relevant_memory_that_recent_misses(user, memory_factory):
    falcon = memory_factory(FALCON, source="meeting notes")
    fillers(memory_factory, 55)
    assert falcon.pk not in recall(owner=user, question="When does Project Falcon launch?", strategy="recent", k=50).memory_ids
    result = hybrid(user, "When does Project Falcon launch?")
    assert result.memory_ids[0] == falcon.pk
    assert any("'falcon'" in r and "'launch'" in r for r in result.memories[0].reasons)


def test_index_follows_insert_edit_delete_and_rebuild(user, memory_factory):
    memory = memory_factory("The zeppelin museum opens on Sundays.")
    assert index_ids(user, "zeppelin") == {memory.pk}

    # An edit through a queryset update (no save(), no signal) still reaches the index.
    Memory.objects.filter(pk=memory.pk).update(summary="Trip idea: the quokka island ferry.")
    assert hybrid(user, "quokka ferry").memory_ids == [memory.pk]
    memory.refresh_from_db()
    memory.raw_text = "The airship museum opens on Sundays."
    memory.topics, memory.entities = ["airship", "museum"], []
    memory.save()
    assert index_ids(user, "zeppelin") == set()
    assert index_ids(user, "airship") == {memory.pk}

    # Rebuilding from the table gives the same answers.
    call_command("rebuild_index", stdout=open("/dev/null", "w"))
    assert index_ids(user, "airship") == {memory.pk}

    Memory.all_objects.filter(pk=memory.pk).delete()
    assert index_ids(user, "airship") == set()
    assert hybrid(user, "airship museum").memory_ids == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 table exists on SQLite only")
def test_rebuild_repairs_an_emptied_index(user, memory_factory):
    memory = memory_factory("The zeppelin museum opens on Sundays.")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {lexical_index.FTS_TABLE}({lexical_index.FTS_TABLE}) VALUES ('delete-all')")
    # Damage done past the triggers draws no stamp: a process that searched before it
    # answers from what it remembers (sqlite_search._Remembered); a new one reads the damage.
    sqlite_search.forget_remembered()
    assert index_ids(user, "zeppelin") == set()
    call_command("rebuild_index", stdout=open("/dev/null", "w"))
    assert index_ids(user, "zeppelin") == {memory.pk}


def test_only_readable_memories_of_the_owner_are_recalled(user, other_user, memory_factory):
    mine = memory_factory("My Falcon budget is $2.5M.")
    theirs = memory_factory("Bob's falcon budget is secret.", owner=other_user)
    failed = memory_factory("Falcon draft notes, extraction failed.", extract=False)
    Memory.objects.filter(pk=failed.pk).update(status=Memory.Status.FAILED)
    assert hybrid(user, "falcon budget").memory_ids == [mine.pk]
    assert hybrid(other_user, "falcon budget").memory_ids == [theirs.pk]
    assert failed.pk not in hybrid(user, "falcon draft notes").memory_ids
    # Neighbours and links never cross owners either.
    MemoryLink.objects.create(from_memory=theirs, to_memory=mine, relationship="both mention falcon")
    assert hybrid(other_user, "falcon budget secret", k=50).memory_ids == [theirs.pk]


def test_every_arm_reads_the_memories_of_one_rule(user, other_user, memory_factory):
    """readable.py states which memories recall may read once; the ORM filter, the plain
    SQL recall's arms use and the full-text index's scope all follow it. Expiry passes
    with time, so only the ORM filter and recall's final list apply it."""
    from memories.recall.readable import READABLE_BY_DATE_SQL, READABLE_SQL, readable_memories

    def note(what, **kw):
        return memory_factory(f"Zeppelin note: {what}.", occurred_at=when(2024, 5, 1), **kw)

    ready, pending = note("ready"), note("pending", extract=False)
    failed, review, deleted, superseded, duplicate, expired = (
        note(what) for what in ("failed", "review", "deleted", "superseded", "duplicate", "expired")
    )
    theirs = note("theirs", owner=other_user)
    Memory.objects.filter(pk=failed.pk).update(status=Memory.Status.FAILED)
    Memory.objects.filter(pk=review.pk).update(status=Memory.Status.REVIEW)
    Memory.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now())
    Memory.objects.filter(pk=superseded.pk).update(superseded_by=ready)
    Memory.objects.filter(pk=duplicate.pk).update(duplicate_of=ready)
    Memory.objects.filter(pk=expired.pk).update(expires_at=when(2024, 6, 1))

    def sql_ids(condition):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {Memory._meta.db_table} WHERE {condition}", [user.pk])
            return {row[0] for row in cursor.fetchall()}

    assert set(readable_memories(user).values_list("pk", flat=True)) == {ready.pk, pending.pk}
    assert sql_ids(READABLE_SQL) == sql_ids(READABLE_BY_DATE_SQL) == {ready.pk, pending.pk, expired.pk}
    assert index_ids(user, "zeppelin") == {ready.pk, pending.pk, expired.pk}
    assert theirs.pk in index_ids(other_user, "zeppelin")
    assert set(hybrid(user, "zeppelin note", k=50).memory_ids) == {ready.pk, pending.pk}
    assert set(hybrid(user, "What happened in May 2024?", k=50).memory_ids) == {ready.pk, pending.pk}
    assert set(recall(owner=user, question="", strategy="recent", k=50).memory_ids) == {ready.pk, pending.pk}


def test_dates_in_the_question_favour_memories_that_occurred_then(user, memory_factory):
    may = memory_factory("Dentist appointment went fine, no cavities.", occurred_at=when(2023, 5, 10))
    january = memory_factory("Dentist appointment went fine, one filling.", occurred_at=when(2024, 1, 20))
    result = hybrid(user, "What happened at the dentist in May 2023?")
    assert result.memory_ids[:2] == [may.pk, january.pk]
    assert "occurred in May 2023" in reasons_of(result, may)

    result = hybrid(user, "How did the dentist go last January?", now=when(2024, 3, 1))
    assert result.memory_ids[0] == january.pk

    # A question of only a date: what happened then, not the newest memory.
    yesterday = memory_factory("Bought a blue bicycle.", occurred_at=when(2024, 2, 29))
    memory_factory("Sold the old car.", occurred_at=when(2024, 3, 1))
    assert hybrid(user, "What did I do yesterday?", now=when(2024, 3, 1)).memory_ids[0] == yesterday.pk


def test_date_phrases_are_parsed_offline():
    today = date(2024, 3, 15)
    spans = {
        s.label: (s.start, s.end, s.month) for s in date_spans("What did I do yesterday, in 2023 and last May?", today=today)
    }
    assert spans["yesterday"] == (date(2024, 3, 14), date(2024, 3, 14), None)
    assert spans["2023"] == (date(2023, 1, 1), date(2023, 12, 31), None)
    assert spans["May 2023"] == (date(2023, 5, 1), date(2023, 5, 31), None)
    [span] = date_spans("dinner on 3 June, 2023", today=today)
    assert (span.start, span.end) == (date(2023, 6, 3), date(2023, 6, 3))
    [span] = date_spans("the workshop on October 13, 2023", today=today)
    assert span.start == date(2023, 10, 13)
    [span] = date_spans("camping in July", today=today)
    assert span.month == 7 and span.start is None
    assert date_spans("May I ask what Sarah thinks?", today=today) == []


def test_the_turns_around_a_hit_come_along(user, memory_factory):
    turns = [
        "Melanie: How was your week?",
        "Melanie: What did you research for the family plans?",
        "Caroline: Adoption agencies! I found three good ones.",
        "Caroline: Also baked bread.",
    ]
    made = [memory_factory(text, source=f"conv-1:D1:{i}") for i, text in enumerate(turns, 1)]
    other = memory_factory("Caroline: Painted a lake at dawn.", source="conv-1:D2:1")
    fillers(memory_factory, 5)
    result = hybrid(user, "What did Caroline research?", k=5)
    # Melanie's line holds the word; Caroline's turns after it come along and, being
    # Caroline's own words, her reply ranks first, above her next line.
    ids = result.memory_ids
    assert ids[0] == made[2].pk and ids.index(made[2].pk) < ids.index(made[3].pk)
    assert made[1].pk in ids
    assert f"same conversation as #{made[1].pk}" in reasons_of(result, made[2])
    # Another session of the same conversation is not "around" the hit.
    result = hybrid(user, "What did Caroline research?", k=10)
    assert not any("same conversation" in r for r in reasons_of(result, other))


def test_the_reply_after_a_hit_ranks_above_the_turn_before_it(user, memory_factory):
    turns = [
        "Jon: The weather was rough all week.",
        "Gina: Did you get the promotion at the bank in the end?",
        "Jon: Yes! Assistant manager now, hard work paid off.",
    ]
    before, hit, reply = [memory_factory(text, source=f"conv-2:D4:{i}") for i, text in enumerate(turns, 1)]
    fillers(memory_factory, 5)
    # Both other turns match "Jon" alike; only the reply follows the hit.
    ids = hybrid(user, "Did Jon get the promotion at the bank?", k=3).memory_ids
    assert hit.pk in ids
    assert ids.index(reply.pk) < ids.index(before.pk)


def test_linked_memories_come_along_with_the_link_as_reason(user, memory_factory):
    hit = memory_factory("The quarterly falcon review is on Friday.", source="a")
    linked = memory_factory("Sarah prepared the slides with Acme.", source="b")
    fillers(memory_factory, 5, source="c")
    assert linked.pk not in hybrid(user, "falcon", k=5).memory_ids
    consolidation = Consolidation.objects.create(owner=user, summary="2 memories", insight="Sarah owns the falcon review.")
    consolidation.sources.set([hit, linked])
    MemoryLink.objects.create(from_memory=hit, to_memory=linked, relationship="both mention review", consolidation=consolidation)
    result = hybrid(user, "falcon", k=5)
    assert result.memory_ids[:2] == [hit.pk, linked.pk]
    assert f"linked to #{hit.pk}: both mention review" in reasons_of(result, linked)
    assert [c.pk for c in result.consolidations] == [consolidation.pk]
    assert any(r.startswith("built from") for r in result.consolidation_reasons[consolidation.pk])


def test_importance_changes_the_order_of_equally_relevant_memories(user, memory_factory):
    first = memory_factory("Lunch with Priya about the garden.")
    second = memory_factory("Garden talk with Priya, over lunch.")
    Memory.objects.filter(pk__in=[first.pk, second.pk]).update(importance=0.5)
    before = hybrid(user, "Priya garden lunch").memory_ids
    assert sorted(before) == sorted([first.pk, second.pk])
    behind = before[1]
    Memory.objects.filter(pk=behind).update(importance=0.95)
    result = hybrid(user, "Priya garden lunch")
    assert result.memory_ids[0] == behind
    assert "important (0.9)" in result.memories[0].reasons or "important (1.0)" in result.memories[0].reasons


def test_the_engine_rates_a_reported_event_above_small_talk_and_questions():
    from memories.llm.offline import importance_of

    event = importance_of("John: Last weekend I joined a rowing club by the river, my first race is in June.", ["John"])
    chat = importance_of("John: Wow, that sounds so cool, glad you had fun there!", ["John"])
    question = importance_of("John: How was the trip? Did you like it?", ["John"])
    assert event > chat > question
    assert 0.05 <= question and event <= 0.95


def test_a_transcript_line_in_the_named_persons_own_words_ranks_first(user, memory_factory, monkeypatch):
    from memories.recall import speaker

    own = memory_factory("Ann: We finally adopted a little grey cat called Miso, she sleeps all day on the sofa.")
    about = memory_factory("Bob: Ann, your cat Miso is lovely.")
    fillers(memory_factory, 3)
    question = "What cat does Ann have?"
    result = hybrid(user, question)
    assert result.memory_ids[:2] == [own.pk, about.pk]
    # The order is the speaker signals' doing: without them the shorter line wins on words.
    # (Bob's line is not the best match here: Ann's own holds every word and more.)
    monkeypatch.setattr(speaker, "W_SPEAKER", 0.0)
    monkeypatch.setattr(speaker, "OTHER_SPEAKER", 1.0)
    assert hybrid(user, question).memory_ids[:2] == [about.pk, own.pk]


def test_the_named_persons_reply_outranks_the_line_that_asked_it(user, memory_factory, monkeypatch):
    from memories.recall import speaker

    asked = memory_factory("Bob: Ann, did you ever finish the marathon in Porto?", source="chat:D1:1")
    reply = memory_factory("Ann: Yes! Crossed the line in four hours, legs were jelly.", source="chat:D1:2")
    fillers(memory_factory, 5)
    question = "Did Ann finish the Porto marathon?"
    result = hybrid(user, question, k=3)
    # Bob's line holds the words and brings Ann's reply along; the reply is what answers.
    assert result.memory_ids[:2] == [reply.pk, asked.pk]
    assert f"same conversation as #{asked.pk}" in reasons_of(result, reply)
    monkeypatch.setattr(speaker, "OTHER_SPEAKER", 1.0)
    assert hybrid(user, question, k=3).memory_ids[:2] == [asked.pk, reply.pk]
    # A question that names nobody who speaks leaves lines alone.
    assert hybrid(user, "Who finished the Porto marathon?", k=3).memory_ids[0] == asked.pk


def test_feedback_finds_what_the_best_match_names_but_the_question_does_not(user, other_user, memory_factory, monkeypatch):
    from memories.recall import feedback

    theirs = memory_factory("Yoga retreat and kickboxing camp, booked.", owner=other_user)
    best = memory_factory("My exercises this month: yoga twice a week and kickboxing on Fridays.")
    fillers(memory_factory, 10)  # apart, so that neither comes along as a neighbour
    yoga = memory_factory("Started a weekend yoga class with a colleague from work.")
    fillers(memory_factory, 10, source="notes")
    kickboxing = memory_factory("Kickboxing left me sore but full of energy.")
    question = "Which exercises have I done?"
    result = hybrid(user, question, k=5)
    assert result.memory_ids[0] == best.pk
    assert {yoga.pk, kickboxing.pk} <= set(result.memory_ids[1:])
    assert any(r.startswith("shares 'yoga'") and r.endswith("with the best matches") for r in reasons_of(result, yoga))
    assert any(r.startswith("shares 'kickboxing'") for r in reasons_of(result, kickboxing))
    # The second pass searches the owner's memories only, like the first.
    assert theirs.pk not in hybrid(user, question, k=50).memory_ids
    monkeypatch.setattr(feedback, "FEEDBACK_DOCS", 0)
    assert hybrid(user, question, k=5).memory_ids == [best.pk]


def test_feedback_shares_a_match_s_weight_among_its_key_words(user, monkeypatch):
    from memories.recall import feedback
    from memories.recall.candidates import Candidate, Question

    now = timezone.now()
    # Two matches as good as each other: the one with many key words comes first, but
    # its words each stand for a fifth of it; the other's one word stands for all of it.
    many = Candidate(1, "test", 0.5, now, frozenset(), ["alpha", "bravo", "charlie", "delta", "echo"], relevance=1.0, base=1.0)
    one = Candidate(2, "test", 0.5, now, frozenset(), ["yoga"], relevance=1.0, base=1.0)
    monkeypatch.setattr(feedback, "FEEDBACK_TERMS", 1)
    expansion = feedback.expand(user, {many.id: many, one.id: one}, Question({"exercis"}, [], now))
    assert expansion == ["yoga"]


@pytest.mark.parametrize(
    "question",
    [
        'falcon" OR NEAR(a b) * ^col: -x AND (',
        '"',
        "***",
        "falcon:* {raw_text}: NOT",
        "' ; DROP TABLE memories_memory; --",
        "ü@€ ½",
    ],
)
def test_fts_syntax_in_the_question_is_just_text(user, memory_factory, question):
    falcon = memory_factory(FALCON)
    result = hybrid(user, question)
    if "falcon" in question:
        assert result.memory_ids[0] == falcon.pk
    assert Memory.objects.filter(pk=falcon.pk).exists()


def test_a_question_without_searchable_words_falls_back_to_recent(user, memory_factory):
    older, newer = memory_factory("Met Tom at the market."), memory_factory("Called Ann about the trip.")
    result = hybrid(user, "what is it?")
    assert result.memory_ids == [newer.pk, older.pk]
    assert all("recent" in r.reasons for r in result.memories)


def test_context_stays_within_the_token_budget(user, memory_factory, settings):
    for i in range(6):
        memory_factory(f"Falcon status report {i}: " + "progress continues steadily on every front. " * 20)
    settings.MEMORY_RECALL_MAX_TOKENS = 600
    result = hybrid(user, "falcon status report", k=6)
    assert 1 <= len(result.memories) < 6
    assert result.context_tokens <= 600 + 50


def test_recall_rejects_an_unknown_strategy(user):
    with pytest.raises(ValueError, match="Unknown recall strategy"):
        recall(owner=user, question="x", strategy="psychic")


def test_index_follows_what_recall_may_read(user, other_user, memory_factory):
    """The index holds a memory for its owner only while it is ready and live: deleting,
    superseding, marking a near-duplicate or moving it changes the index at once."""
    memory = memory_factory("The zeppelin museum opens on Sundays.")
    newer = memory_factory("Zeppelin museum: now also open on Mondays.")
    assert index_ids(user, "zeppelin") == {memory.pk, newer.pk}

    Memory.all_objects.filter(pk=memory.pk).update(deleted_at=timezone.now())
    assert index_ids(user, "zeppelin") == {newer.pk}
    Memory.all_objects.filter(pk=memory.pk).update(deleted_at=None)
    assert index_ids(user, "zeppelin") == {memory.pk, newer.pk}

    Memory.all_objects.filter(pk=memory.pk).update(superseded_by=newer)
    assert index_ids(user, "zeppelin") == {newer.pk}
    Memory.all_objects.filter(pk=memory.pk).update(superseded_by=None, duplicate_of=newer)
    assert index_ids(user, "zeppelin") == {newer.pk}
    Memory.all_objects.filter(pk=memory.pk).update(duplicate_of=None, status=Memory.Status.FAILED)
    assert index_ids(user, "zeppelin") == {newer.pk}
    Memory.all_objects.filter(pk=memory.pk).update(status=Memory.Status.READY, owner=other_user)
    assert index_ids(user, "zeppelin") == {newer.pk}
    assert index_ids(other_user, "zeppelin") == {memory.pk}

    # A rebuild computes the same from the table.
    call_command("rebuild_index", stdout=open("/dev/null", "w"))
    assert index_ids(user, "zeppelin") == {newer.pk}
    assert index_ids(other_user, "zeppelin") == {memory.pk}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 table exists on SQLite only")
def test_install_replaces_an_index_of_the_old_layout(user, memory_factory):
    memory = memory_factory("The zeppelin museum opens on Sundays.")
    with connection.cursor() as cursor:
        lexical_index.uninstall(connection)
        # The first layout: external content, no scope column.
        cursor.execute(
            f"CREATE VIRTUAL TABLE {lexical_index.FTS_TABLE} USING fts5(raw_text, summary, entities, topics, source, "
            "content='memories_memory', content_rowid='id')"
        )
    lexical_index.install(connection)
    lexical_index.install(connection)  # idempotent
    assert index_ids(user, "zeppelin") == {memory.pk}
    later = memory_factory("A zeppelin flew over the fair.")
    assert index_ids(user, "zeppelin") == {memory.pk, later.pk}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="match planning is for FTS5")
def test_words_too_common_to_rank_do_not_hide_the_rare_one(user, memory_factory, monkeypatch):
    common = [memory_factory(f"Weekly report {i}: the team shipped the update.") for i in range(6)]
    rare = memory_factory("Weekly report: the quokka enclosure needs a new gate.")
    monkeypatch.setattr(sqlite_search, "MAX_MATCHES", 4)
    # "report" is in every memory, over the limit: "quokka" alone finds the candidates.
    assert [h.memory_id for h in search.lexical_search(owner=user, query=["report", "quokka"], limit=10)] == [rare.pk]
    # Every word is common: the memories with both rarest words are ranked.
    both = {h.memory_id for h in search.lexical_search(owner=user, query=["report", "team", "shipped"], limit=3)}
    assert both <= {m.pk for m in common} and len(both) == 3
    assert hybrid(user, "quokka report").memory_ids[0] == rare.pk


@pytest.mark.skipif(connection.vendor != "sqlite", reason="match planning is for FTS5")
def test_a_word_found_too_common_is_not_counted_again_until_the_store_changes(user, memory_factory, monkeypatch):
    from django.test.utils import CaptureQueriesContext

    for i in range(6):
        memory_factory(f"Weekly report {i}: the team shipped the update.")
    rare = memory_factory("Weekly report: the quokka enclosure needs a new gate.")
    monkeypatch.setattr(sqlite_search, "MAX_MATCHES", 4)

    def lookups_of_report():
        with CaptureQueriesContext(connection) as done:
            hits = search.lexical_search(owner=user, query=["report", "quokka"], limit=10)
        assert [h.memory_id for h in hits] == [rare.pk]  # the same answer, counted or remembered
        return sum('"report"' in str(q["sql"]) for q in done.captured_queries)

    assert lookups_of_report() == 2  # counted unscoped, then in the owner's scope
    assert lookups_of_report() == 0  # remembered as too common to find with
    from memories.services.bulk import bulk_remember

    bulk_remember(owner=user, items=[{"text": "Another weekly report.", "source": "test"}])  # (no update check that searches)
    assert lookups_of_report() == 2  # a new memory: counted afresh


def test_a_rare_word_counts_for_more_than_a_common_name(user, memory_factory):
    """bm25 weighs words by how rare they are, on either database (bm25.py)."""
    for i in range(8):
        memory_factory(f"Priya and I had lunch, round {i} of many.")
    name = memory_factory("Priya says hi.")
    rare = memory_factory("The quokka enclosure at the zoo needs a new gate before spring.")
    hits = search.lexical_search(owner=user, query=["priya", "quokka"], limit=20)
    ids = [h.memory_id for h in hits]
    assert ids[0] == rare.pk and ids.index(rare.pk) < ids.index(name.pk)


def test_context_says_nothing_twice(user, memory_factory):
    memory = memory_factory("Caroline: I went to the LGBTQ support group yesterday. It was so powerful and moving.")
    Memory.objects.filter(pk=memory.pk).update(
        summary="Caroline: I went to the LGBTQ support group yesterday.",
        entities=["Caroline", "Dr. Who"],
        topics=["support", "bakery"],
    )
    result = hybrid(user, "support group")
    text = result.to_context().render()
    # The extractive summary is in the text: printed once; entities and topics the text
    # already says are left out, the others stay.
    assert text.count("I went to the LGBTQ support group yesterday.") == 1
    assert "Entities: Dr. Who" in text and "Topics: bakery" in text


def test_the_context_reads_the_insights_sources_in_one_query_and_only_once(user, memory_factory, django_assert_num_queries):
    notes = [memory_factory(f"Falcon review, part {i}: the slides for section {i} are ready.") for i in range(10)]
    gone = notes[-1]
    for n in (1, 5):
        while Consolidation.objects.filter(owner=user).count() < n:
            i = Consolidation.objects.filter(owner=user).count()
            insight = Consolidation.objects.create(owner=user, summary=f"Falcon review {i}", insight=f"Falcon slides, part {i}.")
            insight.sources.set([notes[2 * i], notes[2 * i + 1]])
        result = hybrid(user, "falcon review slides", k=10)
        assert len(result.consolidations) == n
        # However many insights, their sources are one query.
        with django_assert_num_queries(1):
            context = result.to_context()
        by_id = {c.id: c for c in context.consolidations}
        for c in result.consolidations:
            assert by_id[c.pk].source_ids == tuple(sorted(c.sources.values_list("pk", flat=True)))
        # Read again (the answer, the token count, the page): nothing is asked twice.
        with django_assert_num_queries(0):
            assert result.to_context() is context
            assert result.context_tokens > 0
            assert result.to_context().render() == context.render()
    # A deleted source is not named as one.
    Memory.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())
    assert all(gone.pk not in c.source_ids for c in hybrid(user, "falcon review slides", k=10).to_context().consolidations)


def test_relevant_long_memories_cost_no_more_than_the_newest(user, memory_factory):
    """Below its first ranks, hybrid shows a long memory by its summary whenever showing it
    whole would make the context dearer than the owner's typical (newest) memories."""
    topics = "budget venue catering permits staffing press tickets weather parking insurance security music".split()
    made = [
        memory_factory(" ".join(f"Falcon launch {topic} item {j}: {topic} number {j * 7 + i} is settled." for j in range(8)))
        for i, topic in enumerate(topics)
    ]
    fillers(memory_factory, 12)
    result = hybrid(user, "falcon launch", k=12)
    assert {r.memory.pk for r in result.memories} == {m.pk for m in made}
    notes = result.to_context().memories
    assert all(n.text for n in notes[:FULL_TEXT_RANKS])
    assert all(not n.text and n.summary for n in notes[FULL_TEXT_RANKS:])
    # Most of the long texts are left out of the context.
    whole = sum(len(r.memory.raw_text) for r in result.memories)
    assert result.context_tokens < whole // 4
    # recent shows every memory whole, as the original design did.
    assert all(n.text for n in recall(owner=user, question="x", strategy="recent", k=12).to_context().memories)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="match planning is for FTS5")
def test_another_owners_common_words_do_not_change_my_ranking(user, other_user, memory_factory, monkeypatch):
    for i in range(6):
        memory_factory(f"Report {i} on the falcon budget.", owner=other_user)
    strong = memory_factory("Falcon budget: the falcon budget review of the falcon budget.")
    weak = memory_factory("Falcon note; budget later; first the long drive to the coast with friends this weekend.")
    monkeypatch.setattr(sqlite_search, "MAX_MATCHES", 4)
    # Both words are in 8 memories of the store but only 2 of mine: still ranked by bm25
    # (unranked, the newer one would come first).
    hits = search.lexical_search(owner=user, query=["falcon", "budget"], limit=10)
    assert [h.memory_id for h in hits] == [strong.pk, weak.pk]


# --- general signals: no lift between unrelated notes, per-owner statistics, any language ---


def test_notes_stored_next_to_a_hit_are_not_lifted(user, memory_factory):
    """Notes through the API share its default source; they are separate notes, not turns."""
    before = memory_factory("Bought a new bike helmet.", source="api")
    hit = memory_factory("The pricing launch moved to October.", source="api")
    after = memory_factory("Remember to water the ferns.", source="api")
    result = hybrid(user, "When is the pricing launch?", k=5)
    assert result.memory_ids[0] == hit.pk
    for note in (before, after):
        if note.pk in result.memory_ids:
            assert not any("same conversation" in r or "next to" in r for r in reasons_of(result, note))
            assert next(r.score for r in result.memories if r.memory.pk == note.pk) < 0.2


def test_turns_of_one_conversation_are_lifted_but_a_url_is_no_conversation(user, memory_factory):
    from memories.recall import source_group

    assert source_group("conv-26:D3:14") == ("conv-26:D3", True)
    assert source_group("report.pdf:7") == ("report.pdf", True)
    assert source_group("api") == ("api", False)
    assert source_group("https://example.com/page")[1] is False


def test_the_other_speakers_line_that_holds_the_answer_stays_near_the_top(user, memory_factory):
    # Ann talks a lot; Bob's line is the one that answers what the question asks.
    for i in range(6):
        memory_factory(f"Ann: Work was busy today, meeting number {i} about the job board.", source=f"chat:D{i + 2}:1")
    answer = memory_factory("Bob: Ann, the recruiter said the job offer in Lisbon pays 80k.", source="chat:D1:1")
    result = hybrid(user, "What did the recruiter tell Ann about the Lisbon job offer?", k=5)
    assert answer.pk in result.memory_ids[:3]


def test_one_owners_ranking_does_not_change_when_another_owner_adds_memories(user, other_user, memory_factory):
    for text in (
        "Garden party with Priya on Sunday.",
        "Priya lent me her garden shears.",
        "Lunch with Sam about the launch.",
        "The garden needs new soil before spring.",
        "Sam and Priya both like tulips.",
    ):
        memory_factory(text)
    question = "What did Priya lend me for the garden?"
    before = [(r.memory.pk, r.score) for r in hybrid(user, question).memories]
    # Bob stores many memories with the same words: table-wide statistics would shift.
    for i in range(30):
        memory_factory(f"Priya garden note {i}: garden garden shears", owner=other_user)
    after = [(r.memory.pk, r.score) for r in hybrid(user, question).memories]
    assert after == before


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Мы переехали в Москву прошлой весной, квартира у парка.", "Когда мы переехали в Москву?"),
        ("Hélène a commencé le violoncelle à Genève.", "Quel instrument Hélène joue à Genève?"),
        ("来月、東京で田中さんと会議があります。", "東京の会議はいつですか？"),
    ],
)
def test_questions_in_other_languages_find_their_memory_through_full_text(user, memory_factory, text, question):
    target = memory_factory(text)
    fillers(memory_factory, 12)
    result = hybrid(user, question, k=3)
    assert result.memory_ids[0] == target.pk
    assert "recent" not in reasons_of(result, target)
    assert any(r.startswith("matches") for r in reasons_of(result, target))
