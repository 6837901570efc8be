"""The worker side: the compressor core, the Celery task, the store and the summarizers."""

from worker import compiled

# The compiled core, when its build matches the sources (worker/compiled.py).
compiled.activate()
