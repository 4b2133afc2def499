/*
 * kafkarep oracle harness: a manual clock for ClusterControlManager's heartbeat manager.
 *
 * The clock only moves when the harness moves it. Broker sessions are tracked against this
 * clock, so the harness can decide whether the previous incarnation of a re-registering broker
 * still has a live session (Kafka then refuses the registration with
 * DUPLICATE_BROKER_REGISTRATION) or has timed out.
 *
 * No @Override annotations: waitObject is abstract in Time up to 4.3 and gone in 4.4, so the
 * same source must compile against both.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

final class OracleTime implements Time {
    private long nowNs = 1_000_000_000L;

    public long milliseconds() {
        return nowNs / 1_000_000L;
    }

    public long nanoseconds() {
        return nowNs;
    }

    public void sleep(long ms) {
        nowNs += ms * 1_000_000L;
    }

    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            nowNs = Math.max(nowNs, deadlineMs * 1_000_000L);
        }
    }

    void advanceNs(long ns) {
        nowNs += ns;
    }
}
