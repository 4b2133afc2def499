package kafkarep.agent;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads Kafka's objects without Kafka on the compile classpath: methods and fields by name (found
 * once per class and kept), and Scala's Option and collections as Java values. Only reads; a
 * method called here must not change what it is called on.
 */
final class Reflect {
    private Reflect() {}

    private static final ClassValue<Map<String, Method>> METHODS = new ClassValue<>() {
        @Override
        protected Map<String, Method> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };
    private static final ClassValue<Map<String, Field>> FIELDS = new ClassValue<>() {
        @Override
        protected Map<String, Field> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };

    /** `target.name(args...)`, the method found by its name and number of parameters. */
    static Object call(Object target, String name, Object... args) {
        if (target == null) {
            throw new IllegalArgumentException("no object to call " + name + " on");
        }
        Class<?> type = target.getClass();
        Method method = METHODS.get(type).computeIfAbsent(name + "/" + args.length,
                key -> findMethod(type, name, args.length));
        try {
            return method.invoke(target, args);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("calling " + type.getName() + "." + name, e);
        }
    }

    /** The value of the field `name` of `target` (declared by its class or a superclass). */
    static Object field(Object target, String name) {
        if (target == null) {
            throw new IllegalArgumentException("no object to read " + name + " of");
        }
        Class<?> type = target.getClass();
        Field field = FIELDS.get(type).computeIfAbsent(name, key -> findField(type, name));
        try {
            return field.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("reading " + type.getName() + "." + name, e);
        }
    }

    private static Method findMethod(Class<?> type, String name, int parameters) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == parameters
                        && !Modifier.isStatic(m.getModifiers()) && !m.isBridge() && accessible(m)) {
                    return m;
                }
            }
        }
        // A public method of a class that cannot be opened (the JDK's own): call it through
        // the public type that declares it.
        for (Method m : type.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == parameters
                    && Modifier.isPublic(m.getDeclaringClass().getModifiers())) {
                return m;
            }
        }
        throw new IllegalStateException("no method " + name + "/" + parameters + " on " + type.getName());
    }

    private static boolean accessible(Method m) {
        try {
            return m.trySetAccessible();
        } catch (SecurityException e) {
            return false;
        }
    }

    private static Field findField(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (f.getName().equals(name) && f.trySetAccessible()) {
                    return f;
                }
            }
        }
        throw new IllegalStateException("no field " + name + " on " + type.getName());
    }

    /** An enum constant's name (Kafka's `Errors`, `AppendOrigin`, ...), else the text of `value`. */
    static String name(Object value) {
        return value instanceof Enum<?> constant ? constant.name() : String.valueOf(value);
    }

    /** The value of a scala.Option, or null for None. */
    static Object option(Object option) {
        if (option == null || (Boolean) call(option, "isEmpty")) {
            return null;
        }
        return call(option, "get");
    }

    /** The value of a java.util.Optional, or null when empty. */
    static Object optional(Object optional) {
        return optional == null ? null : ((Optional<?>) optional).orElse(null);
    }

    /** The elements of a Java Iterable or a Scala collection, in its own order. */
    static List<Object> elements(Object collection) {
        List<Object> out = new ArrayList<>();
        if (collection == null) {
            return out;
        }
        if (collection instanceof Iterable<?> items) {
            for (Object item : items) {
                out.add(item);
            }
            return out;
        }
        Object iterator = call(collection, "iterator");
        if (iterator instanceof Iterator<?> it) {
            it.forEachRemaining(out::add);
            return out;
        }
        while ((Boolean) call(iterator, "hasNext")) {
            out.add(call(iterator, "next"));
        }
        return out;
    }

    /** The key and value of each entry of a Java or Scala map. */
    static List<Object[]> entries(Object map) {
        List<Object[]> out = new ArrayList<>();
        if (map instanceof Map<?, ?> javaMap) {
            for (Map.Entry<?, ?> entry : javaMap.entrySet()) {
                out.add(new Object[] {entry.getKey(), entry.getValue()});
            }
            return out;
        }
        for (Object pair : elements(map)) {
            out.add(new Object[] {call(pair, "_1"), call(pair, "_2")});
        }
        return out;
    }

    /** Broker ids of a list (or of an int[]), in the list's order. */
    static List<Integer> ints(Object collection) {
        List<Integer> out = new ArrayList<>();
        if (collection instanceof int[] array) {
            for (int item : array) {
                out.add(item);
            }
            return out;
        }
        for (Object item : elements(collection)) {
            out.add(((Number) item).intValue());
        }
        return out;
    }

    /** Broker ids of a set, in increasing order. */
    static List<Integer> sortedInts(Object collection) {
        List<Integer> out = ints(collection);
        Collections.sort(out);
        return out;
    }
}
