"""Who on this machine can read the data: the data dir is the service account's alone.

The database holds every memory and the session keys (a session key copied out of it works
as a cookie), the originals are people's files, and the secret key signs sign-in links. So
the data dir is 0700 and its files 0600 (settings.py creates the dir and the SQLite file so;
FILE_UPLOAD_PERMISSIONS covers the originals). Folders and files made before, or by hand,
may be wider: a system check lists them at start-up (`serve`, `migrate`, `check`) with the
command that fixes them. The inbox gets the same check for who can write into it.
"""

from __future__ import annotations

import stat
from pathlib import Path

from django.conf import settings
from django.core import checks

# Enough to find a wide file without walking a huge originals folder at every start.
MAX_ENTRIES = 5000
SKIP = {"staticfiles"}  # public by nature: the site's own CSS and JS


def too_open(data_dir: Path) -> list[str]:
    """Paths under data_dir (and itself) that other local accounts can read or enter."""
    found: list[str] = []
    seen = 0
    stack = [Path(data_dir)]
    while stack and seen < MAX_ENTRIES:
        path = stack.pop()
        try:
            info = path.lstat()
        except OSError:
            continue
        seen += 1
        if stat.S_ISLNK(info.st_mode):
            continue
        if info.st_mode & 0o077:
            found.append(f"{path} ({stat.filemode(info.st_mode)})")
        if stat.S_ISDIR(info.st_mode):
            try:
                stack.extend(child for child in path.iterdir() if child.name not in SKIP)
            except OSError:
                continue
    return found


@checks.register(checks.Tags.security)
def check_data_permissions(app_configs=None, **kwargs):
    wide = too_open(Path(settings.MEMORY_DATA_DIR))
    if not wide:
        return []
    shown = ", ".join(wide[:5]) + (f" and {len(wide) - 5} more" if len(wide) > 5 else "")
    return [
        checks.Warning(
            f"Other local accounts can read the memory data: {shown}.",
            hint=f"Run: chmod -R go-rwx {settings.MEMORY_DATA_DIR}",
            id="memories.W001",
        )
    ]


@checks.register(checks.Tags.security)
def check_inbox_permissions(app_configs=None, **kwargs):
    """The inbox decides whose space a file lands in (README, "Security model"): a folder
    other accounts can write lets them add memories to that space."""
    inbox = Path(settings.MEMORY_INBOX_DIR)
    if not inbox.is_dir():
        return []
    open_folders = []
    for folder in [inbox, *(p for p in inbox.iterdir() if p.is_dir() and not p.is_symlink())][:MAX_ENTRIES]:
        try:
            if folder.stat().st_mode & 0o022:
                open_folders.append(str(folder))
        except OSError:
            continue
    if not open_folders:
        return []
    shown = ", ".join(open_folders[:5]) + (f" and {len(open_folders) - 5} more" if len(open_folders) > 5 else "")
    return [
        checks.Warning(
            f"Other local accounts can write into the inbox, and so add memories to its users' spaces: {shown}.",
            hint=f"Run: chmod -R go-w {inbox}  (then give each person write access to their own folder only)",
            id="memories.W002",
        )
    ]
