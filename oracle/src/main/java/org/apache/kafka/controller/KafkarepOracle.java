/*
 * kafkarep oracle harness: runs Apache Kafka's own KRaft controller classes on kafkarep
 * conformance cases (tests/data/conformance/FORMAT.md), for differential testing of the
 * project's Python rules against real Kafka.
 *
 * Protocol: one case per line (JSON) on stdin, one answer per line (JSON) on stdout, in order,
 * flushed after each line. Nothing else is written to stdout: System.out is redirected to
 * stderr and slf4j is bound to its no-op logger. See oracle/README.md for the exact semantics.
 *
 * The class lives in org.apache.kafka.controller because the entry points it drives
 * (ReplicationControlManager, ClusterControlManager, their builders and handlers) are
 * package-private. It does not copy any Kafka code: it builds the managers, replays records
 * into them, and calls their methods, as QuorumController does.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

public final class KafkarepOracle {
    static final ObjectMapper MAPPER = new ObjectMapper();

    /** The one topic every case runs on: fixed name and id, one partition (0). */
    static final String TOPIC = "kafkarep-oracle";
    static final Uuid TOPIC_ID = new Uuid(0x6b61666b61726570L, 0x0000000000000001L);
    static final int PARTITION = 0;
    static final String CLUSTER_ID = "kafkarep-oracle-cluster";
    /** Kafka's default broker session timeout (broker.session.timeout.ms = 9000). */
    static final long SESSION_TIMEOUT_NS = 9_000_000_000L;
    /** Feature name of eligible.leader.replicas.version (EligibleLeaderReplicasVersion.FEATURE_NAME, 4.0+). */
    static final String ELR_FEATURE = "eligible.leader.replicas.version";

    static final String KAFKA_VERSION = OracleCompat.kafkaVersion();

    /** Keys of an action that hold lists of broker ids (kafkarep/conformance.py BROKER_LISTS). */
    static final String[] BROKER_LIST_KEYS = {
        "new_isr", "target", "target_isr", "target_replicas", "target_adding", "target_removing",
        "target_elr", "target_last_known_elr", "unclean_shutdown_replicas"
    };
    static final String[] REGISTRATION_LIST_KEYS = {"isr", "elr", "last_known_elr", "adding", "removing"};

    /** The case cannot be expressed on this Kafka version: answered with "unsupported". */
    static final class Unsupported extends RuntimeException {
        Unsupported(String why) {
            super(why);
        }
    }

    public static void main(String[] args) throws IOException {
        // The protocol owns stdout; anything else that prints goes to stderr.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length > 0 && args[0].equals("--describe")) {
            protocol.println(MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(describe()));
            protocol.flush();
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer = answer(line);
            writeLine(protocol, MAPPER.writeValueAsString(answer));
        }
        protocol.flush();
    }

    static void writeLine(OutputStream out, String json) throws IOException {
        out.write(json.getBytes(StandardCharsets.UTF_8));
        out.write('\n');
        out.flush();
    }

    /** Never throws: every failure becomes an answer line. */
    static ObjectNode answer(String line) {
        JsonNode c;
        try {
            c = MAPPER.readTree(line);
        } catch (Throwable t) {
            ObjectNode out = MAPPER.createObjectNode();
            out.putNull("id");
            out.put("harness_error", describeThrowable(t));
            return out;
        }
        String id = c.path("id").isMissingNode() || c.path("id").isNull() ? null : c.path("id").asText();
        try {
            return new CaseRun(c).run();
        } catch (Unsupported u) {
            ObjectNode out = MAPPER.createObjectNode();
            out.put("id", id);
            out.put("kafka_version", KAFKA_VERSION);
            out.put("unsupported", u.getMessage());
            return out;
        } catch (Throwable t) {
            ObjectNode out = MAPPER.createObjectNode();
            out.put("id", id);
            out.put("kafka_version", KAFKA_VERSION);
            out.put("harness_error", describeThrowable(t));
            return out;
        }
    }

    static String describeThrowable(Throwable t) {
        Throwable cause = t;
        if (t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null) {
            cause = t.getCause();
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }

    // ---------------------------------------------------------------------------------------
    // Metadata versions
    // ---------------------------------------------------------------------------------------

    /** Metadata versions that a KRaft controller of this release can run (feature level >= 1). */
    static List<MetadataVersion> kraftVersions() {
        List<MetadataVersion> result = new ArrayList<>();
        for (MetadataVersion mv : MetadataVersion.values()) {
            if (mv.featureLevel() >= 1) {
                result.add(mv);
            }
        }
        return result;
    }

    /** The latest MV of a release ("3.5" gives 3.5-IV2), or an exact MV ("3.5-IV1"); null if unknown. */
    static MetadataVersion latestOfRelease(String release) {
        MetadataVersion best = null;
        for (MetadataVersion mv : kraftVersions()) {
            if (mv.shortVersion().equals(release) || mv.version().equals(release)) {
                if (best == null || mv.featureLevel() > best.featureLevel()) {
                    best = mv;
                }
            }
        }
        return best;
    }

    static short minKraftLevel() {
        short min = Short.MAX_VALUE;
        for (MetadataVersion mv : kraftVersions()) {
            min = (short) Math.min(min, mv.featureLevel());
        }
        return min;
    }

    static ObjectNode describe() {
        ObjectNode out = MAPPER.createObjectNode();
        out.put("kafka_version", KAFKA_VERSION);
        out.put("latest_production", MetadataVersion.LATEST_PRODUCTION.version());
        out.put("latest_testing", MetadataVersion.latestTesting().version());
        ArrayNode mvs = out.putArray("metadata_versions");
        for (MetadataVersion mv : kraftVersions()) {
            mvs.add(mv.version() + (mv.isProduction() ? "" : " (not production)")
                + (mv.isElrSupported() ? " elr" : ""));
        }
        out.put("elr_mode", OracleCompat.elrMode().name());
        out.put("partition_change_builder", OracleCompat.partitionChangeBuilderShape());
        out.put("register_broker_clean_shutdown_detection", OracleCompat.registerBrokerDetectsCleanShutdown());
        out.put("alter_partition_versions",
            AlterPartitionRequestData.LOWEST_SUPPORTED_VERSION + ".." + AlterPartitionRequestData.HIGHEST_SUPPORTED_VERSION);
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Record serialization (Kafka's generated <Record>JsonConverter classes)
    // ---------------------------------------------------------------------------------------

    static final Map<Class<?>, Method> CONVERTERS = new ConcurrentHashMap<>();

    static ObjectNode recordJson(ApiMessageAndVersion record) {
        ApiMessage message = record.message();
        ObjectNode out = MAPPER.createObjectNode();
        out.put("type", message.getClass().getSimpleName());
        out.put("version", record.version());
        try {
            Method write = CONVERTERS.computeIfAbsent(message.getClass(), cls -> {
                try {
                    Class<?> converter = Class.forName(cls.getName() + "JsonConverter");
                    return converter.getMethod("write", cls, short.class);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            });
            JsonNode fields;
            try {
                fields = (JsonNode) OracleCompat.invoke(write, null, message, record.version());
            } catch (UnsupportedVersionException e) {
                // A field this record version cannot carry (e.g. ELR fields below version 2):
                // show the fields at the newest version and say so.
                fields = (JsonNode) OracleCompat.invoke(write, null, message, message.highestSupportedVersion());
                out.put("note", "not serializable at version " + record.version() + ": " + e.getMessage());
            }
            out.setAll((ObjectNode) fields);
        } catch (RuntimeException e) {
            out.put("text", message.toString());
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // One case
    // ---------------------------------------------------------------------------------------

    static final class BrokerEntry {
        final int id;
        boolean registered = true;
        boolean fenced = false;
        boolean shuttingDown = false;
        long epoch = 0;
        int incarnation = 0;

        BrokerEntry(int id) {
            this.id = id;
        }
    }

    static Uuid incarnationId(int broker, int incarnation) {
        return new Uuid(0x696e6300_00000000L | (broker & 0xffffffffL), incarnation + 1L);
    }

    static Uuid directoryId(int broker) {
        return new Uuid(0x64697200_00000000L | (broker & 0xffffffffL), 0x6b61666b61726570L);
    }

    static List<Integer> intList(JsonNode node) {
        List<Integer> out = new ArrayList<>();
        if (node == null || node.isNull() || node.isMissingNode()) {
            return out;
        }
        for (JsonNode v : node) {
            out.add(v.isObject() ? v.path("broker").asInt() : v.asInt());
        }
        return out;
    }

    static List<Integer> optionalIntList(JsonNode parent, String key) {
        JsonNode n = parent.get(key);
        if (n == null || n.isNull()) {
            return null;
        }
        return intList(n);
    }

    static ArrayNode jsonInts(int[] values) {
        ArrayNode a = MAPPER.createArrayNode();
        for (int v : values) {
            a.add(v);
        }
        return a;
    }

    static final class CaseRun {
        final JsonNode c;
        final JsonNode config;
        final JsonNode before;
        final JsonNode action;
        final String type;
        final List<String> notes = new ArrayList<>();

        final int minIsr;
        final boolean elr;
        final boolean uncleanLeaderElection;
        final boolean useLastKnownLeader;
        final MetadataVersion mv;
        final OracleCompat.ElrMode elrMode = OracleCompat.elrMode();
        final Map<Integer, BrokerEntry> brokers = new TreeMap<>();

        final OracleTime time = new OracleTime();
        SnapshotRegistry snapshotRegistry;
        FeatureControlManager featureControl;
        ConfigurationControlManager configurationControl;
        ClusterControlManager clusterControl;
        ReplicationControlManager replicationControl;
        long nextOffset = 1;

        CaseRun(JsonNode c) {
            this.c = c;
            this.config = c.path("config");
            this.before = c.path("before");
            this.action = c.path("action");
            this.type = action.path("type").asText("");
            if (!before.isObject()) {
                throw new IllegalArgumentException("case has no 'before' object");
            }
            this.minIsr = config.path("min_isr").asInt(1);
            this.elr = config.path("elr_enabled").asBoolean(false);
            this.uncleanLeaderElection = config.path("unclean_leader_election").asBoolean(false);
            this.useLastKnownLeader = config.path("use_last_known_leader").asBoolean(true);
            this.mv = chooseMetadataVersion();
            readBrokers();
        }

        /** See README "Metadata version": explicit release, else 3.5 for the KAFKA-15021 flag, else production. */
        MetadataVersion chooseMetadataVersion() {
            JsonNode mvNode = config.get("metadata_version");
            JsonNode bumpNode = config.get("leader_epoch_bump_on_isr_shrink");
            Boolean bump = bumpNode == null || bumpNode.isNull() ? null : bumpNode.asBoolean();
            MetadataVersion chosen;
            if (mvNode != null && !mvNode.isNull()) {
                chosen = latestOfRelease(mvNode.asText());
                if (chosen == null) {
                    throw new Unsupported("metadata.version " + mvNode.asText() + " is not supported by Kafka "
                        + KAFKA_VERSION + " (oldest: " + kraftVersions().get(0).version() + ")");
                }
            } else if (Boolean.TRUE.equals(bump)) {
                chosen = latestOfRelease("3.5");
                if (chosen == null) {
                    throw new Unsupported("leader_epoch_bump_on_isr_shrink needs metadata.version 3.5, which Kafka "
                        + KAFKA_VERSION + " does not support");
                }
            } else {
                chosen = MetadataVersion.LATEST_PRODUCTION;
                if (elr && !chosen.isElrSupported()) {
                    for (MetadataVersion candidate : kraftVersions()) {
                        if (candidate.isElrSupported()) {
                            chosen = candidate;
                            break;
                        }
                    }
                }
            }
            if (bump != null && chosen.isLeaderEpochBumpRequiredOnIsrShrink() != bump) {
                throw new Unsupported("leader_epoch_bump_on_isr_shrink=" + bump + " contradicts metadata.version "
                    + chosen.version());
            }
            if (elr && !chosen.isElrSupported()) {
                throw new Unsupported("ELR needs a metadata.version with isElrSupported(); " + chosen.version()
                    + " has none");
            }
            if (!chosen.isElrSupported()
                && (!intList(before.get("elr")).isEmpty() || !intList(before.get("last_known_elr")).isEmpty())) {
                throw new Unsupported("before has ELR/last-known-ELR members, which PartitionRecord cannot carry at "
                    + "metadata.version " + chosen.version());
            }
            if (!chosen.isProduction()) {
                notes.add("metadata.version " + chosen.version() + " is not a production version of Kafka "
                    + KAFKA_VERSION);
            }
            return chosen;
        }

        /** The broker table, with kafkarep's defaults for brokers that are only mentioned. */
        void readBrokers() {
            Iterator<Map.Entry<String, JsonNode>> fields = c.path("brokers").fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                int id = Integer.parseInt(f.getKey());
                JsonNode e = f.getValue();
                BrokerEntry b = new BrokerEntry(id);
                b.registered = e.path("registered").asBoolean(true);
                b.fenced = e.path("fenced").asBoolean(false);
                b.shuttingDown = e.path("shutting_down").asBoolean(false);
                b.epoch = e.path("epoch").asLong(0);
                b.incarnation = e.path("incarnation").asInt(0);
                brokers.put(id, b);
            }
            List<Integer> mentioned = new ArrayList<>(intList(before.get("replicas")));
            mentioned.add(before.path("leader").asInt(-1));
            for (String key : REGISTRATION_LIST_KEYS) {
                mentioned.addAll(intList(before.get(key)));
            }
            for (String key : new String[] {"leader", "broker"}) {
                if (action.has(key) && action.get(key).isInt()) {
                    mentioned.add(action.get(key).asInt());
                }
            }
            for (String key : BROKER_LIST_KEYS) {
                if (action.has(key) && action.get(key).isArray()) {
                    mentioned.addAll(intList(action.get(key)));
                }
            }
            for (int id : mentioned) {
                if (id >= 0) {
                    brokers.putIfAbsent(id, new BrokerEntry(id));
                }
            }
        }

        BrokerEntry broker(int id) {
            BrokerEntry b = brokers.get(id);
            if (b == null) {
                b = new BrokerEntry(id);
                b.registered = false;
            }
            return b;
        }

        // -------------------------------- building the controller -------------------------------

        void build() {
            snapshotRegistry = OracleCompat.newSnapshotRegistry();
            Map<String, VersionRange> supported = new HashMap<>();
            supported.put(MetadataVersion.FEATURE_NAME,
                VersionRange.of(minKraftLevel(), MetadataVersion.latestTesting().featureLevel()));
            if (elrMode == OracleCompat.ElrMode.FEATURE) {
                supported.put(ELR_FEATURE, VersionRange.of((short) 0, (short) 1));
            }
            featureControl = new FeatureControlManager.Builder()
                .setSnapshotRegistry(snapshotRegistry)
                .setQuorumFeatures(new QuorumFeatures(0, supported, List.of(0)))
                .build();

            ConfigDef topicConfigs = new ConfigDef()
                .define(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, ConfigDef.Type.INT, 1,
                    ConfigDef.Importance.HIGH, "min.insync.replicas")
                .define(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, ConfigDef.Type.BOOLEAN, false,
                    ConfigDef.Importance.HIGH, "unclean.leader.election.enable");
            Map<ConfigResource.Type, ConfigDef> configDefs = new HashMap<>();
            configDefs.put(ConfigResource.Type.TOPIC, topicConfigs);
            ConfigurationControlManager.Builder configBuilder = new ConfigurationControlManager.Builder()
                .setSnapshotRegistry(snapshotRegistry)
                .setKafkaConfigSchema(new KafkaConfigSchema(configDefs, Map.of()));
            OracleCompat.maybeSetConfigFeatureControl(configBuilder, featureControl);
            configurationControl = configBuilder.build();

            AtomicReference<ReplicationControlManager> rcmRef = new AtomicReference<>();
            ClusterControlManager.Builder clusterBuilder = new ClusterControlManager.Builder()
                .setClusterId(CLUSTER_ID)
                .setTime(time)
                .setSnapshotRegistry(snapshotRegistry)
                .setSessionTimeoutNs(SESSION_TIMEOUT_NS)
                .setFeatureControlManager(featureControl);
            OracleCompat.setShutdownHandler(clusterBuilder, rcmRef);
            clusterControl = clusterBuilder.build();

            ReplicationControlManager.Builder rcmBuilder = new ReplicationControlManager.Builder()
                .setSnapshotRegistry(snapshotRegistry)
                .setMaxElectionsPerImbalance(Integer.MAX_VALUE)
                .setConfigurationControl(configurationControl)
                .setClusterControl(clusterControl)
                .setFeatureControl(featureControl);
            if (elrMode == OracleCompat.ElrMode.CONTROLLER_FLAG) {
                OracleCompat.setRcmBuilderElr(rcmBuilder, elr);
            }
            replicationControl = rcmBuilder.build();
            rcmRef.set(replicationControl);
        }

        /** The "before" state, as records replayed into the managers. */
        void load() {
            featureControl.replay(new FeatureLevelRecord()
                .setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(mv.featureLevel()));
            if (elr && elrMode == OracleCompat.ElrMode.FEATURE) {
                featureControl.replay(new FeatureLevelRecord().setName(ELR_FEATURE).setFeatureLevel((short) 1));
            }
            boolean directories = mv.isDirectoryAssignmentSupported();
            for (BrokerEntry b : brokers.values()) {
                if (!b.registered) {
                    continue;
                }
                RegisterBrokerRecord record = new RegisterBrokerRecord()
                    .setBrokerId(b.id)
                    .setIncarnationId(incarnationId(b.id, b.incarnation))
                    .setBrokerEpoch(b.epoch)
                    .setFenced(b.fenced)
                    .setInControlledShutdown(b.shuttingDown)
                    .setFeatures(registeredFeatures());
                if (directories) {
                    record.setLogDirs(List.of(directoryId(b.id)));
                }
                clusterControl.replay(record, nextOffset++);
            }
            replicationControl.replay(new TopicRecord().setName(TOPIC).setTopicId(TOPIC_ID));
            configurationControl.replay(new ConfigRecord()
                .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(TOPIC)
                .setName(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG).setValue(Integer.toString(minIsr)));
            configurationControl.replay(new ConfigRecord()
                .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(TOPIC)
                .setName(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG)
                .setValue(Boolean.toString(uncleanLeaderElection)));

            List<Integer> replicas = intList(before.get("replicas"));
            PartitionRecord partition = new PartitionRecord()
                .setTopicId(TOPIC_ID)
                .setPartitionId(PARTITION)
                .setReplicas(replicas)
                .setIsr(intList(before.get("isr")))
                .setAddingReplicas(intList(before.get("adding")))
                .setRemovingReplicas(intList(before.get("removing")))
                .setLeader(before.path("leader").asInt(-1))
                .setLeaderEpoch(before.path("leader_epoch").asInt(0))
                .setPartitionEpoch(before.path("partition_epoch").asInt(0))
                .setLeaderRecoveryState(
                    LeaderRecoveryState.valueOf(before.path("leader_recovery_state").asText("RECOVERED")).value());
            if (mv.isElrSupported()) {
                partition.setEligibleLeaderReplicas(intList(before.get("elr")));
                partition.setLastKnownElr(intList(before.get("last_known_elr")));
            }
            if (directories) {
                List<Uuid> dirs = new ArrayList<>();
                for (int r : replicas) {
                    dirs.add(broker(r).registered ? directoryId(r) : DirectoryId.UNASSIGNED);
                }
                partition.setDirectories(dirs);
            }
            replicationControl.replay(partition);
            clusterControl.activate();
        }

        RegisterBrokerRecord.BrokerFeatureCollection registeredFeatures() {
            RegisterBrokerRecord.BrokerFeatureCollection features = new RegisterBrokerRecord.BrokerFeatureCollection();
            features.add(new RegisterBrokerRecord.BrokerFeature().setName(MetadataVersion.FEATURE_NAME)
                .setMinSupportedVersion(minKraftLevel())
                .setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()));
            if (elrMode == OracleCompat.ElrMode.FEATURE) {
                features.add(new RegisterBrokerRecord.BrokerFeature().setName(ELR_FEATURE)
                    .setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1));
            }
            return features;
        }

        // -------------------------------------- running -----------------------------------------

        /** What an action produced: Kafka's records and the partition-level error, if any. */
        List<ApiMessageAndVersion> records = new ArrayList<>();
        Errors partitionError = null;

        ObjectNode run() {
            build();
            load();
            try {
                switch (type) {
                    case "partition_change": partitionChange(); break;
                    case "alter_partition": alterPartition(); break;
                    case "alter_reassignment": alterReassignment(); break;
                    case "elect_leader": electLeader(); break;
                    case "fence_broker": fenceBroker(); break;
                    case "unfence_broker": unfenceBroker(); break;
                    case "controlled_shutdown": controlledShutdown(); break;
                    case "unclean_shutdown": uncleanShutdown(); break;
                    case "register_broker": registerBroker(); break;
                    default: throw new IllegalArgumentException("unknown action type '" + type + "'");
                }
            } catch (ApiException e) {
                // A request Kafka refuses as a whole (e.g. StaleBrokerEpochException from
                // checkBrokerEpoch, DuplicateBrokerRegistrationException): its error code.
                records = new ArrayList<>();
                partitionError = Errors.forException(e);
                notes.add("request refused with " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            return result();
        }

        ObjectNode result() {
            boolean changed = false;
            for (ApiMessageAndVersion r : records) {
                if (r.message() instanceof PartitionChangeRecord) {
                    PartitionChangeRecord pcr = (PartitionChangeRecord) r.message();
                    if (pcr.topicId().equals(TOPIC_ID) && pcr.partitionId() == PARTITION) {
                        changed = true;
                    }
                }
            }
            for (ApiMessageAndVersion r : records) {
                replay(r);
            }
            boolean failed = partitionError != null && partitionError != Errors.NONE;
            ObjectNode out = MAPPER.createObjectNode();
            out.put("id", c.path("id").asText(null));
            out.put("kafka_version", KAFKA_VERSION);
            out.put("metadata_version", mv.version());
            out.put("elr_enabled", elr);
            out.put("outcome", changed ? "changed" : failed ? "rejected" : "unchanged");
            if (failed) {
                out.put("error", partitionError.name());
            } else {
                out.putNull("error");
            }
            if (changed) {
                PartitionRegistration p = replicationControl.getPartition(TOPIC_ID, PARTITION);
                ObjectNode after = out.putObject("after");
                after.set("replicas", jsonInts(p.replicas));
                after.set("isr", jsonInts(p.isr));
                after.set("elr", jsonInts(p.elr));
                after.set("last_known_elr", jsonInts(p.lastKnownElr));
                after.put("leader", p.leader);
                after.put("leader_epoch", p.leaderEpoch);
                after.put("partition_epoch", p.partitionEpoch);
                after.set("adding", jsonInts(p.addingReplicas));
                after.set("removing", jsonInts(p.removingReplicas));
                after.put("leader_recovery_state", p.leaderRecoveryState.name());
            }
            ArrayNode recs = out.putArray("records");
            for (ApiMessageAndVersion r : records) {
                recs.add(recordJson(r));
            }
            if (!notes.isEmpty()) {
                ArrayNode n = out.putArray("notes");
                notes.forEach(n::add);
            }
            return out;
        }

        /** Replays an emitted record, as the controller does once it is committed. */
        void replay(ApiMessageAndVersion r) {
            ApiMessage m = r.message();
            if (m instanceof PartitionChangeRecord) {
                replicationControl.replay((PartitionChangeRecord) m);
            } else if (m instanceof BrokerRegistrationChangeRecord) {
                clusterControl.replay((BrokerRegistrationChangeRecord) m);
            } else if (m instanceof RegisterBrokerRecord) {
                clusterControl.replay((RegisterBrokerRecord) m, nextOffset++);
            } else if (m instanceof FenceBrokerRecord) {
                clusterControl.replay((FenceBrokerRecord) m);
            } else if (m instanceof UnfenceBrokerRecord) {
                clusterControl.replay((UnfenceBrokerRecord) m);
            }
        }

        PartitionRegistration partition() {
            return replicationControl.getPartition(TOPIC_ID, PARTITION);
        }

        // -------------------------------------- actions -----------------------------------------

        /** PartitionChangeBuilder on the registration, directly (PartitionChangeBuilderTest style). */
        void partitionChange() {
            for (String key : new String[] {"target_elr", "target_last_known_elr"}) {
                if (action.has(key) && !action.get(key).isNull()) {
                    throw new Unsupported(key + ": PartitionChangeBuilder has no setter for it in Kafka "
                        + KAFKA_VERSION + " (it derives ELR and last-known ELR itself)");
                }
            }
            boolean directories = mv.isDirectoryAssignmentSupported();
            PartitionChangeBuilder builder = OracleCompat.newPartitionChangeBuilder(
                partition(), TOPIC_ID, PARTITION, clusterControl::isActive, mv, minIsr, elr);
            builder.setElection(election(action.path("election").asText("online")));
            builder.setUseLastKnownLeaderInBalancedRecovery(useLastKnownLeader);
            builder.setDefaultDirProvider(b -> directories ? clusterControl.defaultDir(b) : DirectoryId.MIGRATING);
            List<Integer> v;
            if ((v = optionalIntList(action, "target_isr")) != null) {
                builder.setTargetIsr(v);
            }
            if ((v = optionalIntList(action, "target_replicas")) != null) {
                builder.setTargetReplicas(v);
            }
            if ((v = optionalIntList(action, "target_adding")) != null) {
                builder.setTargetAdding(v);
            }
            if ((v = optionalIntList(action, "target_removing")) != null) {
                builder.setTargetRemoving(v);
            }
            if ((v = optionalIntList(action, "unclean_shutdown_replicas")) != null) {
                builder.setUncleanShutdownReplicas(v);
            }
            JsonNode lrs = action.get("target_leader_recovery_state");
            if (lrs != null && !lrs.isNull()) {
                builder.setTargetLeaderRecoveryState(LeaderRecoveryState.valueOf(lrs.asText()));
            }
            Optional<ApiMessageAndVersion> record = builder.build();
            record.ifPresent(records::add);
        }

        static PartitionChangeBuilder.Election election(String name) {
            switch (name) {
                case "online": return PartitionChangeBuilder.Election.ONLINE;
                case "preferred": return PartitionChangeBuilder.Election.PREFERRED;
                case "unclean": return PartitionChangeBuilder.Election.UNCLEAN;
                default: throw new IllegalArgumentException("unknown election '" + name + "'");
            }
        }

        /** ReplicationControlManager.alterPartition, at the request version of the case. */
        void alterPartition() {
            short version = (short) action.path("version").asInt(AlterPartitionRequestData.HIGHEST_SUPPORTED_VERSION);
            if (version < AlterPartitionRequestData.LOWEST_SUPPORTED_VERSION
                || version > AlterPartitionRequestData.HIGHEST_SUPPORTED_VERSION) {
                throw new Unsupported("AlterPartition version " + version + " is not supported by Kafka "
                    + KAFKA_VERSION + " (supported: " + AlterPartitionRequestData.LOWEST_SUPPORTED_VERSION + ".."
                    + AlterPartitionRequestData.HIGHEST_SUPPORTED_VERSION + ")");
            }
            int requester = action.path("leader").asInt();
            BrokerEntry requesterEntry = broker(requester);
            long brokerEpoch = action.has("broker_epoch") && !action.get("broker_epoch").isNull()
                ? action.get("broker_epoch").asLong()
                : requesterEntry.registered ? requesterEntry.epoch : -1L;
            PartitionRegistration current = partition();

            AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData()
                .setPartitionIndex(PARTITION)
                .setLeaderEpoch(action.path("leader_epoch").asInt(current.leaderEpoch))
                .setPartitionEpoch(action.path("partition_epoch").asInt(current.partitionEpoch));
            // LeaderRecoveryState is a field from version 1 on; version 0 always carries RECOVERED.
            LeaderRecoveryState lrs = LeaderRecoveryState.valueOf(action.path("leader_recovery_state").asText("RECOVERED"));
            if (version == 0 && lrs != LeaderRecoveryState.RECOVERED) {
                notes.add("AlterPartition v0 has no LeaderRecoveryState field: sent RECOVERED");
                lrs = LeaderRecoveryState.RECOVERED;
            }
            data.setLeaderRecoveryState(lrs.value());
            List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            for (JsonNode member : action.path("new_isr")) {
                int id = member.isObject() ? member.path("broker").asInt() : member.asInt();
                long epoch = member.isObject() ? member.path("epoch").asLong(-1) : -1L;
                ids.add(id);
                states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(id).setBrokerEpoch(epoch));
            }
            if (version >= 3) {
                data.setNewIsrWithEpochs(states);
            } else {
                data.setNewIsr(ids);
            }
            AlterPartitionRequestData.TopicData topic = new AlterPartitionRequestData.TopicData();
            if (version >= 2) {
                topic.setTopicId(TOPIC_ID);
            } else {
                OracleCompat.setTopicName(topic, TOPIC);
            }
            topic.partitions().add(data);
            AlterPartitionRequestData request = new AlterPartitionRequestData()
                .setBrokerId(requester)
                .setBrokerEpoch(brokerEpoch);
            request.topics().add(topic);
            ControllerRequestContext context = new ControllerRequestContext(
                new RequestHeaderData()
                    .setRequestApiKey(ApiKeys.ALTER_PARTITION.id)
                    .setRequestApiVersion(version),
                KafkaPrincipal.ANONYMOUS,
                OptionalLong.empty());
            ControllerResult<AlterPartitionResponseData> result = replicationControl.alterPartition(context, request);
            records = new ArrayList<>(result.records());
            AlterPartitionResponseData response = result.response();
            if (response.errorCode() != Errors.NONE.code()) {
                partitionError = Errors.forCode(response.errorCode());
            } else {
                partitionError = Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
            }
        }

        /** ReplicationControlManager.alterPartitionReassignments; target null cancels. */
        void alterReassignment() {
            JsonNode target = action.get("target");
            AlterPartitionReassignmentsRequestData.ReassignablePartition partition =
                new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                    .setPartitionIndex(PARTITION)
                    .setReplicas(target == null || target.isNull() ? null : intList(target));
            List<AlterPartitionReassignmentsRequestData.ReassignablePartition> partitions = new ArrayList<>();
            partitions.add(partition);
            List<AlterPartitionReassignmentsRequestData.ReassignableTopic> topics = new ArrayList<>();
            topics.add(new AlterPartitionReassignmentsRequestData.ReassignableTopic()
                .setName(TOPIC).setPartitions(partitions));
            AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData()
                .setTopics(topics);
            JsonNode allowRf = action.get("allow_replication_factor_change");
            if (allowRf != null && !allowRf.isNull()) {
                Method m = OracleCompat.findMethod(AlterPartitionReassignmentsRequestData.class,
                    "setAllowReplicationFactorChange", 1);
                if (m == null) {
                    throw new Unsupported("allow_replication_factor_change (KIP-860) is not in Kafka " + KAFKA_VERSION);
                }
                OracleCompat.invoke(m, request, allowRf.asBoolean());
            }
            ControllerResult<AlterPartitionReassignmentsResponseData> result =
                replicationControl.alterPartitionReassignments(request);
            records = new ArrayList<>(result.records());
            AlterPartitionReassignmentsResponseData response = result.response();
            if (response.errorCode() != Errors.NONE.code()) {
                partitionError = Errors.forCode(response.errorCode());
            } else {
                partitionError = Errors.forCode(response.responses().get(0).partitions().get(0).errorCode());
            }
        }

        /** ReplicationControlManager.electLeaders for the one partition. */
        void electLeader() {
            String kind = action.path("election").asText("preferred");
            ElectionType electionType;
            switch (kind) {
                case "preferred": electionType = ElectionType.PREFERRED; break;
                case "unclean": electionType = ElectionType.UNCLEAN; break;
                default: throw new IllegalArgumentException("unknown election '" + kind + "'");
            }
            ElectLeadersRequestData.TopicPartitionsCollection topics = new ElectLeadersRequestData.TopicPartitionsCollection();
            List<Integer> partitions = new ArrayList<>();
            partitions.add(PARTITION);
            topics.add(new ElectLeadersRequestData.TopicPartitions().setTopic(TOPIC).setPartitions(partitions));
            ElectLeadersRequestData request = new ElectLeadersRequestData()
                .setElectionType(electionType.value)
                .setTopicPartitions(topics);
            ControllerResult<ElectLeadersResponseData> result = replicationControl.electLeaders(request);
            records = new ArrayList<>(result.records());
            ElectLeadersResponseData response = result.response();
            if (response.errorCode() != Errors.NONE.code()) {
                partitionError = Errors.forCode(response.errorCode());
            } else {
                partitionError = Errors.forCode(
                    response.replicaElectionResults().get(0).partitionResult().get(0).errorCode());
            }
        }

        BrokerEntry registeredBroker(String what) {
            int id = action.path("broker").asInt();
            BrokerEntry b = broker(id);
            if (!b.registered) {
                throw new Unsupported(what + " of broker " + id + ", which is not registered: Kafka has no such event");
            }
            return b;
        }

        /** ReplicationControlManager.handleBrokerFenced (what a session timeout triggers). */
        void fenceBroker() {
            BrokerEntry b = registeredBroker("fence_broker");
            if (b.fenced) {
                notes.add("broker " + b.id + " was already fenced");
            }
            replicationControl.handleBrokerFenced(b.id, records);
        }

        /** ReplicationControlManager.handleBrokerUnfenced (a heartbeat that unfences the broker). */
        void unfenceBroker() {
            BrokerEntry b = registeredBroker("unfence_broker");
            if (!b.fenced) {
                notes.add("broker " + b.id + " was not fenced: Kafka's heartbeat path would not unfence it");
            }
            replicationControl.handleBrokerUnfenced(b.id, b.epoch, records);
        }

        /** ReplicationControlManager.handleBrokerInControlledShutdown (a heartbeat asking to shut down). */
        void controlledShutdown() {
            BrokerEntry b = registeredBroker("controlled_shutdown");
            replicationControl.handleBrokerInControlledShutdown(b.id, b.epoch, records);
        }

        /** A restart after an unclean shutdown: new incarnation (current + 1), previous broker epoch -1. */
        void uncleanShutdown() {
            BrokerEntry b = registeredBroker("unclean_shutdown");
            doRegister(b.id, b.incarnation + 1, -1L);
        }

        /** ClusterControlManager.registerBroker as QuorumController.registerBroker calls it. */
        void registerBroker() {
            int id = action.path("broker").asInt();
            BrokerEntry b = broker(id);
            int incarnation = action.has("incarnation") ? action.get("incarnation").asInt()
                : b.registered ? b.incarnation + 1 : 0;
            doRegister(id, incarnation, action.path("previous_broker_epoch").asLong(-1L));
        }

        void doRegister(int id, int incarnation, long previousBrokerEpoch) {
            long newEpoch = 0;
            for (BrokerEntry e : brokers.values()) {
                if (e.registered) {
                    newEpoch = Math.max(newEpoch, e.epoch);
                }
            }
            newEpoch += 1;
            if (action.has("new_broker_epoch")) {
                newEpoch = action.get("new_broker_epoch").asLong();
            }
            if (action.path("session_expired").asBoolean(true)) {
                // The previous incarnation's session has timed out (the broker was down longer
                // than broker.session.timeout.ms); otherwise Kafka refuses a new incarnation
                // with DUPLICATE_BROKER_REGISTRATION while the old session lives.
                time.advanceNs(2 * SESSION_TIMEOUT_NS);
            }
            short requestVersion = (short) action.path("request_version")
                .asInt(BrokerRegistrationRequestData.HIGHEST_SUPPORTED_VERSION);
            BrokerRegistrationRequestData.FeatureCollection features = new BrokerRegistrationRequestData.FeatureCollection();
            features.add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
                .setMinSupportedVersion(minKraftLevel())
                .setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()));
            Map<String, Short> finalized = new HashMap<>();
            finalized.put(MetadataVersion.FEATURE_NAME, mv.featureLevel());
            if (elrMode == OracleCompat.ElrMode.FEATURE) {
                features.add(new BrokerRegistrationRequestData.Feature().setName(ELR_FEATURE)
                    .setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1));
                if (elr) {
                    finalized.put(ELR_FEATURE, (short) 1);
                }
            }
            BrokerRegistrationRequestData request = new BrokerRegistrationRequestData()
                .setBrokerId(id)
                .setClusterId(CLUSTER_ID)
                .setIncarnationId(incarnationId(id, incarnation))
                .setListeners(new BrokerRegistrationRequestData.ListenerCollection())
                .setFeatures(features)
                .setPreviousBrokerEpoch(previousBrokerEpoch)
                .setLogDirs(mv.isDirectoryAssignmentSupported() ? List.of(directoryId(id)) : List.of());
            ControllerResult<Object> result = OracleCompat.registerBroker(clusterControl, request, newEpoch,
                new FinalizedControllerFeatures(finalized, Long.MAX_VALUE), requestVersion >= 3);
            records = new ArrayList<>(result.records());
            partitionError = Errors.NONE;
        }
    }
}
