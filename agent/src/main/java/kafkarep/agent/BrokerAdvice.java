package kafkarep.agent;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into broker-wide methods (Kafka 4.1.1); it only reads, as PartitionAdvice.
 * OnMetadataUpdate's entry is the gate point `metadata` (GatePoints), which at most delays.
 */
final class BrokerAdvice {
    private BrokerAdvice() {}

    /** BrokerMetadataPublisher.onMetadataUpdate: a metadata image published to the broker. */
    static final class OnMetadataUpdate {
        /** The gate point `metadata` (GatePoints): without a gate, only a null check. */
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(1) Object image) {
            GatePoints.metadata(image);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.Argument(1) Object image,
                @Advice.Argument(2) Object manifest,
                @Advice.Thrown Throwable thrown) {
            BrokerEvents.metadataPublished(image, manifest, thrown);
        }
    }

    /** LogLoader.load: a log loaded from its directory, recovered when the shutdown was not clean. */
    static final class LogLoad {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object loader,
                @Advice.Return Object offsets,
                @Advice.Thrown Throwable thrown) {
            BrokerEvents.logLoaded(loader, offsets, thrown);
        }
    }

    /** BrokerServer.shutdown(Duration): the broker's own shutdown, begun and ended. */
    static final class Shutdown {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            BrokerEvents.brokerShutdown("begin", null);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.Thrown Throwable thrown) {
            BrokerEvents.brokerShutdown("end", thrown);
        }
    }
}
