package kafkarep.agent;

/**
 * One method of Kafka the agent hooks: its class and name, how many parameters it takes (which
 * tells overloads and Scala's forwarders apart), the event it records and the advice that does.
 */
record Hook(String className, String method, int parameters, String event, Class<?> advice) {
    String name() {
        return className.substring(className.lastIndexOf('.') + 1) + "." + method;
    }
}
