"""The admin: a row-level console for staff. Actions call the same services as the app.

One module per part of the console: memory.py (memories, their lifecycle actions),
insights.py (insights, links, consolidation runs), records.py (the audit trail and
tombstones, read-only), space.py (files, API tokens, retention settings); common.py holds
the helpers and list filters they share. Importing them registers them.
"""

from django.contrib import admin

from ..signin import ThrottledAdminAuthenticationForm, ThrottledAdminPasswordChangeForm
from . import insights, memory, records, space  # noqa: F401  (each registers its ModelAdmins)

# The admin's sign-in and password change count and refuse failed passwords like the site's.
admin.site.login_form = ThrottledAdminAuthenticationForm
admin.site.password_change_form = ThrottledAdminPasswordChangeForm
