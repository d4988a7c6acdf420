import hashlib
import uuid
from pathlib import PurePosixPath

from django.conf import settings
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


class Memory(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

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
    provider = models.CharField(max_length=100, blank=True, help_text="Which engine extracted it.")
    consolidated_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True)

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "status", "-created_at"], name="memory_owner_status_new"),
            models.Index(fields=["owner", "-importance"], name="memory_owner_importance"),
            models.Index(
                fields=["owner", "created_at"],
                condition=Q(status="ready", consolidated_at__isnull=True),
                name="memory_unconsolidated",
            ),
        ]

    def __str__(self):
        return f"Memory {self.pk}: {self.summary[:60] or self.source}"

    @property
    def file_name(self) -> str:
        return PurePosixPath(self.original.name).name if self.original else ""


class Consolidation(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="consolidations")
    summary = models.TextField()
    insight = models.TextField()
    sources = models.ManyToManyField(Memory, related_name="consolidations")
    provider = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"Consolidation {self.pk}: {self.insight[:60]}"


class MemoryLink(models.Model):
    from_memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_out")
    to_memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_in")
    relationship = models.CharField(max_length=500)
    consolidation = models.ForeignKey(Consolidation, on_delete=models.CASCADE, null=True, blank=True, related_name="links")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["from_memory", "to_memory", "consolidation"], name="link_once_per_consolidation"),
            models.CheckConstraint(condition=~Q(from_memory=models.F("to_memory")), name="link_not_to_self"),
        ]

    def __str__(self):
        return f"{self.from_memory_id} -> {self.to_memory_id}: {self.relationship}"


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

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner"], condition=Q(finished_at__isnull=True), name="one_running_consolidation_per_owner"),
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

    class Meta:
        ordering = ["-processed_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "path", "sha256"], name="inbox_file_version_once"),
        ]

    def __str__(self):
        return f"{self.path} ({self.status})"


class ApiToken(models.Model):
    """A bearer token for scripts and agents. Only a hash is stored; the token is shown once."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, help_text="First characters, to tell tokens apart.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"
