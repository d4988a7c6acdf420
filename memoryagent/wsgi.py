import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
application = get_wsgi_application()

# The local embedding model loads on a thread while the worker starts taking requests.
from memories import embeddings  # noqa: E402

embeddings.warm_up()

# What is loaded by now (Django, the apps and their modules: most of a worker's objects)
# lives as long as the process; frozen, the cyclic collector no longer walks it on every
# full collection, which a worker answering questions otherwise runs every hundred or so
# of them at a cost of tens of milliseconds (docs/recall.md, "Latency, round 11").
gc.freeze()
