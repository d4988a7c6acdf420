"""Measure recall on LoCoMo-format data: does the context hold the turns an answer needs?"""

from __future__ import annotations

import json
import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from ... import embeddings
from ...llm.offline import OfflineProvider
from ...models import Memory, content_hash
from ...recall import STRATEGIES, recall
from ...services.embed import embed_missing

CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial) has no evidence to find
DEFAULT_KS = (5, 10, 25, 50)
SESSION_DATE_RE = re.compile(
    r"(?:(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)\s+on\s+)?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I
)
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


def parse_session_date(value: str) -> datetime | None:
    """"1:56 pm on 8 May, 2023" -> an aware datetime; None when it cannot be read."""
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
    numbers = sorted(int(key.split("_")[1]) for key, value in conv.items() if re.fullmatch(r"session_\d+", key) and isinstance(value, list))
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
    questions = []
    for qa in sample.get("qa", []):
        category = int(qa.get("category", 0))
        evidence = [e for e in normalise_evidence(qa.get("evidence")) if e in known]
        if category in CATEGORIES and evidence and qa.get("question"):
            questions.append({"question": str(qa["question"]), "category": category, "evidence": evidence})
    return Conversation(str(sample.get("sample_id") or f"sample-{index}"), turns, questions)


def bulk_remember(*, owner, items: list[dict], batch_size: int = 500) -> list[Memory]:
    """Store many texts as ready memories at once, extracted by the offline engine: the
    fast path for evaluation and benchmarks (no per-memory transaction or task).
    Each item: {"text", "source", "occurred_at"} and optionally "entities" known beforehand
    (the speaker of a chat turn), kept ahead of the extracted ones."""
    engine = OfflineProvider()
    now = timezone.now()
    memories = []
    for item in items:
        extraction = engine.extract(text=item["text"], files=[], source=item.get("source", ""))
        memories.append(Memory(
            owner=owner,
            source=(item.get("source") or "bulk")[:500],
            raw_text=item["text"],
            content_hash=content_hash(item["text"]),
            summary=extraction.summary,
            entities=list(dict.fromkeys([*item.get("entities", []), *extraction.entities]))[:30],
            topics=extraction.topics[:30],
            importance=extraction.importance,
            occurred_at=item.get("occurred_at") or now,
            status=Memory.Status.READY,
            provider=engine.label,
        ))
    return Memory.objects.bulk_create(memories, batch_size=batch_size)


def run_label(strategy: str, backend: str) -> str:
    """A row of the report: the strategy, and the embeddings it ran with unless off."""
    return strategy if backend == "off" else f"{strategy}+{backend}"


def evaluate(conversations: list[Conversation], *, strategies: list[str], ks: list[int], embeddings_backends: tuple[str, ...] = ("off",)) -> dict:
    """Recall of evidence turns at each k, per strategy and category, each conversation
    in its own throwaway space (rolled back afterwards). Each embeddings backend given
    embeds the conversation through the real embedding service and runs the strategies
    again; `recent` ignores meaning, so it runs once."""
    runs = [(s, b) for b in embeddings_backends for s in strategies if b == embeddings_backends[0] or s != "recent"]
    labels = [run_label(s, b) for s, b in runs]
    found = {label: {k: defaultdict(list) for k in ks} for label in labels}
    tokens = {label: {k: [] for k in ks} for label in labels}
    User = get_user_model()
    for conv in conversations:
        with transaction.atomic():
            owner = User.objects.create_user(username=f"evaluate-{uuid.uuid4().hex[:12]}")
            stored = bulk_remember(owner=owner, items=[
                {"text": t.text, "source": f"{conv.sample_id}:{t.dia_id}", "occurred_at": t.occurred_at, "entities": [t.speaker] if t.speaker else []}
                for t in conv.turns
            ])
            dia_of = {m.pk: m.source.split(":", 1)[1] for m in stored}
            for backend in embeddings_backends:
                with embeddings.using(backend):
                    if backend != "off":
                        outcome = embed_missing(owner=owner)
                        if outcome.error:
                            raise CommandError(f"embeddings {backend}: {outcome.error}")
                    for strategy in strategies:
                        label = run_label(strategy, backend)
                        if label not in found:
                            continue
                        for qa in conv.questions:
                            evidence = set(qa["evidence"])
                            for k in ks:
                                result = recall(owner=owner, question=qa["question"], strategy=strategy, k=k)
                                got = {dia_of.get(pk) for pk in result.memory_ids}
                                found[label][k][qa["category"]].append(len(evidence & got) / len(evidence))
                                tokens[label][k].append(result.context_tokens)
            transaction.set_rollback(True)
    report = {}
    for strategy in labels:
        per_k = found[strategy]
        questions = sum(len(v) for v in per_k[ks[0]].values())
        report[strategy] = {
            "questions": questions,
            "recall": {str(k): _mean([x for v in per_k[k].values() for x in v]) for k in ks},
            "by_category": {
                str(cat): {str(k): _mean(per_k[k][cat]) for k in ks} for cat in CATEGORIES if per_k[ks[0]][cat]
            },
            "mean_context_tokens": {str(k): round(_mean(tokens[strategy][k]), 1) for k in ks},
        }
    return report


def _mean(values) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


class Command(BaseCommand):
    help = "Evidence recall at k on LoCoMo-format data, for several recall strategies side by side."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="A LoCoMo-format JSON file (e.g. ../shared/data/locomo-dev.json).")
        parser.add_argument("--strategy", nargs="+", action="extend", choices=sorted(STRATEGIES), help="Strategies to compare (default: all).")
        parser.add_argument("--k", nargs="+", action="extend", type=int, help="Context sizes (default: 5 10 25 50).")
        parser.add_argument("--limit-conversations", type=int, help="Only the first N conversations.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")
        parser.add_argument(
            "--embeddings", nargs="+", action="extend", choices=embeddings.CHOICES,
            help="Embeddings to run with, side by side (default: off, and MEMORY_EMBEDDINGS's backend when it is not off).",
        )

    def handle(self, *args, **options):
        ks = sorted(set(options["k"] or DEFAULT_KS))
        if any(k < 1 or k > 500 for k in ks):
            raise CommandError("--k values must be between 1 and 500.")
        strategies = options["strategy"] or sorted(STRATEGIES, key=lambda s: s != "recent")
        conversations = load_locomo(Path(options["dataset"]))
        if options["limit_conversations"]:
            conversations = conversations[: max(0, options["limit_conversations"])]
        if not any(c.questions for c in conversations):
            raise CommandError("No questions of categories 1-4 with evidence found in the dataset.")
        # By default: without embeddings, and with the ones configured (MEMORY_EMBEDDINGS).
        names = options["embeddings"] or ["off", embeddings.configured()]
        backends = list(dict.fromkeys(self._backend(name) for name in names))
        report = evaluate(conversations, strategies=strategies, ks=ks, embeddings_backends=tuple(backends))
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._table(report, ks, len(conversations))

    @staticmethod
    def _backend(name: str) -> str:
        with embeddings.using(name):
            try:
                return embeddings.backend_name()
            except embeddings.EmbeddingError as exc:
                raise CommandError(str(exc)) from None

    def _table(self, report: dict, ks: list[int], n_conversations: int):
        head = f"{'strategy':<16} {'category':<10} " + " ".join(f"{'R@' + str(k):>7}" for k in ks)
        self.stdout.write(f"{n_conversations} conversation(s), categories 1-4, evidence recall at k")
        self.stdout.write(head)
        for strategy, row in report.items():
            self.stdout.write(f"{strategy:<16} {'all':<10} " + " ".join(f"{row['recall'][str(k)]:>7.1%}" for k in ks) + f"   ({row['questions']} questions)")
            for cat, values in row["by_category"].items():
                self.stdout.write(f"{'':<16} {cat:<10} " + " ".join(f"{values[str(k)]:>7.1%}" for k in ks))
            self.stdout.write(f"{'':<16} {'tokens':<10} " + " ".join(f"{row['mean_context_tokens'][str(k)]:>7.0f}" for k in ks))
