import hashlib
import uuid
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone


def content_hash(text: str = "", data: bytes | None = None) -> str:
    """Identity of an input: the bytes of a file, or the whitespace-normalised text."""
    digest = hashlib.sha256()
    if data is not None:
        digest.update(data)
    else:
        digest.update(" ".join(text.split()).encode("utf-8"))
    return digest.hexdigest()


def original_upload_path(instance, filename):
    # A random folder per file: the user's file name is kept for display, but two
    # uploads with the same name never collide and nothing in it can escape MEDIA_ROOT.
    name = PurePosixPath(filename).name[-150:] or "file"
    return f"originals/{instance.owner_id}/{uuid.uuid4().hex}/{name}"


LIVE = Q(deleted_at__isnull=True, superseded_by__isnull=True)


class OwnedQuerySet(models.QuerySet):
    """Rows of one space. The owner rule is written here once: every read or write of a
    person's things starts from `owned_by(owner)` (a user or a user id), so a lookup that
    forgets the owner stands out in review."""

    def owned_by(self, owner):
        return self.filter(owner=owner)


OwnedManager = models.Manager.from_queryset(OwnedQuerySet)


class MemoryQuerySet(OwnedQuerySet):
    def bulk_create(self, objs, *args, **kwargs):
        # What Memory.save stores of each memory's words, for memories written in bulk.
        objs = list(objs)
        for memory in objs:
            _store_recall_figures(memory)
        return super().bulk_create(objs, *args, **kwargs)


# What recall works out of a memory when it is written, so it need not on every question
# (recall/stored.py's `store`; apps.py sets it, as models may not import recall).
store_recall_figures = None


def _store_recall_figures(memory) -> list[str]:
    """The stored figures set on the memory, as recall/stored.py says; the fields set."""
    return store_recall_figures(memory) if store_recall_figures is not None else []


MemoryManager = models.Manager.from_queryset(MemoryQuerySet)


class LiveMemoryManager(MemoryManager):
    """Memories still in force: not deleted, not superseded by a newer version.

    The default manager, so every list, recall and lookup leaves tombstoned memories
    out without having to remember to; history and admin use `all_objects`.
    """

    def get_queryset(self):
        return super().get_queryset().filter(LIVE)


class Memory(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        REVIEW = "review", "Waiting for review"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    class State(models.TextChoices):
        """Where a memory stands in the record, apart from its extraction status."""

        LIVE = "live", "Live"
        DELETED = "deleted", "Deleted"
        SUPERSEDED = "superseded", "Superseded"
        DUPLICATE = "near-duplicate", "Near-duplicate"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    source = models.CharField(max_length=500, blank=True)
    raw_text = models.TextField(blank=True)
    original = models.FileField(upload_to=original_upload_path, max_length=500, blank=True)
    mime_type = models.CharField(max_length=100, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    summary = models.TextField(blank=True)
    entities = models.JSONField(default=list, blank=True)
    topics = models.JSONField(default=list, blank=True)
    importance = models.FloatField(default=0.5)
    occurred_at = models.DateTimeField(default=timezone.now, db_index=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Set while a worker is extracting: a lease, so a task delivered twice runs once, and
    # a worker that died mid-extraction is noticed (the lease runs out) and replaced.
    extracting_since = models.DateTimeField(null=True, blank=True)
    provider = models.CharField(max_length=100, blank=True, help_text="Which engine extracted it.")
    consolidated_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True)
    # Near-duplicate detection: MinHash buckets of the text (textutil.minhash_bands), so
    # finding candidates is an indexed lookup instead of a scan of the owner's memories.
    sim_band0 = models.PositiveIntegerField(null=True, blank=True)
    sim_band1 = models.PositiveIntegerField(null=True, blank=True)
    sim_band2 = models.PositiveIntegerField(null=True, blank=True)
    sim_band3 = models.PositiveIntegerField(null=True, blank=True)
    duplicate_of = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="near_duplicates")

    deleted_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes")
    # A newer memory changed the fact this one states ("I moved to Berlin" after "I live in
    # Paris"). Unlike superseded_by (a replaced file version, out of the record) it stays
    # in the bank and in recall: true until `valid_until`, ranked below its successor.
    outdated_by = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="outdates")
    valid_until = models.DateTimeField(null=True, blank=True)
    # Forgetting on purpose: past expires_at a memory leaves recall but stays in the bank.
    expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # When an answer last cited it; importance fades with time unless it is used.
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    # The importance before fading (null: not faded); using the memory brings it back.
    base_importance = models.FloatField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The times its words name, worked out from its text and its day when it is saved,
    # so recall does not run the date patterns over every candidate on every question
    # (recall/dates.py: stored_event_dates, events_of; a value that no longer agrees with
    # the text, written by a path that bypassed save, is never used).
    event_dates = models.TextField(null=True, blank=True, editable=False)
    # What showing it in an answer's context costs, worked out when it is saved (recall/
    # budget.py: context_cost_of; one that no longer agrees with the memory is not used).
    context_cost = models.CharField(max_length=40, null=True, blank=True, editable=False)
    # The key words of its entities and topics as recall matches them to a question, worked
    # out when it is saved (recall/words.py: stored_keys_of, keys; a value that no longer
    # agrees with them, or made by other word rules, is not used).
    recall_keys = models.TextField(null=True, blank=True, editable=False)

    objects = LiveMemoryManager()
    all_objects = MemoryManager()

    class Meta:
        verbose_name = "memory"
        verbose_name_plural = "memories"
        ordering = ["-created_at", "-id"]
        base_manager_name = "all_objects"
        indexes = [
            models.Index(fields=["owner", "status", "-created_at"], name="memory_owner_status_new"),
            # The memory bank's sort orders over live memories: a page is an index range scan,
            # not a sort of all the owner's rows.
            models.Index(fields=["owner", "-created_at", "-id"], name="memory_owner_new", condition=LIVE),
            models.Index(fields=["owner", "-importance", "-id"], name="memory_owner_importance", condition=LIVE),
            # The timeline counts live memories per day of occurred_at: a scan of this index, not the table.
            models.Index(fields=["owner", "occurred_at"], name="memory_owner_occurred", condition=LIVE),
            models.Index(
                fields=["owner", "created_at"],
                condition=Q(status="ready", consolidated_at__isnull=True),
                name="memory_unconsolidated",
            ),
            *(models.Index(fields=["owner", f"sim_band{i}"], name=f"memory_sim_band{i}") for i in range(4)),
            # "Is this content already stored here?" on every ingest: with only the
            # one-column indexes SQLite's planner walked the owner's rows by a sim band.
            models.Index(fields=["owner", "content_hash"], name="memory_owner_content"),
        ]

    def __str__(self):
        return f"Memory {self.pk}: {self.summary[:60] or self.source}"

    def save(self, *args, **kwargs):
        stored = _store_recall_figures(self)
        update_fields = kwargs.get("update_fields")
        if update_fields:
            kwargs["update_fields"] = list(dict.fromkeys([*update_fields, *stored]))
        super().save(*args, **kwargs)

    @property
    def is_live(self) -> bool:
        return self.deleted_at is None and self.superseded_by_id is None

    @property
    def state(self) -> "Memory.State":
        """Deleted before superseded: a deleted old version is, first of all, deleted."""
        if self.deleted_at is not None:
            return self.State.DELETED
        if self.superseded_by_id is not None:
            return self.State.SUPERSEDED
        return self.State.DUPLICATE if self.duplicate_of_id is not None else self.State.LIVE

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING

    @property
    def is_extracted(self) -> bool:
        """The model has read it: summary, entities, topics and importance are its own."""
        return self.status in (self.Status.READY, self.Status.REVIEW)

    @property
    def is_editable(self) -> bool:
        # An extraction still to come would overwrite a correction; a tombstone is restored first.
        return self.is_live and self.is_extracted

    @property
    def preview_kind(self) -> str:
        """How a page shows the original file inline ("image", "audio", "video", "pdf"), or
        "" when it is offered as a download only."""
        if not self.original:
            return ""
        mime = self.mime_type or ""
        # SVG can carry script: offered as a download only.
        if mime.startswith("image/") and mime != "image/svg+xml":
            return "image"
        if mime.startswith(("audio/", "video/")):
            return mime.split("/", 1)[0]
        return "pdf" if mime == "application/pdf" else ""

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_faded(self) -> bool:
        return self.base_importance is not None and self.base_importance > self.importance

    @property
    def file_name(self) -> str:
        return PurePosixPath(self.original.name).name if self.original else ""


class MemoryVector(models.Model):
    """A memory's embedding: recall's meaning arm. One per memory, tagged with the model
    and dimension that made it, so vectors of two models are never compared; a memory
    whose vector is missing, from another model, or of text since changed is embedded
    again (`manage.py embed`, the sweep)."""

    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, primary_key=True, related_name="vector")
    # The memory's owner, copied: the meaning arm reads one owner's vectors by an index.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()  # float32, little-endian, unit length
    text_hash = models.CharField(max_length=64)  # of the text embedded (embed_text)
    embedded_at = models.DateTimeField(auto_now=True)

    objects = OwnedManager()

    class Meta:
        indexes = [models.Index(fields=["owner", "model", "embedded_at"], name="vector_owner_model")]

    def __str__(self):
        return f"Vector of memory {self.memory_id} ({self.model}, {self.dim})"


class MemoryTerms(models.Model):
    """A memory's latent terms (embeddings/terms.py): recall's third arm. One row per
    memory, kept like its vector: tagged with the model that made them, dropped when the
    memory is hidden, made again when its text changes."""

    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, primary_key=True, related_name="terms")
    # The memory's owner, copied: the arm reads one owner's rows by an index.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    terms = models.BinaryField()  # feature ids (uint16) then weights (float16), little-endian
    text_hash = models.CharField(max_length=64)  # of the text read (services/embed.py's embed_text)
    embedded_at = models.DateTimeField(auto_now=True)

    objects = OwnedManager()

    class Meta:
        indexes = [models.Index(fields=["owner", "model", "embedded_at"], name="terms_owner_model")]

    def __str__(self):
        return f"Latent terms of memory {self.memory_id} ({self.model})"


class ConsolidationQuerySet(OwnedQuerySet):
    def current(self):
        """Insights whose sources all still stand: the ones recall may use."""
        return self.filter(stale_at__isnull=True)


class ActiveConsolidationManager(models.Manager.from_queryset(ConsolidationQuerySet)):
    def get_queryset(self):
        return super().get_queryset().filter(retired_at__isnull=True)


class Consolidation(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="consolidations")
    summary = models.TextField()
    insight = models.TextField()
    sources = models.ManyToManyField(Memory, related_name="consolidations")
    provider = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # A source was deleted or superseded: shown as stale, left out of recall, and
    # re-derived from the remaining sources by the next consolidation run.
    stale_at = models.DateTimeField(null=True, blank=True)
    # Fewer than two sources remain: kept for history only.
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = ActiveConsolidationManager()
    all_objects = OwnedManager()

    class Meta:
        verbose_name = "consolidation"
        verbose_name_plural = "consolidations"
        ordering = ["-created_at", "-id"]
        base_manager_name = "all_objects"

    class State(models.TextChoices):
        CURRENT = "current", "Current"
        STALE = "stale", "Stale"  # a source left; re-derived by the next run
        RETIRED = "retired", "Retired"  # fewer than two sources remain; history only

    @property
    def is_stale(self) -> bool:
        return self.stale_at is not None

    @property
    def state(self) -> "Consolidation.State":
        if self.retired_at is not None:
            return self.State.RETIRED
        return self.State.STALE if self.stale_at is not None else self.State.CURRENT

    def __str__(self):
        return f"Consolidation {self.pk}: {self.insight[:60]}"


class Digest(models.Model):
    """A unit the background builds for recall (services/digests.py): a group of one
    person's (or one subject's) memories close in meaning, described in derived words, with
    the centroid of their vectors. Recall matches a question against it and brings in its
    sources (recall/digests.py); it is never itself a memory, nor anyone's own words. Built
    again as memories arrive; a memory that leaves the record leaves its digests at once."""

    class Kind(models.TextChoices):
        PERSON = "person", "Person"  # the memories of one speaker (or a name the owner's memories are about)
        SUBJECT = "subject", "Subject"  # memories naming one thing, or close in meaning with no person

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="digests")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=200, blank=True)  # the person or subject it is about
    text = models.TextField()  # derived: the words that set its memories apart, never a quotation
    sources = models.ManyToManyField(Memory, related_name="digests")
    model = models.CharField(max_length=200, blank=True)  # the embedding model of `centroid`
    centroid = models.BinaryField(null=True)  # float32: the mean of its sources' unit vectors
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedManager()

    class Meta:
        indexes = [models.Index(fields=["owner", "model"], name="digest_owner_model")]

    def __str__(self):
        return f"Digest {self.pk} ({self.kind} {self.key}): {self.text[:60]}"


class MemoryLinkQuerySet(models.QuerySet):
    def owned_by(self, owner):
        """Links within one space: both ends the owner's."""
        return self.filter(from_memory__owner=owner, to_memory__owner=owner)


class MemoryLink(models.Model):
    from_memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_out")
    to_memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_in")
    relationship = models.CharField(max_length=500)
    consolidation = models.ForeignKey(Consolidation, on_delete=models.CASCADE, null=True, blank=True, related_name="links")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MemoryLinkQuerySet.as_manager()

    #: How the relationship of the link a marked update writes begins, newer to older:
    #: "updates: <what changed>" (services/updates.py; read back by recall/result.py).
    UPDATES = "updates"

    class Meta:
        verbose_name = "memory link"
        verbose_name_plural = "memory links"
        constraints = [
            models.UniqueConstraint(fields=["from_memory", "to_memory", "consolidation"], name="link_once_per_consolidation"),
            models.CheckConstraint(condition=~Q(from_memory=models.F("to_memory")), name="link_not_to_self"),
        ]

    def __str__(self):
        return f"{self.from_memory_id} -> {self.to_memory_id}: {self.relationship}"

    def clean(self):
        # Links join memories of one space: a link to another owner's memory would show it
        # on this owner's pages (the admin is the one place a person writes links by hand).
        owners = {
            self.from_memory.owner_id if self.from_memory_id else None,
            self.to_memory.owner_id if self.to_memory_id else None,
        }
        if self.consolidation_id:
            owners.add(self.consolidation.owner_id)
        owners.discard(None)
        if len(owners) > 1:
            raise ValidationError("A link joins memories of one owner; these belong to different owners.")


class ConsolidationRun(models.Model):
    """One pass of the consolidator over an owner's backlog; also the per-owner lock.

    The partial unique constraint allows one unfinished run per owner, so two workers
    (or the schedule and the button) cannot consolidate the same memories twice.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="consolidation_runs")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    consolidations_made = models.PositiveIntegerField(default=0)
    memories_consolidated = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    objects = OwnedManager()

    class Meta:
        verbose_name = "consolidation run"
        verbose_name_plural = "consolidation runs"
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner"], condition=Q(finished_at__isnull=True), name="one_running_consolidation_per_owner"
            ),
        ]


class ProcessedFile(models.Model):
    class Status(models.TextChoices):
        INGESTED = "ingested", "Ingested"
        DUPLICATE = "duplicate", "Duplicate"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="processed_files")
    path = models.CharField(max_length=1024)
    size = models.BigIntegerField()
    mtime = models.FloatField()
    sha256 = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    error = models.TextField(blank=True)
    memory = models.ForeignKey(Memory, on_delete=models.SET_NULL, null=True, blank=True, related_name="inbox_files")
    processed_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedManager()

    class Meta:
        verbose_name = "inbox file"
        verbose_name_plural = "inbox files"
        ordering = ["-processed_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "path", "sha256"], name="inbox_file_version_once"),
        ]

    def __str__(self):
        return f"{self.path} ({self.status})"


class SpaceSettings(models.Model):
    """Per-space choices about forgetting: sources older than `retention_days` are deleted
    (a tombstone and a history event, like any delete) by the daily maintenance task,
    unless the memory is at least `keep_importance` important."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="space_settings")
    retention_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Forget memories older than this many days (empty: keep all)."
    )
    retention_sources = models.CharField(
        max_length=500,
        blank=True,
        help_text="Comma-separated source prefixes the retention applies to (e.g. 'chat'); empty: every source.",
    )
    keep_importance = models.FloatField(default=0.7, help_text="Memories at least this important are kept whatever their age.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "space settings"
        verbose_name_plural = "space settings"

    def __str__(self):
        return f"space settings of {self.owner}"

    def source_prefixes(self) -> list[str]:
        return [p.strip() for p in self.retention_sources.split(",") if p.strip()]


class ApiToken(models.Model):
    """A bearer token for scripts and agents. Only a hash is stored; the token is shown once."""

    class Scope(models.TextChoices):
        # Each includes the ones before it.
        READ = "read", "Read: search, ask, list, export"
        WRITE = "write", "Write: also remember, correct, consolidate"
        ADMIN = "admin", "Admin: also delete and clear"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, help_text="First characters, to tell tokens apart.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Tokens made before scopes could do everything: they stay admin.
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.ADMIN)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused after this; empty: never expires.")

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    def allows(self, needed: str) -> bool:
        order = list(self.Scope.values)
        return order.index(self.scope) >= order.index(needed)

    objects = OwnedManager()

    class Meta:
        verbose_name = "API token"
        verbose_name_plural = "API tokens"
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"


class RejectedContent(models.Model):
    """A tombstone: content its owner deleted stays rejected, whatever path brings it back."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rejected_contents")
    content_hash = models.CharField(max_length=64)
    memory_ref = models.PositiveBigIntegerField(null=True, blank=True, help_text="The memory it was (kept after a purge).")
    reason = models.CharField(max_length=200, blank=True)
    rejected_at = models.DateTimeField(default=timezone.now)

    objects = OwnedManager()

    class Meta:
        verbose_name = "rejected content"
        verbose_name_plural = "rejected contents"
        ordering = ["-rejected_at"]
        constraints = [models.UniqueConstraint(fields=["owner", "content_hash"], name="reject_content_once")]

    def __str__(self):
        return f"rejected {self.content_hash[:12]}… (memory {self.memory_ref})"


class Event(models.Model):
    """One recorded change to a memory or consolidation: who, when, before and after.

    Subjects are referred to by type and id rather than foreign keys, so the record of a
    purge outlives the row it erased.
    """

    class Action(models.TextChoices):
        CREATED = "created", "Created"
        EXTRACTED = "extracted", "Extracted"
        FAILED = "failed", "Extraction failed"
        RETRIED = "retried", "Retry requested"
        REEXTRACTED = "reextracted", "Re-extracted"
        EDITED = "edited", "Edited"
        LINKED = "linked", "Linked"
        CONSOLIDATED = "consolidated", "Consolidated"
        DELETED = "deleted", "Deleted"
        RESTORED = "restored", "Restored"
        PURGED = "purged", "Purged"
        SUPERSEDED = "superseded", "Superseded"
        DUPLICATE = "duplicate", "Marked near-duplicate"
        CLEARED = "cleared", "Cleared"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected in review"
        STALE = "stale", "Marked stale"
        REDERIVED = "rederived", "Re-derived"
        RETIRED = "retired", "Retired"
        OUTDATED = "outdated", "Superseded by a newer fact"
        UPDATES = "updates", "Updates an older fact"
        NOT_UPDATE = "not_update", "Not an update (undone)"
        FADED = "faded", "Importance faded"
        REVIVED = "revived", "Importance restored by use"

    class Subject(models.TextChoices):
        MEMORY = "memory", "Memory"
        CONSOLIDATION = "consolidation", "Consolidation"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_events")
    subject_type = models.CharField(max_length=20, choices=Subject.choices)
    subject_id = models.PositiveBigIntegerField()
    action = models.CharField(max_length=20, choices=Action.choices)
    actor = models.CharField(
        max_length=200, help_text="Who did it: a user, an API token, the inbox watcher, the scheduler, a command."
    )
    actor_user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = OwnedManager()

    class Meta:
        verbose_name = "history event"
        verbose_name_plural = "history events"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["subject_type", "subject_id", "created_at"], name="event_subject")]

    def __str__(self):
        return f"{self.subject_type} {self.subject_id} {self.action} by {self.actor}"


class ProviderUsage(models.Model):
    """Calls to the model per owner, day and engine, for the stats page: one row a day,
    counted with an UPDATE, so recording a call costs one small write.

    Breaker trips stop the engine for everyone, so they are counted on the row with no owner.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="provider_usage"
    )
    day = models.DateField()
    provider = models.CharField(max_length=100)
    calls = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    breaker_trips = models.PositiveIntegerField(default=0)

    objects = OwnedManager()

    class Meta:
        ordering = ["day"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "day", "provider"], name="usage_once_per_day"),
            models.UniqueConstraint(
                fields=["day", "provider"], condition=Q(owner__isnull=True), name="engine_usage_once_per_day"
            ),
        ]

    def __str__(self):
        return f"{self.provider} {self.day}: {self.calls} calls, {self.failures} failed"
