package kafkarep.agent;

import java.io.File;

/**
 * The recorders of broker-wide hooks (Kafka 4.1.1): the metadata image the broker published,
 * a log loaded (and recovered) from disk, and the broker shutting down.
 */
public final class BrokerEvents {
    private BrokerEvents() {}

    public static void metadataPublished(Object image, Object manifest, Throwable thrown) {
        try {
            Object provenance = Reflect.call(image, "provenance");
            Event.of("metadata_applied")
                .put("offset", Reflect.call(provenance, "lastContainedOffset"))
                .put("epoch", Reflect.call(provenance, "lastContainedEpoch"))
                .put("manifest", Reflect.name(Reflect.call(manifest, "type")))
                .thrown(thrown)
                .emit();
        } catch (Throwable t) {
            Failures.record("BrokerMetadataPublisher.onMetadataUpdate", t);
        }
    }

    public static void logLoaded(Object loader, Object offsets, Throwable thrown) {
        try {
            Event event = Event.of("log_recovery")
                .topicPartition(Reflect.field(loader, "topicPartition"))
                .put("dir", ((File) Reflect.field(loader, "dir")).getPath())
                .put("had_clean_shutdown", Reflect.field(loader, "hadCleanShutdown"))
                .put("recovery_point_checkpoint", Reflect.field(loader, "recoveryPointCheckpoint"))
                .put("log_start_offset_checkpoint", Reflect.field(loader, "logStartOffsetCheckpoint"));
            if (offsets != null) {
                event.put("log_start_offset", Reflect.field(offsets, "logStartOffset"))
                    .put("recovery_point", Reflect.field(offsets, "recoveryPoint"))
                    .put("log_end_offset",
                        Reflect.field(Reflect.field(offsets, "nextOffsetMetadata"), "messageOffset"));
            }
            event.thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("LogLoader.load", t);
        }
    }

    public static void brokerShutdown(String phase, Throwable thrown) {
        try {
            Event.of("shutdown")
                .put("via", "BrokerServer.shutdown")
                .put("phase", phase)
                .put("agent_failures", Failures.total())
                .thrown(thrown)
                .emit();
        } catch (Throwable t) {
            Failures.record("BrokerServer.shutdown", t);
        }
    }

    /** The agent's JVM shutdown hook: the last event a JVM that is not killed writes. */
    static void jvmShutdown() {
        try {
            Event.of("shutdown")
                .put("via", "jvm_shutdown_hook")
                .put("events_written", EventLog.written())
                .put("agent_failures", Failures.total())
                .put("failures_by_kind", Failures.counts())
                .emit();
        } catch (Throwable t) {
            Failures.record("shutdown hook", t);
        }
    }
}
