"""A real KRaft cluster's metadata log (`__cluster_metadata`) checked against the rules:
`kafkarep validate-log` (docs/validate-log.md)."""
