package kafkarep.agent;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of the events file, built by a recorder: its kind, the partition it is about (none
 * for a broker-wide event) and its fields in the order they were put. The event log adds the
 * sequence number, the time and the node when it writes the line.
 */
final class Event {
    final String kind;
    String topic;
    Integer partition;
    final Map<String, Object> fields = new LinkedHashMap<>();

    private Event(String kind) {
        this.kind = kind;
    }

    static Event of(String kind) {
        return new Event(kind);
    }

    /** The topic and partition of an org.apache.kafka.common.TopicPartition. */
    Event topicPartition(Object topicPartition) {
        topic = (String) Reflect.call(topicPartition, "topic");
        partition = (Integer) Reflect.call(topicPartition, "partition");
        return this;
    }

    Event put(String key, Object value) {
        fields.put(key, value);
        return this;
    }

    /** The exception the hooked method threw, if it threw one. */
    Event thrown(Throwable thrown) {
        if (thrown != null) {
            fields.put("error", thrown.getClass().getName());
            fields.put("error_message", String.valueOf(thrown.getMessage()));
        }
        return this;
    }

    void emit() {
        EventLog.emit(this);
    }
}
