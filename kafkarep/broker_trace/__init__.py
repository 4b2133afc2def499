"""Real brokers' traces checked against the model: the events the kafkarep agent records in
each broker (`events.py`), replayed step by step through the model's data-plane rules
(`replay.py`), with the controller's metadata log for what each broker's metadata image held
(`images.py`). `kafkarep validate-trace` runs it (docs/trace-validation.md)."""
