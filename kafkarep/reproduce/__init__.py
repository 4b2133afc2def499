"""A model's counterexample driven through a real Kafka cluster (`kafkarep reproduce`,
docs/reproduce.md): the cluster set up in the trace's initial state (`setup`), every step taken by
releasing the threads the kafkarep agent's gate holds (`steps`), in the trace's order or one the
model's independence relation makes equivalent (`order`), the cluster's recorded state compared
with the model's after each step (`projection`, `recorded`), and the violated property checked on
the cluster at the end (`verdicts`). `driver` runs it."""
