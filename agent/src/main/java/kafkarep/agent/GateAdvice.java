package kafkarep.agent;

import net.bytebuddy.asm.Advice;

/**
 * The gate's own advice (installed only with `gate=DIR`), inlined on entry into methods no
 * recording hook has (Kafka 4.1.1). It only reads its arguments and may delay the thread.
 */
final class GateAdvice {
    private GateAdvice() {}

    /** Partition.submitAlterPartition(proposedIsrState): an AlterPartition about to be sent. */
    static final class SubmitAlterPartition {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object partition, @Advice.Argument(0) Object proposed) {
            GatePoints.alterPartitionRequest(partition, proposed);
        }
    }

    /**
     * Partition.$anonfun$submitAlterPartition$3(partition, proposedIsrState, leaderAndIsr, e):
     * static, the body of the callback the AlterPartitionManager's future completes.
     */
    static final class AlterPartitionAnswer {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(
                @Advice.Argument(0) Object partition,
                @Advice.Argument(1) Object proposed,
                @Advice.Argument(2) Object leaderAndIsr,
                @Advice.Argument(3) Throwable error) {
            GatePoints.alterPartitionAnswer(partition, proposed, leaderAndIsr, error);
        }
    }
}
