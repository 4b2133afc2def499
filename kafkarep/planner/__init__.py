"""The KIP-435 incremental reassignment planner: `kip435` computes a plan's steps; the cluster
model's controller follows them (`model/actions/plan.py`), and `kafkarep plan` prints them."""
