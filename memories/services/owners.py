from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from ..models import Memory


DEFAULT_OWNER_NAME = "owner"


def resolve_owner(username: str | None = None):
    """The user named, or the default owner when no name is given. Naming the default owner
    on a fresh install (`create_token owner` right after `migrate`) creates it, the same
    way the watcher, `welcome` and every other command do."""
    User = get_user_model()
    if username:
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is not None:
            return user
        if username == (settings.MEMORY_INBOX_USER or DEFAULT_OWNER_NAME) and not _superusers().exists():
            return default_owner()
        raise ValueError(f"No user named {username!r}.")
    return default_owner()


def _superusers():
    return get_user_model().objects.filter(is_superuser=True).order_by("pk")


def default_owner():
    """Owner of inbox files and command-line input when nobody is named:
    MEMORY_INBOX_USER, else the only or first superuser. On a fresh install (no superuser
    yet) it is created, without a usable password (`welcome` prints a link to set one),
    so the app works before anyone signs up."""
    User = get_user_model()
    name = settings.MEMORY_INBOX_USER
    if name:
        user = User.objects.filter(**{User.USERNAME_FIELD: name}).first()
        if user is not None:
            return user
        if _superusers().exists():
            raise ValueError(f"No user named {name!r} (MEMORY_INBOX_USER).")
    elif (user := _superusers().first()) is not None:
        return user
    # get_or_create: the watcher and a command starting together make one owner.
    user, _ = User.objects.get_or_create(
        **{User.USERNAME_FIELD: name or DEFAULT_OWNER_NAME},
        defaults={"is_superuser": True, "is_staff": True, "password": make_password(None)},
    )
    return user


def may_fetch_original(*, user, memory) -> bool:
    """The one rule for who may download or preview a memory's original file, whatever
    links to it (the memory page, the deleted list, the admin): its owner, whatever state
    the memory is in until a purge erases the file, and staff who may view memories in the
    admin. Anyone else gets the same 404 as for a memory that does not exist."""
    if not user.is_authenticated or not memory.original:
        return False
    return memory.owner_id == user.pk or (user.is_staff and user.has_perm("memories.view_memory"))


def access_memory(owner, memory_id: int, *, any_state: bool = False, lock: bool = False, memories=None) -> Memory:
    """One of the owner's memories: the one lookup every path (pages, API, MCP, the services
    that change a memory) makes for "this memory of yours", as Zulip's access_message.

    Live ones only (not deleted or superseded), unless `any_state`; `lock` takes a row lock
    for a change; `memories` narrows further (a state, prefetches). Raises
    Memory.DoesNotExist, "No memory N.", alike whether it does not exist or is someone
    else's: the API and MCP show those words, the pages a 404."""
    if memories is None:
        memories = Memory.all_objects if any_state else Memory.objects
    if lock:
        memories = memories.select_for_update()
    try:
        return memories.owned_by(owner).get(pk=memory_id)
    except Memory.DoesNotExist:
        raise Memory.DoesNotExist(f"No memory {memory_id}.") from None
