package kafkarep.agent;

/**
 * A point where the gate may hold a broker thread: the Kafka method held on entry (its class,
 * name and parameter count, read at `tag`), and the advice that calls the gate there. Where
 * that advice is a recording hook's (Hooks.ALL), the gate's call is part of it and runs only
 * its null check without `gate=`; otherwise the point adds a hook of its own, installed only
 * with `gate=DIR` (GatePoints.ownHooks).
 */
record GatePoint(
        String point, String className, String method, int parameters, String tag,
        Class<?> advice) {}
