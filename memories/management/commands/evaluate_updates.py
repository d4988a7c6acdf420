"""Measure knowledge updates over a JSON file of scenarios (tests/data/updates.json).

Each scenario runs in a fresh space (rolled back afterwards): the shared background notes,
then its dated memories in order, each through the real ingest flow (extraction and the
update check, with the configured provider). Then its questions go through recall and
the answer. Reported:

- current first: for a question about the current value, its memory is recalled and ranks
  above every memory it superseded (scenarios with an update);
- past found: for a question about a past period, the superseded memory is in the top k;
- false updates: scenarios where two compatible facts (an expected non-update, or any pair
  not listed) were marked as an update;
- missed updates: expected updates not marked;
- answer names current: the answer quotes the current memory first (its first citation)
  and holds the expected value;
- past first: for a question about a past period, recall ranks the superseded memory
  first, and the answer cites it first.

A file of pairs ({"pairs": [{"old", "new", "update"}]}) is judged pair by pair instead.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from ...llm.base import MemoryNote, cited_ids
from ...llm.offline import OfflineProvider
from ...models import Memory
from ...recall import recall
from ...services import Actor, answer_question, extract_memory, ingest_text
from ...services.embed import embed_waiting

EVALUATE_UPDATES = Actor.for_command("evaluate_updates")


def _read(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"{path}: {exc}") from None


def judge_pairs(pairs: list[dict]) -> dict:
    """A file of {"old", "new", "update"} pairs (tests/data/update_pairs.json): each judged
    by the offline engine's update check alone (rules, then meaning), no database."""
    engine = OfflineProvider()
    wrong, found, false = [], 0, 0
    for pair in pairs:
        old, new = (
            MemoryNote(id=1, summary=pair["old"], text=pair["old"]),
            MemoryNote(id=2, summary=pair["new"], text=pair["new"]),
        )
        marked = bool(engine.judge_updates(new=new, candidates=[old]))
        found += marked and pair["update"]
        false += marked and not pair["update"]
        if marked != bool(pair["update"]):
            wrong.append(pair)
    updates = sum(bool(p["update"]) for p in pairs)
    return {
        "pairs": len(pairs),
        "updates_found": f"{found} of {updates}",
        "false_updates": f"{false} of {len(pairs) - updates}",
        "wrong": wrong,
    }


def load_scenarios(path: Path) -> dict:
    data = _read(path)
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise CommandError(f"{path}: expected an object with a 'scenarios' list.")
    for i, s in enumerate(data["scenarios"]):
        if not isinstance(s, dict) or not isinstance(s.get("memories"), list) or len(s["memories"]) < 2:
            raise CommandError(f"{path}: scenario {i} needs at least two memories.")
    return data


def run_scenario(scenario: dict, background: list[dict], *, k: int, answer: bool) -> dict:
    """One scenario in a space of its own; everything it stored is rolled back."""
    User = get_user_model()
    out = {"id": scenario.get("id", "?"), "questions": []}
    with transaction.atomic():
        owner = User.objects.create_user(username=f"evaluate-updates-{uuid.uuid4().hex[:12]}")
        for note in background:
            _store(owner, note)
        ids = [_store(owner, note) for note in scenario["memories"]]
        expected = {(ids[a], ids[b]) for a, b in scenario.get("updates", [])}
        marked = {
            (pk, new)
            for pk, new in Memory.objects.owned_by(owner).filter(outdated_by__isnull=False).values_list("pk", "outdated_by_id")
        }
        # In a chain A -> B -> C, C superseding A directly is as good as through B.
        out["false"] = sorted(marked - expected - _transitive(expected))
        out["missed"] = sorted(expected - marked)
        olds = {ids[a] for a, _ in scenario.get("updates", [])}
        for q in scenario.get("questions", []):
            result = recall(owner=owner, question=q["q"], k=k)
            ranked = result.memory_ids
            row = {"q": q["q"], "type": q["type"]}
            if q["type"] == "current":
                want = ids[q["expect"]]
                pos = ranked.index(want) if want in ranked else None
                row["ok"] = pos is not None and all(o not in ranked[:pos] for o in olds if o != want)
                if answer:
                    reply = answer_question(owner=owner, question=q["q"], k=k, actor=EVALUATE_UPDATES).answer
                    cites = cited_ids(reply)
                    value = str(q.get("answer", "")).lower()
                    row["answer_ok"] = bool(cites) and cites[0] == want and (not value or value in reply.lower())
                    row["answer"] = reply
            elif q["type"] == "past":
                want = ids[q["expect"]]
                row["ok"] = want in ranked
                row["first"] = bool(ranked) and ranked[0] == want
                if answer:
                    reply = answer_question(owner=owner, question=q["q"], k=k, actor=EVALUATE_UPDATES).answer
                    cites = cited_ids(reply)
                    row["answer_first"] = bool(cites) and cites[0] == want
                    row["answer"] = reply
            else:  # both: a non-update, every expected memory still recalled
                wants = q["expect"] if isinstance(q["expect"], list) else [q["expect"]]
                row["ok"] = all(ids[i] in ranked for i in wants)
            out["questions"].append(row)
        transaction.set_rollback(True)
    return out


def _transitive(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    out = set(pairs)
    changed = True
    while changed:
        changed = False
        for a, b in list(out):
            for c, d in list(out):
                if b == c and (a, d) not in out:
                    out.add((a, d))
                    changed = True
    return out


def _store(owner, note: dict) -> int:
    result = ingest_text(
        owner=owner,
        text=note["text"],
        source=note.get("source", "note"),
        occurred_at=note.get("occurred_at"),
        actor=EVALUATE_UPDATES,
    )
    extract_memory(result.memory.pk, actor=EVALUATE_UPDATES)
    # What a task worker does seconds later in the service: the memory's vector (recall's
    # meaning arm and its newer-first ordering read it).
    embed_waiting(owner=owner)
    return result.memory.pk


def summarise(results: list[dict], scenarios: list[dict]) -> dict:
    def pct(hits, total):
        return round(100.0 * hits / total, 1) if total else None

    by_id = {s.get("id", "?"): s for s in scenarios}
    current = [q for r in results for q in r["questions"] if q["type"] == "current"]
    past = [q for r in results for q in r["questions"] if q["type"] == "past"]
    both = [q for r in results for q in r["questions"] if q["type"] == "both"]
    answered = [q for q in current if "answer_ok" in q]
    non_updates = [r for r in results if not by_id[r["id"]].get("updates")]
    with_updates = [r for r in results if by_id[r["id"]].get("updates")]
    expected_pairs = sum(len(by_id[r["id"]]["updates"]) for r in with_updates)
    return {
        "scenarios": len(results),
        "current_first_pct": pct(sum(q["ok"] for q in current), len(current)),
        "past_found_pct": pct(sum(q["ok"] for q in past), len(past)),
        "past_first_pct": pct(sum(q.get("first", False) for q in past), len(past)),
        "answer_past_first_pct": pct(sum(q["answer_first"] for q in past if "answer_first" in q), len(past)),
        "non_update_both_recalled_pct": pct(sum(q["ok"] for q in both), len(both)),
        "false_update_pct": pct(sum(bool(r["false"]) for r in results), len(results)),
        "false_update_in_non_updates_pct": pct(sum(bool(r["false"]) for r in non_updates), len(non_updates)),
        "updates_found_pct": pct(expected_pairs - sum(len(r["missed"]) for r in with_updates), expected_pairs),
        "answer_names_current_pct": pct(sum(q["answer_ok"] for q in answered), len(answered)),
        "questions": {"current": len(current), "past": len(past), "both": len(both)},
    }


class Command(BaseCommand):
    help = "Measure knowledge updates (current first, past found, false updates, answers) over a scenario file."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--k", type=int, default=5, help="Memories recalled per question (default 5).")
        parser.add_argument("--no-answer", action="store_true", help="Skip the answers (recall and detection only).")
        parser.add_argument("--json", action="store_true", help="Print the figures and every scenario's outcome as JSON.")
        parser.add_argument("--verbose", action="store_true", help="List the scenarios that fail a check.")

    def handle(self, *args, **options):
        raw = _read(options["file"])
        if isinstance(raw, dict) and isinstance(raw.get("pairs"), list):
            summary = judge_pairs(raw["pairs"])
            if options["json"]:
                self.stdout.write(json.dumps(summary, indent=1))
                return
            for key, value in summary.items():
                if key != "wrong":
                    self.stdout.write(f"{key:34} {value}")
            if options["verbose"]:
                for p in summary["wrong"]:
                    self.stdout.write(f"- {'missed' if p['update'] else 'false'}: {p['old']!r} -> {p['new']!r}")
            return
        data = load_scenarios(options["file"])
        scenarios, background = data["scenarios"], data.get("background", [])
        results = [run_scenario(s, background, k=options["k"], answer=not options["no_answer"]) for s in scenarios]
        summary = summarise(results, scenarios)
        if options["json"]:
            self.stdout.write(json.dumps({"summary": summary, "results": results}, indent=1, default=str))
            return
        for key, value in summary.items():
            self.stdout.write(f"{key:34} {value}")
        if options["verbose"]:
            for r in results:
                problems = [f"false update {r['false']}"] if r["false"] else []
                problems += [f"missed update {r['missed']}"] if r["missed"] else []
                problems += [_problem(q) for q in r["questions"] if _has_problem(q)]
                if problems:
                    self.stdout.write(f"- {r['id']}: " + "; ".join(problems))


def _has_problem(q: dict) -> bool:
    # A past question is right when what held then comes first, in recall and in the answer.
    return not q["ok"] or not q.get("answer_ok", True) or not q.get("first", True) or not q.get("answer_first", True)


def _problem(q: dict) -> str:
    if q["type"] == "past":
        where = "first" if q["first"] else ("found, not first" if q["ok"] else "not found")
        said = f", answer {'first' if q['answer_first'] else 'not first'}: {q['answer']!r}" if "answer_first" in q else ""
        return f"past {q['q']!r}: {where}{said}"
    said = f", answer {'ok' if q['answer_ok'] else 'wrong'}: {q['answer']!r}" if "answer_ok" in q and not q["answer_ok"] else ""
    return f"{q['type']} {q['q']!r}: " + ("ok" if q["ok"] else "not first/found") + said
