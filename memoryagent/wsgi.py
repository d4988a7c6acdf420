import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
application = get_wsgi_application()

# The local embedding model loads on a thread while the worker starts taking requests.
from memories import embeddings  # noqa: E402

embeddings.warm_up()
