"""The search engines: the explorer, Spark, Hypothesis, and the kernel they share."""
