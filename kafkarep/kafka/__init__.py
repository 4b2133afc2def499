"""What kafkarep knows of Kafka itself: the metadata records as values (`metadata`), the error
codes the controller answers with (`errors`), the releases the rules follow (`releases`), and
Kafka's jars from Maven Central (`jars`)."""
