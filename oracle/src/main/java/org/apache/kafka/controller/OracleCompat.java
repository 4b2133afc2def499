/*
 * kafkarep oracle harness: version adapters.
 *
 * The harness is one source tree compiled separately against each Kafka release. Everything
 * that is the same in every supported release is called directly; everything that differs is
 * reached through this class, by reflection, so that the same source compiles and runs on
 * every release. Each method names the releases whose API it bridges.
 */
package org.apache.kafka.controller;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicReference;

final class OracleCompat {
    private OracleCompat() {
    }

    /** Thrown when Kafka's own code throws: unwraps reflection's wrapper. */
    static RuntimeException unwrap(Throwable t) {
        Throwable cause = t;
        while (cause instanceof InvocationTargetException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RuntimeException) {
            return (RuntimeException) cause;
        }
        if (cause instanceof Error) {
            throw (Error) cause;
        }
        return new RuntimeException(cause);
    }

    static Method findMethod(Class<?> cls, String name, int arity) {
        for (Class<?> c = cls; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == arity && !m.isSynthetic()) {
                    m.setAccessible(true);
                    return m;
                }
            }
        }
        return null;
    }

    static boolean hasMethod(Class<?> cls, String name) {
        for (Method m : cls.getDeclaredMethods()) {
            if (m.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    static Object invoke(Method m, Object target, Object... args) {
        try {
            return m.invoke(target, args);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (InvocationTargetException e) {
            throw unwrap(e);
        }
    }

    static Class<?> classOrNull(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /**
     * The Kafka release of the jars on the classpath: AppInfoParser.getVersion(), in
     * org.apache.kafka.common.utils up to 4.3 and org.apache.kafka.common.utils.internals in 4.4.
     */
    static String kafkaVersion() {
        for (String name : new String[] {
            "org.apache.kafka.common.utils.AppInfoParser",
            "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
            Class<?> cls = classOrNull(name);
            if (cls != null) {
                try {
                    return (String) cls.getMethod("getVersion").invoke(null);
                } catch (ReflectiveOperationException e) {
                    throw unwrap(e);
                }
            }
        }
        return "unknown";
    }

    /**
     * LogContext: org.apache.kafka.common.utils.LogContext up to 4.3,
     * org.apache.kafka.common.utils.internals.LogContext from 4.4.
     */
    static Object newLogContext() {
        for (String name : new String[] {
            "org.apache.kafka.common.utils.LogContext",
            "org.apache.kafka.common.utils.internals.LogContext"}) {
            Class<?> cls = classOrNull(name);
            if (cls != null) {
                try {
                    return cls.getConstructor(String.class).newInstance("[kafkarep-oracle] ");
                } catch (ReflectiveOperationException e) {
                    throw unwrap(e);
                }
            }
        }
        throw new IllegalStateException("no LogContext class found");
    }

    /** SnapshotRegistry(LogContext): the LogContext class moved in 4.4. */
    static org.apache.kafka.timeline.SnapshotRegistry newSnapshotRegistry() {
        Object logContext = newLogContext();
        for (Constructor<?> c : org.apache.kafka.timeline.SnapshotRegistry.class.getConstructors()) {
            if (c.getParameterCount() == 1 && c.getParameterTypes()[0].isInstance(logContext)) {
                try {
                    return (org.apache.kafka.timeline.SnapshotRegistry) c.newInstance(logContext);
                } catch (ReflectiveOperationException e) {
                    throw unwrap(e);
                }
            }
        }
        throw new IllegalStateException("no SnapshotRegistry(LogContext) constructor");
    }

    /**
     * How ELR is switched on.
     * FEATURE (4.0+): FeatureLevelRecord eligible.leader.replicas.version=1, read back through
     * FeatureControlManager.isElrFeatureEnabled(), and an MV with isElrSupported().
     * CONTROLLER_FLAG (3.9): ReplicationControlManager.Builder.setEligibleLeaderReplicasEnabled
     * (the controller config eligible.leader.replicas.enable), effective only with an MV with
     * isElrSupported() (4.0-IV0, not production in 3.9).
     */
    enum ElrMode { FEATURE, CONTROLLER_FLAG }

    static ElrMode elrMode() {
        if (hasMethod(FeatureControlManager.class, "isElrFeatureEnabled")) {
            return ElrMode.FEATURE;
        }
        return ElrMode.CONTROLLER_FLAG;
    }

    /** 3.9 only: ReplicationControlManager.Builder.setEligibleLeaderReplicasEnabled(boolean). */
    static void setRcmBuilderElr(ReplicationControlManager.Builder builder, boolean enabled) {
        Method m = findMethod(ReplicationControlManager.Builder.class, "setEligibleLeaderReplicasEnabled", 1);
        if (m == null) {
            throw new IllegalStateException("ReplicationControlManager.Builder has no ELR flag");
        }
        invoke(m, builder, enabled);
    }

    /** 4.0+: ConfigurationControlManager.Builder.setFeatureControl (absent in 3.9). */
    static void maybeSetConfigFeatureControl(ConfigurationControlManager.Builder builder, FeatureControlManager fc) {
        Method m = findMethod(ConfigurationControlManager.Builder.class, "setFeatureControl", 1);
        if (m != null) {
            invoke(m, builder, fc);
        }
    }

    /**
     * The broker (unclean) shutdown hook that ClusterControlManager.registerBroker calls when a
     * broker registers a new incarnation.
     * 3.9: setBrokerUncleanShutdownHandler(BrokerUncleanShutdownHandler(int, List)), wired by
     *      QuorumController to ReplicationControlManager.handleBrokerUncleanShutdown(int, List).
     * 4.0+: setBrokerShutdownHandler(BrokerShutdownHandler(int, boolean, List)), wired to
     *      ReplicationControlManager.handleBrokerShutdown(int, boolean, List).
     * The handler forwards to the RCM held in {@code rcm}, which is built after the
     * ClusterControlManager (as in QuorumController).
     */
    static void setShutdownHandler(ClusterControlManager.Builder builder,
                                   AtomicReference<ReplicationControlManager> rcm) {
        Method setter = findMethod(ClusterControlManager.Builder.class, "setBrokerShutdownHandler", 1);
        if (setter == null) {
            setter = findMethod(ClusterControlManager.Builder.class, "setBrokerUncleanShutdownHandler", 1);
        }
        if (setter == null) {
            throw new IllegalStateException("ClusterControlManager.Builder has no shutdown handler setter");
        }
        Class<?> iface = setter.getParameterTypes()[0];
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                switch (method.getName()) {
                    case "toString": return "kafkarep-oracle shutdown handler";
                    case "hashCode": return System.identityHashCode(proxy);
                    case "equals": return proxy == args[0];
                    default: throw new UnsupportedOperationException(method.getName());
                }
            }
            ReplicationControlManager target = rcm.get();
            if (args.length == 3) {
                Method m = findMethod(ReplicationControlManager.class, "handleBrokerShutdown", 3);
                invoke(m, target, args[0], args[1], args[2]);
            } else {
                Method m = findMethod(ReplicationControlManager.class, "handleBrokerUncleanShutdown", 2);
                invoke(m, target, args[0], args[1]);
            }
            return null;
        };
        Object proxy = Proxy.newProxyInstance(iface.getClassLoader(), new Class<?>[] {iface}, handler);
        invoke(setter, builder, proxy);
    }

    /**
     * ClusterControlManager.registerBroker: (request, newBrokerEpoch, finalizedFeatures) in 3.9;
     * (request, newBrokerEpoch, finalizedFeatures, cleanShutdownDetectionEnabled) from 4.0
     * (QuorumController passes requestApiVersion >= 3 for the last argument).
     */
    @SuppressWarnings("unchecked")
    static ControllerResult<Object> registerBroker(ClusterControlManager cc, Object request, long newEpoch,
                                                   Object finalizedFeatures, boolean cleanShutdownDetection) {
        Method m4 = findMethod(ClusterControlManager.class, "registerBroker", 4);
        if (m4 != null) {
            return (ControllerResult<Object>) invoke(m4, cc, request, newEpoch, finalizedFeatures, cleanShutdownDetection);
        }
        Method m3 = findMethod(ClusterControlManager.class, "registerBroker", 3);
        return (ControllerResult<Object>) invoke(m3, cc, request, newEpoch, finalizedFeatures);
    }

    /** True when registerBroker takes the clean-shutdown-detection flag (4.0+, KIP-966 part 2). */
    static boolean registerBrokerDetectsCleanShutdown() {
        return findMethod(ClusterControlManager.class, "registerBroker", 4) != null;
    }

    /**
     * PartitionChangeBuilder: 6-argument constructor plus setEligibleLeaderReplicasEnabled up to
     * 4.2; from 4.3 the ELR flag is a 7th constructor argument and the setter is gone.
     */
    static PartitionChangeBuilder newPartitionChangeBuilder(
        org.apache.kafka.metadata.PartitionRegistration partition,
        org.apache.kafka.common.Uuid topicId,
        int partitionId,
        java.util.function.IntPredicate acceptable,
        org.apache.kafka.server.common.MetadataVersion mv,
        int minIsr,
        boolean elrEnabled
    ) {
        try {
            for (Constructor<?> c : PartitionChangeBuilder.class.getDeclaredConstructors()) {
                if (c.getParameterCount() == 7) {
                    c.setAccessible(true);
                    return (PartitionChangeBuilder) c.newInstance(partition, topicId, partitionId, acceptable, mv,
                        minIsr, elrEnabled);
                }
            }
            for (Constructor<?> c : PartitionChangeBuilder.class.getDeclaredConstructors()) {
                if (c.getParameterCount() == 6) {
                    c.setAccessible(true);
                    PartitionChangeBuilder b = (PartitionChangeBuilder) c.newInstance(partition, topicId, partitionId,
                        acceptable, mv, minIsr);
                    Method setter = findMethod(PartitionChangeBuilder.class, "setEligibleLeaderReplicasEnabled", 1);
                    invoke(setter, b, elrEnabled);
                    return b;
                }
            }
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
        throw new IllegalStateException("no known PartitionChangeBuilder constructor");
    }

    /** The constructor / setter shape of PartitionChangeBuilder, for the report. */
    static String partitionChangeBuilderShape() {
        for (Constructor<?> c : PartitionChangeBuilder.class.getDeclaredConstructors()) {
            if (c.getParameterCount() == 7) {
                return "PartitionChangeBuilder(partition, topicId, partitionId, acceptor, mv, minIsr, elrEnabled)";
            }
        }
        return "PartitionChangeBuilder(partition, topicId, partitionId, acceptor, mv, minIsr)"
            + ".setEligibleLeaderReplicasEnabled(elrEnabled)";
    }

    /** 3.9 only (AlterPartition v0/v1 address topics by name): TopicData.setTopicName(String). */
    static void setTopicName(Object topicData, String name) {
        Method m = findMethod(topicData.getClass(), "setTopicName", 1);
        if (m == null) {
            throw new IllegalStateException("AlterPartitionRequestData.TopicData has no topic name");
        }
        invoke(m, topicData, name);
    }
}
