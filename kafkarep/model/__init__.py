"""The cluster model: one partition's replication across a KRaft controller and its brokers."""
