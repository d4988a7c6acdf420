from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password


def resolve_owner(username: str | None = None):
    """The user named, or the default owner when no name is given."""
    User = get_user_model()
    if username:
        try:
            return User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise ValueError(f"No user named {username!r}.") from None
    return default_owner()


def default_owner():
    """Owner of inbox files and command-line input when nobody is named:
    MEMORY_INBOX_USER, else the only or first superuser, created (without a usable
    password) when there is none, so a fresh install works before anyone signs up."""
    User = get_user_model()
    if settings.MEMORY_INBOX_USER:
        return resolve_owner(settings.MEMORY_INBOX_USER)
    user = User.objects.filter(is_superuser=True).order_by("pk").first()
    if user is None:
        # get_or_create: the watcher and a command starting together make one owner.
        user, _ = User.objects.get_or_create(
            username="owner",
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
