"""A real Apache Kafka KRaft cluster driven from Python: the harness (`cluster`), the parsers and
checks of its partition logs (`data_plane`) and the driver's side of the kafkarep agent's gate
(`gate`). `kafkarep reproduce` and the real-cluster tests (`tests/kraft/`) use it."""
