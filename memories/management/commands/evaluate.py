"""Measure recall on LoCoMo-format data: does the context hold the turns an answer needs?"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from ... import embeddings, textutil
from ...llm.base import cited_ids
from ...llm.offline import OfflineProvider
from ...recall import STRATEGIES, recall
from ...services import Actor, bulk_remember
from ...services.digests import build_digests
from ...services.embed import embed_missing
from ._base import progress_bar

EVALUATE = Actor.for_command("evaluate")

CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial) has no evidence to find
ADVERSARIAL = 5
DEFAULT_KS = (5, 10, 25, 50)
SESSION_DATE_RE = re.compile(r"(?:(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)\s+on\s+)?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)
EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass
class Turn:
    dia_id: str
    text: str
    occurred_at: datetime | None
    speaker: str = ""


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[dict] = field(default_factory=list)
    # Category 5: questions the conversation cannot answer (the right reply is "not found").
    unanswerable: list[str] = field(default_factory=list)

    def asked_at(self, qa: dict, when: str = "now") -> datetime | None:
        """When a question is asked: its own `asked_at` if it has one; else, with `when`
        "after", the day after the conversation's last turn (as someone asks about what
        they just talked about; "last year" in the question then counts from there), or
        now (None)."""
        if qa.get("asked_at") or when == "now":
            return qa.get("asked_at")
        last = max((t.occurred_at for t in self.turns if t.occurred_at), default=None)
        return last + timedelta(days=1) if last else None

    def memory_items(self, *, as_notes: bool = False) -> list[dict]:
        """One memory a turn, for bulk_remember, in the order of the turns: its text,
        "sample:D1:3" as the source (so a memory's turn is known again), its session's
        date, its speaker as an entity.

        as_notes: stored as a collection of dated notes is, with nothing of the
        conversation's shape: the source "notes" for every one (no position, so no turn
        has neighbours) and no "Speaker: " opening (the speaker stays an entity)."""
        return [
            {
                "text": t.text.removeprefix(f"{t.speaker}: ") if as_notes and t.speaker else t.text,
                "source": "notes" if as_notes else f"{self.sample_id}:{t.dia_id}",
                "occurred_at": t.occurred_at,
                "entities": [t.speaker] if t.speaker else [],
            }
            for t in self.turns
        ]


def parse_session_date(value: str) -> datetime | None:
    """ "1:56 pm on 8 May, 2023" -> an aware datetime; None when it cannot be read."""
    m = SESSION_DATE_RE.search(value or "")
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    try:
        month_no = datetime.strptime(month[:3].title(), "%b").month
        hour_no = int(hour or 12) % 12 + (12 if ampm and ampm.lower().startswith("p") else 0)
        return timezone.make_aware(datetime(int(year), month_no, int(day), hour_no, int(minute or 0)))
    except ValueError:
        return None


def parse_asked_at(value) -> datetime | None:
    """ "2025-11-20" (or a session's "1:56 pm on 8 May, 2023") -> an aware datetime at noon."""
    if not value:
        return None
    try:
        day = datetime.fromisoformat(str(value))
    except ValueError:
        return parse_session_date(str(value))
    return day if timezone.is_aware(day) else timezone.make_aware(day.replace(hour=day.hour or 12))


def normalise_evidence(values) -> list[str]:
    """["D8:6; D9:17", "D:11:26", "D30:05"] -> ["D8:6", "D9:17", "D11:26", "D30:5"]."""
    out: dict[str, None] = {}
    for value in values or []:
        for session, turn in EVIDENCE_RE.findall(str(value)):
            out.setdefault(f"D{int(session)}:{int(turn)}", None)
    return list(out)


def load_locomo(path: Path) -> list[Conversation]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"{path}: {exc}") from None
    if not isinstance(data, list):
        raise CommandError(f"{path}: expected a JSON list of LoCoMo samples.")
    conversations = []
    for index, sample in enumerate(data):
        try:
            conversations.append(_conversation(sample, index))
        except (KeyError, TypeError, AttributeError) as exc:
            raise CommandError(f"{path}: sample {index} is not in LoCoMo format ({type(exc).__name__}: {exc}).") from None
    return conversations


def _conversation(sample: dict, index: int) -> Conversation:
    conv = sample["conversation"]
    # Some date keys have no session: count sessions from the session_N lists.
    numbers = sorted(
        int(key.split("_")[1]) for key, value in conv.items() if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    turns = []
    for n in numbers:
        when = parse_session_date(conv.get(f"session_{n}_date_time", ""))
        for turn in conv[f"session_{n}"]:
            text = f"{turn.get('speaker', '')}: {turn.get('text', '')}".strip(": ")
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            dia_id = normalise_evidence([turn["dia_id"]])
            if dia_id and text:
                turns.append(Turn(dia_id[0], text, when, str(turn.get("speaker") or "")))
    known = {t.dia_id for t in turns}
    questions, unanswerable = [], []
    for qa in sample.get("qa", []):
        category = int(qa.get("category", 0))
        if category == ADVERSARIAL and qa.get("question"):
            unanswerable.append(str(qa["question"]))
        evidence = [e for e in normalise_evidence(qa.get("evidence")) if e in known]
        if category in CATEGORIES and evidence and qa.get("question"):
            questions.append(
                {
                    "question": str(qa["question"]),
                    "category": category,
                    "evidence": evidence,
                    "answer": str(qa.get("answer", "")),
                    # Not LoCoMo's: when the question is asked, for data of one's own whose
                    # questions count from a day ("two weeks ago"); otherwise now.
                    "asked_at": parse_asked_at(qa.get("asked_at")),
                }
            )
    return Conversation(str(sample.get("sample_id") or f"sample-{index}"), turns, questions, unanswerable)


def run_label(strategy: str, backend: str) -> str:
    """A row of the report: the strategy, and the embeddings it ran with unless off."""
    return strategy if backend == "off" else f"{strategy}+{backend}"


def evaluate(
    conversations: list[Conversation],
    *,
    strategies: list[str],
    ks: list[int],
    embeddings_backends: tuple[str, ...] = ("off",),
    as_notes: bool = False,
    asked: str = "now",
    on_question=None,
) -> dict:
    """Recall of evidence turns at each k, per strategy and category, each conversation
    in its own throwaway space (rolled back afterwards). Each embeddings backend given
    embeds the conversation through the real embedding service and runs the strategies
    again; `recent` ignores meaning, so it runs once. as_notes: each turn stored as a
    note of its own (Conversation.memory_items). asked: when the questions are asked
    ("now", or "after" the conversation: Conversation.asked_at)."""
    runs = [(s, b) for b in embeddings_backends for s in strategies if b == embeddings_backends[0] or s != "recent"]
    labels = [run_label(s, b) for s, b in runs]
    found = {label: {k: defaultdict(list) for k in ks} for label in labels}
    tokens = {label: {k: [] for k in ks} for label in labels}
    digest_seconds: list[float] = []
    User = get_user_model()
    for conv in conversations:
        with transaction.atomic():
            owner = User.objects.create_user(username=f"evaluate-{uuid.uuid4().hex[:12]}")
            stored = bulk_remember(owner=owner, actor=EVALUATE, items=conv.memory_items(as_notes=as_notes))
            dia_of = {m.pk: turn.dia_id for m, turn in zip(stored, conv.turns, strict=True)}
            for backend in embeddings_backends:
                with embeddings.using(backend):
                    if backend != "off":
                        outcome = embed_missing(owner=owner)
                        if outcome.error:
                            raise CommandError(f"embeddings {backend}: {outcome.error}")
                    if settings.MEMORY_DIGESTS:
                        # As the consolidation run builds them (services/digests.py).
                        started = time.monotonic()
                        build_digests(owner)
                        digest_seconds.append(time.monotonic() - started)
                    for strategy in strategies:
                        label = run_label(strategy, backend)
                        if label not in found:
                            continue
                        for qa in conv.questions:
                            evidence = set(qa["evidence"])
                            for k in ks:
                                result = recall(
                                    owner=owner, question=qa["question"], strategy=strategy, k=k, now=conv.asked_at(qa, asked)
                                )
                                got = {dia_of.get(pk) for pk in result.memory_ids}
                                found[label][k][qa["category"]].append(len(evidence & got) / len(evidence))
                                tokens[label][k].append(result.context_tokens)
                            if on_question is not None:
                                on_question()
            transaction.set_rollback(True)
    report = {}
    for strategy in labels:
        per_k = found[strategy]
        questions = sum(len(v) for v in per_k[ks[0]].values())
        report[strategy] = {
            "questions": questions,
            "recall": {str(k): _mean([x for v in per_k[k].values() for x in v]) for k in ks},
            "by_category": {str(cat): {str(k): _mean(per_k[k][cat]) for k in ks} for cat in CATEGORIES if per_k[ks[0]][cat]},
            "mean_context_tokens": {str(k): round(_mean(tokens[strategy][k]), 1) for k in ks},
        }
    if digest_seconds:
        report["digests"] = {"builds": len(digest_seconds), "seconds": round(sum(digest_seconds), 2)}
    return report


def evaluate_answers(conversations: list[Conversation], *, k: int, as_notes: bool = False, on_question=None) -> dict:
    """The offline engine's answers against the gold answers: token F1 and the share of
    questions whose gold words all appear, for the engine before issue 13 ("baseline":
    the sentences sharing most rare question words) and the current one, on the same
    recalled context (hybrid, k memories, with the configured embeddings). And whether it
    knows when it does not know: the share of category-5 questions (the conversation does
    not say) answered "not found", against the share of answerable ones (1-4) still
    answered with a citation. as_notes: each turn stored as a note of its own
    (Conversation.memory_items)."""
    engine = OfflineProvider()
    scores = {"baseline": defaultdict(list), "engine": defaultdict(list)}
    complete = {"baseline": defaultdict(list), "engine": defaultdict(list)}
    abstained: dict[str, list[bool]] = {"baseline": [], "engine": []}
    cited: dict[str, list[bool]] = {"baseline": [], "engine": []}
    # Per conversation too: thresholds are chosen on some conversations and read on another.
    by_conversation: dict[str, dict[str, tuple[list[bool], list[bool]]]] = {"baseline": {}, "engine": {}}
    User = get_user_model()
    for conv in conversations:
        with transaction.atomic():
            owner = User.objects.create_user(username=f"evaluate-{uuid.uuid4().hex[:12]}")
            bulk_remember(
                owner=owner,
                actor=EVALUATE,
                items=conv.memory_items(as_notes=as_notes),
            )
            if embeddings.backend_name() != "off":
                outcome = embed_missing(owner=owner)
                if outcome.error:
                    raise CommandError(f"embeddings: {outcome.error}")
            if settings.MEMORY_DIGESTS:
                build_digests(owner)
            for qa in conv.questions:
                if not qa.get("answer"):
                    continue
                context = recall(owner=owner, question=qa["question"], strategy="hybrid", k=k).to_context()
                answers = {
                    "baseline": baseline_answer(qa["question"], context),
                    "engine": engine.answer(question=qa["question"], context=context),
                }
                for name, text in answers.items():
                    f1, whole = answer_scores(text, qa["answer"])
                    scores[name][qa["category"]].append(f1)
                    complete[name][qa["category"]].append(whole)
                    cited[name].append(bool(cited_ids(text)))
                    by_conversation[name].setdefault(conv.sample_id, ([], []))[0].append(bool(cited_ids(text)))
                if on_question is not None:
                    on_question()
            for question in conv.unanswerable:
                context = recall(owner=owner, question=question, strategy="hybrid", k=k).to_context()
                for name, text in (
                    ("baseline", baseline_answer(question, context)),
                    ("engine", engine.answer(question=question, context=context)),
                ):
                    abstained[name].append(not cited_ids(text))
                    by_conversation[name].setdefault(conv.sample_id, ([], []))[1].append(not cited_ids(text))
                if on_question is not None:
                    on_question()
            transaction.set_rollback(True)
    report = {}
    for name in scores:
        report[name] = {
            "questions": sum(len(v) for v in scores[name].values()),
            "f1": _mean([x for v in scores[name].values() for x in v]),
            "gold_words_present": _mean([x for v in complete[name].values() for x in v]),
            "answerable_cited": _mean(cited[name]),
            "unanswerable": len(abstained[name]),
            "unanswerable_not_found": _mean(abstained[name]),
            "by_conversation": {
                sample: {"answerable_cited": _mean(answered), "unanswerable_not_found": _mean(not_found)}
                for sample, (answered, not_found) in by_conversation[name].items()
            },
            "by_category": {
                str(c): {"f1": _mean(scores[name][c]), "gold_words_present": _mean(complete[name][c])}
                for c in CATEGORIES
                if scores[name][c]
            },
        }
    return report


_CITATION = re.compile(r"\[Memory\s+\d+\]", re.I)
_LEAD_INS = ("from your memories:", "here is what stands out in your memories:")
_NOTHING = ("i couldn't find anything", "i have no memories")
_ARTICLES = {"a", "an", "the"}


def normalise_answer(text: str) -> list[str]:
    """Lower case, no citations or lead-in line, no punctuation or articles (SQuAD-style)."""
    text = _CITATION.sub(" ", str(text)).lower()
    for lead in _LEAD_INS:
        text = text.replace(lead, " ")
    if text.strip().startswith(_NOTHING):
        return []
    text = re.sub(r"[^\w\s]", " ", text)
    return [w for w in text.split() if w not in _ARTICLES]


def answer_scores(answer: str, gold: str) -> tuple[float, float]:
    """(token F1, 1.0 when every gold word is in the answer)."""
    got, want = normalise_answer(answer), normalise_answer(gold)
    if not want:
        return 0.0, 0.0
    common = sum((Counter(got) & Counter(want)).values())
    whole = float(all(w in set(got) for w in want))
    if not common:
        return 0.0, whole
    precision, recall_ = common / len(got), common / len(want)
    return 2 * precision * recall_ / (precision + recall_), whole


def baseline_answer(question: str, context) -> str:
    """The offline answerer as it was before issue 13, kept here to compare against: the up
    to three sentences sharing the most rare question words."""
    if not context.memories:
        return "I have no memories to answer from yet."
    q_terms = [t for t in dict.fromkeys(textutil.terms(question)) if t not in _BASELINE_META]
    if not q_terms:
        top = sorted(context.memories, key=lambda m: -m.importance)[:5]
        return "Here is what stands out in your memories:\n\n" + "\n".join(f"- {m.summary} [Memory {m.id}]" for m in top)
    docs = {m.id: set(textutil.terms(f"{m.text or m.summary} {' '.join(m.entities)}")) for m in context.memories}
    n = len(docs)
    weight = {t: math.log(1 + n / (1 + sum(t in d for d in docs.values()))) for t in q_terms}
    scored = []
    for m in context.memories:
        for sentence in textutil.sentences(m.text or m.summary) or [m.summary]:
            s_terms = set(textutil.terms(sentence))
            hit = [t for t in q_terms if t in s_terms]
            if hit:
                scored.append((sum(weight[t] for t in hit) * (1 + 0.2 * m.importance), len(hit), m.id, sentence))
    if not scored:
        return "I couldn't find anything about that in your memories."
    scored.sort(key=lambda s: (-s[0], -s[1]))
    best = scored[0][0]
    picked, seen = [], set()
    for score, _, memory_id, sentence in scored:
        if score < best * 0.5 or len(picked) == 3:
            break
        if (memory_id, sentence) not in seen:
            seen.add((memory_id, sentence))
            picked.append(f"- {sentence} [Memory {memory_id}]")
    return "From your memories:\n\n" + "\n".join(picked)


_BASELINE_META = {
    textutil.stem(w)
    for w in "memory memories know key theme themes summarize summary overview main important recent latest everything stored store remember tell about".split()
}


def _mean(values) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


class Command(BaseCommand):
    help = "Evidence recall at k on LoCoMo-format data, for several recall strategies side by side."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="A LoCoMo-format JSON file (e.g. ../shared/data/locomo-dev.json).")
        parser.add_argument(
            "--strategy", nargs="+", action="extend", choices=sorted(STRATEGIES), help="Strategies to compare (default: all)."
        )
        parser.add_argument("--k", nargs="+", action="extend", type=int, help="Context sizes (default: 5 10 25 50).")
        parser.add_argument("--limit-conversations", type=int, help="Only the first N conversations.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")
        parser.add_argument(
            "--answers",
            action="store_true",
            help="Score the offline engine's answers against the gold answers (token F1), before and after issue 13.",
        )
        parser.add_argument(
            "--answer-k", type=int, default=None, help="Memories recalled for each answer (default: MEMORY_RECALL_K)."
        )
        parser.add_argument(
            "--as-notes",
            action="store_true",
            help="Store each turn as a note of its own (source 'notes', no speaker opening): recall without a conversation's shape.",
        )
        parser.add_argument(
            "--asked",
            choices=("now", "after"),
            default="now",
            help="When the questions are asked: now, or the day after each conversation's last turn "
            "(a question's own asked_at always wins).",
        )
        parser.add_argument(
            "--digests",
            choices=("on", "off"),
            help="Build digests as the consolidation run does (after embedding) and let recall use them "
            "(default: MEMORY_DIGESTS). The build's time is reported.",
        )
        parser.add_argument(
            "--embeddings",
            nargs="+",
            action="extend",
            choices=embeddings.CHOICES,
            help="Embeddings to run with, side by side (default: off, and MEMORY_EMBEDDINGS's backend when it is not off).",
        )

    def handle(self, *args, **options):
        # For this command only (the setting is read by recall and by the setup's build).
        digests = options["digests"]
        with override_settings(MEMORY_DIGESTS=digests == "on" if digests else settings.MEMORY_DIGESTS):
            self._handle(**options)

    def _handle(self, **options):
        ks = sorted(set(options["k"] or DEFAULT_KS))
        if any(k < 1 or k > 500 for k in ks):
            raise CommandError("--k values must be between 1 and 500.")
        strategies = options["strategy"] or sorted(STRATEGIES, key=lambda s: s != "recent")
        conversations = load_locomo(Path(options["dataset"]))
        if options["limit_conversations"]:
            conversations = conversations[: max(0, options["limit_conversations"])]
        if not any(c.questions for c in conversations):
            raise CommandError("No questions of categories 1-4 with evidence found in the dataset.")
        if options["answers"]:
            total = sum(len(c.questions) + len(c.unanswerable) for c in conversations)
            with progress_bar(total=total, desc="answers", unit="q") as bar:
                report = evaluate_answers(
                    conversations,
                    k=options["answer_k"] or settings.MEMORY_RECALL_K,
                    as_notes=options["as_notes"],
                    on_question=lambda: bar.update(1),
                )
            if options["json"]:
                self.stdout.write(json.dumps(report, indent=2))
                return
            self._answer_table(report, len(conversations))
            return
        # By default: without embeddings, and with the ones configured (MEMORY_EMBEDDINGS).
        names = options["embeddings"] or ["off", embeddings.configured()]
        backends = list(dict.fromkeys(self._backend(name) for name in names))
        total = sum(len(c.questions) for c in conversations) * len(strategies) * len(backends)
        with progress_bar(total=total, desc="questions", unit="q") as bar:
            report = evaluate(
                conversations,
                strategies=strategies,
                ks=ks,
                embeddings_backends=tuple(backends),
                as_notes=options["as_notes"],
                asked=options["asked"],
                on_question=lambda: bar.update(1),
            )
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._table(report, ks, len(conversations), as_notes=options["as_notes"])

    @staticmethod
    def _backend(name: str) -> str:
        with embeddings.using(name):
            try:
                return embeddings.backend_name()
            except embeddings.EmbeddingError as exc:
                raise CommandError(str(exc)) from None

    def _table(self, report: dict, ks: list[int], n_conversations: int, *, as_notes: bool = False):
        head = f"{'strategy':<16} {'category':<10} " + " ".join(f"{'R@' + str(k):>7}" for k in ks)
        stored = ", each turn stored as a note" if as_notes else ""
        self.stdout.write(f"{n_conversations} conversation(s){stored}, categories 1-4, evidence recall at k")
        self.stdout.write(head)
        digests = report.pop("digests", None)
        for strategy, row in report.items():
            self.stdout.write(
                f"{strategy:<16} {'all':<10} "
                + " ".join(f"{row['recall'][str(k)]:>7.1%}" for k in ks)
                + f"   ({row['questions']} questions)"
            )
            for cat, values in row["by_category"].items():
                self.stdout.write(f"{'':<16} {cat:<10} " + " ".join(f"{values[str(k)]:>7.1%}" for k in ks))
            self.stdout.write(f"{'':<16} {'tokens':<10} " + " ".join(f"{row['mean_context_tokens'][str(k)]:>7.0f}" for k in ks))
        if digests:
            self.stdout.write(f"digests built {digests['builds']} time(s) in {digests['seconds']:.2f} s")

    def _answer_table(self, report: dict, n_conversations: int):
        self.stdout.write(f"{n_conversations} conversation(s), categories 1-4, offline answers against the gold answers")
        self.stdout.write(f"{'engine':<10} {'category':<10} {'token F1':>9} {'all gold words':>15}")
        for name, row in report.items():
            self.stdout.write(
                f"{name:<10} {'all':<10} {row['f1']:>9.1%} {row['gold_words_present']:>15.1%}   ({row['questions']} questions)"
            )
            for cat, values in row["by_category"].items():
                self.stdout.write(f"{'':<10} {cat:<10} {values['f1']:>9.1%} {values['gold_words_present']:>15.1%}")
        self.stdout.write("")
        self.stdout.write(f"{'engine':<10} {'answerable (1-4) cited':>24} {'unanswerable (5) not found':>28}")
        for name, row in report.items():
            self.stdout.write(
                f"{name:<10} {row['answerable_cited']:>24.1%} {row['unanswerable_not_found']:>28.1%}"
                f"   ({row['questions']} / {row['unanswerable']} questions)"
            )
            for sample, values in row["by_conversation"].items():
                self.stdout.write(
                    f"{'  ' + sample:<10} {values['answerable_cited']:>24.1%} {values['unanswerable_not_found']:>28.1%}"
                )
