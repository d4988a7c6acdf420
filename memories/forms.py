from django import forms
from django.utils import timezone

from .models import Memory
from .services.browse import SORTS

# One-click inputs on the ingest page, on the four themes of the original dashboard.
SAMPLE_INPUTS = [
    {
        "key": "agents",
        "label": "AI agents in production",
        "source": "sample: agents article",
        "text": (
            "Notes from reading about AI agents running in production. Teams that ship agents reliably keep "
            "the loop small: one model call plans, tools do the work, and every tool result is checked before "
            "the next step. The failures that hurt were silent ones, where an agent retried a broken API call "
            "forty times overnight. Observability matters more than prompt cleverness: log every tool call with "
            "its inputs, cap retries, and put a human approval step in front of anything that spends money."
        ),
    },
    {
        "key": "q1",
        "label": "Q1 planning meeting notes",
        "source": "sample: meeting notes",
        "text": (
            "Q1 planning meeting with Dana, Luis and Priya. Decisions: the mobile app beta ships by March 15; "
            "Luis owns the billing migration to the new provider; Priya starts hiring two backend engineers. "
            "Budget for cloud spend is capped at $18k a month. Risks: the billing migration depends on the "
            "vendor's sandbox, which has been unstable. Next check-in is February 3."
        ),
    },
    {
        "key": "research",
        "label": "Research on memory in LLM systems",
        "source": "sample: research summary",
        "text": (
            "Summary of recent work on memory for LLM systems. Long context windows help, but models still "
            "miss facts buried in the middle of a long prompt. Retrieval beats stuffing: choose the few passages "
            "that matter and cite them. Systems that periodically consolidate raw notes into higher-level "
            "summaries answer multi-step questions better, the way sleep consolidates human memory. Open "
            "problem: forgetting on purpose, so outdated facts stop being retrieved."
        ),
    },
    {
        "key": "inbox",
        "label": "A smart-inbox product idea",
        "source": "sample: product idea",
        "text": (
            "Product idea: a smart inbox that reads everything I forward to it (receipts, articles, voice memos, "
            "screenshots) and files it as memories. Each week it sends a digest of what connects, for example "
            "that three articles and a meeting all mention the billing migration. It should answer questions "
            "like 'what did I decide about the beta date?' with links to the original notes. Privacy first: "
            "runs on my own machine."
        ),
    },
]
SAMPLES_BY_KEY = {s["key"]: s for s in SAMPLE_INPUTS}

SAMPLE_QUESTIONS = [
    "What do I know about running AI agents in production?",
    "What was decided in the Q1 planning meeting?",
    "What does research say about memory in LLM systems?",
    "What connects my notes so far?",
]


class TextIngestForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "placeholder": "Anything worth remembering…"}), strip=False)
    source = forms.CharField(max_length=500, required=False, widget=forms.TextInput(attrs={"placeholder": "e.g. meeting notes"}))
    # Parsed by the ingest service, which says what it accepts when it cannot read it.
    occurred_at = forms.CharField(
        label="When did this happen?",
        max_length=40,
        required=False,
        widget=forms.TextInput(attrs={"type": "datetime-local"}),
    )

    def __init__(self, data=None, *args, **kwargs):
        # A sample button sends only its key; the text comes from here, not from the browser.
        if data is not None and (sample := SAMPLES_BY_KEY.get(data.get("sample", ""))):
            data = {"text": sample["text"], "source": sample["source"], "occurred_at": ""}
        super().__init__(data, *args, **kwargs)


class QuestionForm(forms.Form):
    q = forms.CharField(
        label="Question", max_length=2000, widget=forms.TextInput(attrs={"placeholder": "Ask your memory…", "autofocus": True})
    )


STATUS_CHOICES = [("", "Any status"), *Memory.Status.choices]
FACT_CHOICES = [("", "Current or past"), ("current", "Current"), ("superseded", "Superseded"), ("expired", "Expired")]
SORT_LABELS = {"new": "Newest", "old": "Oldest", "importance": "Most important", "occurred": "When it happened"}


class DateRangeForm(forms.Form):
    """A range of whole days, both included (the bank, the timeline)."""

    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date", "aria-label": "From"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date", "aria-label": "To"}))

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            raise forms.ValidationError("The range starts after it ends.")
        return data


class MemoryFilterForm(DateRangeForm):
    q = forms.CharField(
        label="Search",
        max_length=200,
        required=False,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Search text…"}),
    )
    # Any value is accepted (a card's chip links its exact topic); the page offers the
    # owner's most used ones as choices with counts (see views.memory_facets).
    topic = forms.CharField(max_length=200, required=False)
    entity = forms.CharField(max_length=200, required=False)
    status = forms.ChoiceField(choices=STATUS_CHOICES, required=False)
    fact = forms.ChoiceField(choices=FACT_CHOICES, required=False)
    sort = forms.ChoiceField(choices=[(k, SORT_LABELS.get(k, k)) for k in SORTS], required=False)
    after = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    before = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    # Set by the timeline and the graph (a clicked range, a source); shown once set.
    source = forms.CharField(max_length=500, required=False, widget=forms.HiddenInput)
    date_by = forms.ChoiceField(choices=[("occurred", "Happened"), ("stored", "Stored")], required=False)


class BulkDeleteForm(forms.Form):
    ids = forms.TypedMultipleChoiceField(coerce=int, error_messages={"required": "Select at least one memory to delete."})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Any ids are offered; the service only ever touches the owner's own.
        self.fields["ids"].valid_value = lambda value: str(value).isdigit() and len(str(value)) < 19

    def clean_ids(self):
        ids = list(dict.fromkeys(self.cleaned_data["ids"]))
        if len(ids) > 500:
            raise forms.ValidationError("Delete at most 500 memories at once.")
        return ids


class ClearForm(forms.Form):
    PHRASE = "delete my memories"
    confirm = forms.CharField(label=f'Type "{PHRASE}" to confirm', max_length=100)

    def clean_confirm(self):
        value = " ".join(self.cleaned_data["confirm"].split()).lower()
        if value != self.PHRASE:
            raise forms.ValidationError(f'Type exactly "{self.PHRASE}" to confirm; nothing was deleted.')
        return value


class MemoryEditForm(forms.Form):
    """A person's correction of what the extractor wrote.

    Plain text fields on purpose: the values are checked by `update_memory`, so the page and
    the API refuse the same things with the same words. `changed_data` (against the memory's
    current values as initial) keeps unchanged fields out of the recorded edit.
    """

    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, strip=False, max_length=5000)
    entities = forms.CharField(required=False, max_length=10_000, help_text="Comma-separated: people, places, organisations.")
    topics = forms.CharField(required=False, max_length=10_000, help_text="Comma-separated.")
    importance = forms.CharField(
        required=False,
        max_length=40,
        help_text="0 (trivia) to 1 (critical).",
        widget=forms.TextInput(attrs={"inputmode": "decimal"}),
    )
    occurred_at = forms.CharField(
        label="When it happened", required=False, max_length=40, widget=forms.TextInput(attrs={"type": "datetime-local"})
    )
    expires_at = forms.CharField(
        label="Forget after",
        required=False,
        max_length=40,
        help_text="It leaves recall then (stays in the bank, expired). Empty: never.",
        widget=forms.TextInput(attrs={"type": "datetime-local"}),
    )

    @classmethod
    def for_memory(cls, memory: Memory, data=None):
        initial = {
            "summary": memory.summary,
            "entities": ", ".join(memory.entities or []),
            "topics": ", ".join(memory.topics or []),
            "importance": f"{memory.importance:g}",
            "occurred_at": timezone.localtime(memory.occurred_at).strftime("%Y-%m-%dT%H:%M"),
            "expires_at": timezone.localtime(memory.expires_at).strftime("%Y-%m-%dT%H:%M") if memory.expires_at else "",
        }
        return cls(data, initial=initial, prefix="edit")

    def changes(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.changed_data}


class PurgeForm(forms.Form):
    # Sent only by the confirmation's button: a bare POST cannot erase anything.
    confirm = forms.ChoiceField(
        choices=[("purge", "purge")],
        error_messages={
            "required": "Confirm the purge on its confirmation page; nothing was erased.",
            "invalid_choice": "Confirm the purge on its confirmation page; nothing was erased.",
        },
    )


class TimelineForm(DateRangeForm):
    zoom = forms.ChoiceField(choices=[("day", "Day"), ("week", "Week"), ("month", "Month"), ("year", "Year")], required=False)


class StatsForm(forms.Form):
    days = forms.TypedChoiceField(
        choices=[(7, "7 days"), (30, "30 days"), (90, "90 days"), (365, "a year")], coerce=int, required=False
    )
