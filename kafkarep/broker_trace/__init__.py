"""Real brokers' traces checked against the model: the events the kafkarep agent records in
each broker (`events.py`), replayed in order (`replay.py`) through the model's data-plane rules,
a step per event (`leader.py`, `follower.py`; what they share, `replica.py`), with the
controller's metadata log for what each broker's metadata image held (`images.py`).
`kafkarep validate-trace` runs it (`validate.py`; docs/trace-validation.md)."""
