"""Kafka's own code as the oracle: the Java harness that runs Kafka's controller classes
(`harness`), the conformance cases (`conformance`), and differential testing of the rules
against Kafka (`differential`)."""
