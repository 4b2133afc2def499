"""kafkarep: check Apache Kafka's replication protocol against a formal model."""

__version__ = "0.1.0"
