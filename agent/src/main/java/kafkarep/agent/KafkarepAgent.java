package kafkarep.agent;

import static net.bytebuddy.matcher.ElementMatchers.isDefaultFinalizer;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.none;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.bytebuddy.ByteBuddy;
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
 * With `gate=DIR` it also holds chosen broker threads at chosen points until a driver lets
 * them go (Gate, GatePoints): it then delays Kafka, still without changing what Kafka does.
 */
public final class KafkarepAgent {
    private KafkarepAgent() {}

    static final String VERSION = "1.0";

    public static void premain(String argument, Instrumentation instrumentation) {
        try {
            start(argument);
            List<Hook> hooks = new ArrayList<>(Hooks.ALL);
            if (Gate.current() != null) {
                hooks.addAll(GatePoints.ownHooks());
            }
            install(instrumentation, hooks);
        } catch (Throwable t) {
            System.err.println("kafkarep-agent: not recording: " + t);
            if (EventLog.isOpen()) {
                Failures.record("premain", t);
            }
        }
    }

    /**
     * Opens the events file and the gate (with `gate=DIR`), writes `agent_start` and adds the
     * JVM shutdown hook: everything but the hooks (GateCheck runs this without a broker).
     */
    static void start(String argument) throws IOException {
        AgentArgs args = AgentArgs.parse(argument);
        EventLog.open(args.out(), args.node());
        if (args.gate() != null) {
            Gate.open(args.gate(), args.node(), args.gateTimeoutMs());
        }
        Event start = Event.of("agent_start")
            .put("agent_version", VERSION)
            .put("pid", ProcessHandle.current().pid())
            .put("java", System.getProperty("java.version"))
            .put("hooks", Hooks.ALL.size());
        if (Gate.current() != null) {
            start.put("gate", Gate.dir().toString())
                .put("gate_timeout_ms", Gate.timeoutMs())
                .put("gate_points", GatePoints.describe());
        }
        start.emit();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            Gate.shutdown();  // held threads go first, so that their releases precede `shutdown`
            BrokerEvents.jvmShutdown();
        }, "kafkarep-agent-shutdown"));
    }

    static ElementMatcher.Junction<MethodDescription> matcher(Hook hook) {
        ElementMatcher.Junction<MethodDescription> counts = none();
        for (int parameters : hook.parameters()) {
            counts = counts.or(takesArguments(parameters));
        }
        // By name: Scala's default-argument methods (`makeLeader$default$5`) never match.
        ElementMatcher.Junction<MethodDescription> method = named(hook.method()).and(counts);
        // A Scala lambda's body (`$anonfun$...`) is synthetic; no other hooked method is, and no
        // synthetic bridge or forwarder of one must match.
        return hook.method().startsWith("$anonfun$") ? method : method.and(not(isSynthetic()));
    }

    private static void install(Instrumentation instrumentation, List<Hook> all) {
        Map<String, List<Hook>> byClass = new LinkedHashMap<>();
        for (Hook hook : all) {
            byClass.computeIfAbsent(hook.className(), key -> new ArrayList<>()).add(hook);
        }
        // Byte Buddy leaves synthetic methods alone by default; the gate hooks one (GatePoints)
        ByteBuddy byteBuddy = Gate.current() == null
            ? new ByteBuddy()
            : new ByteBuddy().ignore(isDefaultFinalizer());
        AgentBuilder agent = new AgentBuilder.Default(byteBuddy)
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
                                + hook.describeParameters() + " parameters", null);
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
