package kafkarep.agent;

import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

/**
 * The kafkarep agent: `-javaagent:kafkarep-agent.jar=out=FILE,node=ID` records a broker's
 * data-plane events as JSON lines appended to FILE (docs/trace-validation.md). It only reads:
 * advice never changes an argument or a return value and never skips a method, and whatever
 * fails inside the agent is counted and written as an `agent_error` event, never thrown into
 * Kafka. When the argument is wrong or the file cannot be opened, the broker runs without it.
 */
public final class KafkarepAgent {
    private KafkarepAgent() {}

    static final String VERSION = "1.0";

    public static void premain(String argument, Instrumentation instrumentation) {
        try {
            AgentArgs args = AgentArgs.parse(argument);
            EventLog.open(args.out(), args.node());
            Event.of("agent_start")
                .put("agent_version", VERSION)
                .put("pid", ProcessHandle.current().pid())
                .put("java", System.getProperty("java.version"))
                .put("hooks", Hooks.ALL.size())
                .emit();
            Runtime.getRuntime().addShutdownHook(
                new Thread(BrokerEvents::jvmShutdown, "kafkarep-agent-shutdown"));
            install(instrumentation);
        } catch (Throwable t) {
            System.err.println("kafkarep-agent: not recording: " + t);
            if (EventLog.isOpen()) {
                Failures.record("premain", t);
            }
        }
    }

    static ElementMatcher.Junction<MethodDescription> matcher(Hook hook) {
        return named(hook.method()).and(takesArguments(hook.parameters()));
    }

    private static void install(Instrumentation instrumentation) {
        Map<String, List<Hook>> byClass = new LinkedHashMap<>();
        for (Hook hook : Hooks.ALL) {
            byClass.computeIfAbsent(hook.className(), key -> new ArrayList<>()).add(hook);
        }
        AgentBuilder agent = new AgentBuilder.Default()
            .disableClassFormatChanges()
            .ignore(not(nameStartsWith("kafka.").or(nameStartsWith("org.apache.kafka."))))
            .with(new Listener(byClass));
        for (Map.Entry<String, List<Hook>> entry : byClass.entrySet()) {
            List<Hook> hooks = entry.getValue();
            agent = agent.type(named(entry.getKey())).transform(
                (builder, type, loader, module, domain) -> {
                    DynamicType.Builder<?> out = builder;
                    for (Hook hook : hooks) {
                        out = out.visit(Advice.to(hook.advice()).on(matcher(hook)));
                    }
                    return out;
                });
        }
        agent.installOn(instrumentation);
    }

    /** Writes which hooks each instrumented class has, and the hooks or classes that failed. */
    private static final class Listener extends AgentBuilder.Listener.Adapter {
        private final Map<String, List<Hook>> byClass;

        Listener(Map<String, List<Hook>> byClass) {
            this.byClass = byClass;
        }

        @Override
        public void onTransformation(
                TypeDescription type,
                ClassLoader loader,
                JavaModule module,
                boolean loaded,
                DynamicType dynamicType) {
            try {
                List<String> found = new ArrayList<>();
                for (Hook hook : byClass.getOrDefault(type.getName(), List.of())) {
                    if (type.getDeclaredMethods().filter(matcher(hook)).isEmpty()) {
                        Failures.record(hook.name(), "hook_missing",
                            type.getName() + " has no method " + hook.method() + " with "
                                + hook.parameters() + " parameters", null);
                    } else {
                        found.add(hook.method());
                    }
                }
                Event.of("instrumented").put("class", type.getName()).put("methods", found).emit();
            } catch (Throwable t) {
                Failures.record("instrument " + type.getName(), t);
            }
        }

        @Override
        public void onError(
                String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
            Failures.record("instrument " + typeName, error);
        }
    }
}
