"""kafkarep: check Apache Kafka's replication protocol against a formal model."""

from kafkarep.common import compiled

__version__ = "0.1.0"

# Before any other kafkarep module: the compiled hot path, if built from these very sources.
compiled.install()
