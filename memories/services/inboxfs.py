"""The inbox folder on disk: who a file belongs to, and reading or removing a file without
ever following a link out of the inbox tree.

Whoever can write into a folder of the inbox can swap a file for a symlink (or a folder for
a link to another folder) between any check and any use. So nothing here checks a path and
then uses it: every folder on the way is opened relative to the one before with O_NOFOLLOW
(openat), and the file itself is opened, or unlinked, relative to its folder's descriptor.
A link anywhere on the way makes the open fail instead of reading what it points to.

Trust model (README, "Security model"): an inbox folder is as trusted as the account it
maps to. With MEMORY_INBOX_USER_FOLDERS on, `inbox/<username>/...` belongs to that user and
the top level to MEMORY_INBOX_USER; with it off every file belongs to MEMORY_INBOX_USER.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO swapped in at the last moment must not block the watcher on open.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
FOLDER_MODE = 0o700


class NotInInbox(OSError):
    """The path is not a plain file reached through plain folders inside the inbox."""


def inbox_root() -> Path:
    return Path(settings.MEMORY_INBOX_DIR).resolve()


def routes_by_folder() -> bool:
    return bool(settings.MEMORY_INBOX_USER_FOLDERS)


def ensure_folders(inbox: Path) -> None:
    """The inbox, and with folder routing one folder per user, made by the service and
    readable by its own account only (a deployer opens one up to its person on purpose)."""
    inbox.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if not routes_by_folder():
        return
    User = get_user_model()
    for name in User.objects.filter(is_active=True).values_list(User.USERNAME_FIELD, flat=True):
        # A dot folder is never scanned, and "." or ".." would not be a folder of the inbox.
        if name and not name.startswith(".") and "/" not in name:
            with contextlib.suppress(OSError):
                (inbox / name).mkdir(mode=FOLDER_MODE, exist_ok=True)


def _open_folder(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of root/parts..., each step refusing a symlink."""
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise NotInInbox(f"{part!r} is not a folder name inside the inbox")
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except OSError:
        os.close(fd)
        raise
    return fd


def open_regular_file(root: Path, rel: Path, expected: os.stat_result | None = None):
    """A binary file object for root/rel that is a regular file inside root, reached without
    following any link. With `expected` (the lstat the scan saw), it must be that very file."""
    folder = _open_folder(root, rel.parts[:-1])
    try:
        try:
            fd = os.open(rel.name, FILE_FLAGS, dir_fd=folder)
        except OSError as exc:
            raise NotInInbox(f"{rel} could not be opened as a plain file in the inbox ({exc.strerror})") from None
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotInInbox(f"{rel} is not a regular file")
        if info.st_nlink != 1:
            # A hard link can make a file elsewhere appear here; copy files into the inbox instead.
            raise NotInInbox(f"{rel} has other hard links; copy the file into the inbox instead of linking it")
        if expected is not None and (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
            raise NotInInbox(f"{rel} changed while it was being read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def remove_regular_file(root: Path, rel: Path) -> bool:
    """Unlink root/rel if it is a regular file inside root; a link is never followed (and
    never removed), so it cannot aim the removal at someone else's file."""
    try:
        folder = _open_folder(root, rel.parts[:-1])
    except OSError:
        return False
    try:
        info = os.stat(rel.name, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return False
        os.unlink(rel.name, dir_fd=folder)
        return True
    except OSError:
        return False
    finally:
        os.close(folder)


def move_aside(root: Path, rel: Path, target: Path) -> None:
    """Rename root/rel to target, reaching it through its folders without following a link:
    a folder swapped for a link after the scan would otherwise aim the move at a file outside
    the inbox (the database, another space's originals). The rename itself never follows a
    link in the last part of the name; a link there is moved, not what it points to."""
    folder = _open_folder(root, rel.parts[:-1])
    try:
        os.rename(rel.name, target, src_dir_fd=folder)
    finally:
        os.close(folder)


def owner_may_hold(owner, rel: Path, *, default_owner_pk: int | None) -> bool:
    """Whether an inbox file at rel lies in the owner's own part of the inbox."""
    if not rel.parts or any(part in ("", ".", "..") for part in rel.parts):
        return False
    if not routes_by_folder():
        return owner.pk == default_owner_pk
    if len(rel.parts) > 1:
        return rel.parts[0] == owner.get_username()
    return owner.pk == default_owner_pk


def printable(value) -> str:
    """A file name (or a message naming one) on one log line: a name may hold newlines or
    other control characters that would forge a line of its own."""
    text = str(value)
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)
