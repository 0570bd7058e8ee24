// Records golden state trajectories from resilience4j 2.4.0's CircuitBreakerStateMachine for
// tests/policies/trajectories.rs. Not library code: it calls the library's public builder,
// tryAcquirePermission, releasePermission, onSuccess, onError and getState, with a virtual
// java.time.Clock, and replaces the library's timer thread (SchedulerFactory's single
// scheduler, used for automaticTransitionFromOpenToHalfOpenEnabled and
// maxWaitDurationInHalfOpenState) by a virtual-time scheduler. See README.md.
//
// Usage: java -cp <classes>:<slf4j-api.jar>:<jsr305.jar>:. R4jDriver <out.json>
//        java -cp ... R4jDriver --trace <set> <seed>   (one case, step by step, on stdout)

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.internal.CircuitBreakerStateMachine;
import io.github.resilience4j.circuitbreaker.internal.SchedulerFactory;
import io.github.resilience4j.core.IntervalFunction;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

public class R4jDriver {
    /** SplitMix64; tests/policies/trajectories.rs has the same generator. */
    static final class Rng {
        long s;
        Rng(long seed) { s = seed; }
        long next() {
            long z = (s += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }
        long below(long n) { return Long.remainderUnsigned(next(), n); }
    }

    static final long TRAFFIC = 0x5452414646494321L;
    static final long[] REGIME = {100, 100, 150, 400};
    static final int CHUNK = 50;
    static final int STEPS = 400;
    static long mix(long h, long v) { return (h ^ v) * 0x100000001b3L; }
    static final long FNV = 0xcbf29ce484222325L;

    /** Virtual time in ns since the epoch. */
    static long now;

    static final class VirtualClock extends Clock {
        public ZoneId getZone() { return ZoneOffset.UTC; }
        public Clock withZone(ZoneId zone) { return this; }
        public Instant instant() { return Instant.ofEpochSecond(0, now); }
    }

    /** A task due at a virtual time; runs in (due, scheduling order). */
    static final class Task implements ScheduledFuture<Object> {
        final long due, seq; final Runnable r; boolean cancelled, done;
        Task(long due, long seq, Runnable r) { this.due = due; this.seq = seq; this.r = r; }
        public long getDelay(TimeUnit u) { return u.convert(due - now, TimeUnit.NANOSECONDS); }
        public int compareTo(Delayed o) { return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS)); }
        public boolean cancel(boolean b) { if (done) return false; cancelled = true; done = true; return true; }
        public boolean isCancelled() { return cancelled; }
        public boolean isDone() { return done; }
        public Object get() { return null; }
        public Object get(long t, TimeUnit u) { return null; }
    }

    /** Stands in for the library's timer thread. */
    static final class VirtualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
        final List<Task> tasks = new ArrayList<>();
        long seq;
        public ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit u) {
            Task t = new Task(now + u.toNanos(delay), seq++, r);
            tasks.add(t);
            return t;
        }
        /** Runs every live task due at or before `until`, advancing the clock to each. */
        void runUntil(long until) {
            while (true) {
                Task first = null;
                for (Task t : tasks) {
                    if (!t.done && t.due <= until && (first == null || t.due < first.due || (t.due == first.due && t.seq < first.seq))) first = t;
                }
                if (first == null) break;
                now = first.due;
                first.done = true;
                first.r.run();
            }
            tasks.removeIf(t -> t.done);
        }
        public <V> ScheduledFuture<V> schedule(Callable<V> c, long d, TimeUnit u) { throw new UnsupportedOperationException(); }
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable r, long a, long b, TimeUnit u) { throw new UnsupportedOperationException(); }
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable r, long a, long b, TimeUnit u) { throw new UnsupportedOperationException(); }
        public void shutdown() {}
        public List<Runnable> shutdownNow() { return Collections.emptyList(); }
        public boolean isShutdown() { return false; }
        public boolean isTerminated() { return false; }
        public boolean awaitTermination(long t, TimeUnit u) { return true; }
        public void execute(Runnable r) { r.run(); }
    }

    static final VirtualScheduler SCHEDULER = new VirtualScheduler();

    /** Puts SCHEDULER in place of SchedulerFactory's static scheduler (a static final field). */
    static void installScheduler() throws Exception {
        SchedulerFactory.getInstance().getScheduler(); // initialise the holder class
        Class<?> holder = Class.forName(SchedulerFactory.class.getName() + "$SchedulerFactoryInstance");
        Field f = holder.getDeclaredField("lazyScheduler");
        Field uf = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        uf.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) uf.get(null);
        Object old = unsafe.getObject(unsafe.staticFieldBase(f), unsafe.staticFieldOffset(f));
        ((ScheduledExecutorService) old).shutdownNow();
        unsafe.putObject(unsafe.staticFieldBase(f), unsafe.staticFieldOffset(f), SCHEDULER);
        if (SchedulerFactory.getInstance().getScheduler() != SCHEDULER) throw new IllegalStateException("scheduler not replaced");
    }

    static final class Pending { long id, start, end; boolean bad, release; }

    /** Config fields of a case; 0 = not set (the library's default) for the wait, backoff
     *  and half-open fields; exactly one of wait_duration_in_open_state_ns and
     *  backoff_initial_ns is set. */
    static final String CONFIG_KEYS = "[\"sliding_window_size\",\"minimum_number_of_calls\",\"failure_rate_tenths\","
        + "\"slow_call_rate_tenths\",\"slow_call_duration_threshold_ns\",\"wait_duration_in_open_state_ns\","
        + "\"backoff_initial_ns\",\"backoff_multiplier\",\"backoff_max_ns\",\"permitted_number_of_calls_in_half_open_state\","
        + "\"automatic_transition\",\"max_wait_in_half_open_ns\",\"after_wait_closed\"]";
    static final String GEN_KEYS = "[\"steps\",\"gap\",\"base\",\"spread_pct\",\"switch_pm\",\"fail_pm\",\"release_pm\",\"grain\",\"agrain\"]";

    static int code(CircuitBreaker.State s) {
        switch (s) {
            case CLOSED: return 0;
            case OPEN: return 1;
            case HALF_OPEN: return 2;
            default: throw new IllegalStateException(s.toString());
        }
    }

    static String run(long seed, boolean trace, String[] cfgJson, String[] genJson, boolean timeBased) {
        Rng c = new Rng(seed);
        CircuitBreakerConfig.Builder b = CircuitBreakerConfig.custom().clock(new VirtualClock());
        int size = timeBased ? 1 + (int) c.below(10) : 1 + (int) c.below(20);
        int minCalls = 1 + (int) c.below(25);
        b.slidingWindowType(timeBased ? CircuitBreakerConfig.SlidingWindowType.TIME_BASED : CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(size).minimumNumberOfCalls(minCalls);
        // Thresholds in tenths of a percent: both sides compute k / 10f in float.
        long failure = c.below(3) == 0 ? 500 : 1 + c.below(1000);
        long slowRate = c.below(3) == 0 ? 1000 : 1 + c.below(1000);
        b.failureRateThreshold(failure / 10f).slowCallRateThreshold(slowRate / 10f);
        // Half the cases run on a 1 ms grid (`grain`: arrivals, durations and every threshold
        // in whole ms, `base` and `gap` counted in grains), so that durations equal the slow
        // threshold and arrivals fall exactly at the end of a wait; the others in ns, so that
        // toMillis() truncation shows.
        long u = c.below(2) == 0 ? 1 : 1_000_000;
        long base = u == 1 ? 1_000_000 + c.below(199_000_000) : 1 + c.below(200);
        long slowNs = (1 + c.below(3 * base)) * u;
        b.slowCallDurationThreshold(Duration.ofNanos(slowNs));
        long gapMean = Math.max(1, base / (1 + c.below(20)));
        // Waits of about 1..40 arrivals, at least 1 ms.
        long minMs = 1_000_000 / u;
        long waitNs = 0, initial = 0, max = 0;
        double mult = 0;
        if (c.below(3) == 0) {
            initial = (minMs + c.below(20 * gapMean + 1)) * u;
            mult = (10 + c.below(21)) / 10.0;
            max = c.below(2) == 0 ? 0 : (minMs + c.below(80 * gapMean + 1)) * u;
            b.waitIntervalFunctionInOpenState(max == 0
                ? IntervalFunction.ofExponentialBackoff(Duration.ofNanos(initial), mult)
                : IntervalFunction.ofExponentialBackoff(Duration.ofNanos(initial), mult, Duration.ofNanos(max)));
        } else {
            waitNs = (minMs + c.below(40 * gapMean + 1)) * u;
            b.waitDurationInOpenState(Duration.ofNanos(waitNs));
        }
        int permitted = 1 + (int) c.below(10);
        b.permittedNumberOfCallsInHalfOpenState(permitted);
        boolean auto = c.below(3) == 0;
        b.automaticTransitionFromOpenToHalfOpenEnabled(auto);
        long maxWait = 0;
        boolean toClosed = false;
        if (c.below(3) == 0) {
            maxWait = c.below(40 * gapMean + 1) * u;
            toClosed = c.below(2) == 0;
            b.maxWaitDurationInHalfOpenState(Duration.ofNanos(maxWait))
                .transitionToStateAfterWaitDuration(toClosed ? CircuitBreaker.State.CLOSED : CircuitBreaker.State.OPEN);
        }
        cfgJson[0] = String.format("[%d,%d,%d,%d,%d,%d,%d,%s,%d,%d,%d,%d,%d]", size, minCalls, failure, slowRate, slowNs,
            waitNs, initial, mult, max, permitted, auto ? 1 : 0, maxWait, toClosed ? 1 : 0);
        long spread = c.below(101), switchPm = c.below(60), badPm = c.below(700), releasePm = c.below(4) == 0 ? c.below(100) : 0;
        genJson[0] = String.format("[%d,%d,%d,%d,%d,%d,%d,%d,%d]", STEPS, gapMean, base, spread, switchPm, badPm, releasePm, u, u);

        now = 0;
        SCHEDULER.tasks.clear();
        CircuitBreaker cb = new CircuitBreakerStateMachine("golden", b.build());
        Rng r = new Rng(seed ^ TRAFFIC);
        List<Pending> pending = new ArrayList<>();
        long nextArrival = 0, nextId = 0;
        int regime = 0;
        StringBuilder out = new StringBuilder("[");
        long h = FNV;
        for (int step = 0; step < STEPS; step++) {
            int first = -1;
            for (int i = 0; i < pending.size(); i++) {
                if (first < 0 || pending.get(i).end < pending.get(first).end) first = i;
            }
            long admitted = 2;
            if (first >= 0 && pending.get(first).end <= nextArrival) {
                Pending p = pending.remove(first);
                SCHEDULER.runUntil(p.end);
                now = p.end;
                if (p.release) cb.releasePermission();
                else if (p.bad) cb.onError(p.end - p.start, TimeUnit.NANOSECONDS, new RuntimeException());
                else cb.onSuccess(p.end - p.start, TimeUnit.NANOSECONDS);
                if (trace) System.out.printf("%d t=%d finish id=%d bad=%s release=%s", step, now, p.id, p.bad, p.release);
            } else {
                SCHEDULER.runUntil(nextArrival);
                now = nextArrival;
                long id = nextId++;
                if (r.below(1000) < switchPm) regime = (int) r.below(REGIME.length);
                long dur = (base * REGIME[regime] / 100 + r.below(base * spread / 100 + 1) + 1) * u;
                boolean bad = r.below(1000) < badPm;
                boolean release = r.below(1000) < releasePm;
                nextArrival = now + (1 + r.below(2 * gapMean)) * u;
                boolean ok = cb.tryAcquirePermission();
                admitted = ok ? 1 : 0;
                if (ok) {
                    Pending p = new Pending();
                    p.id = id; p.start = now; p.end = now + dur; p.bad = bad; p.release = release;
                    pending.add(p);
                }
                if (trace) System.out.printf("%d t=%d acquire id=%d -> %s", step, now, id, ok ? "admitted" : "refused");
            }
            int st = code(cb.getState());
            if (trace) System.out.printf(" state=%d%n", st);
            h = mix(mix(h, admitted), st);
            if ((step + 1) % CHUNK == 0 || step + 1 == STEPS) {
                if (out.length() > 1) out.append(',');
                out.append(String.format("[%d,\"%08x\"]", st, h >>> 32));
                h = FNV;
            }
        }
        return out.append(']').toString();
    }

    static String one(String set, long seed, boolean trace) {
        String[] cfg = new String[1], gen = new String[1];
        String chunks = run(seed, trace, cfg, gen, set.equals("time_based"));
        return "[" + seed + "," + cfg[0] + "," + gen[0] + "," + chunks + "]";
    }

    public static void main(String[] args) throws Exception {
        installScheduler();
        if (args[0].equals("--trace")) {
            System.out.println(one(args[1], Long.parseLong(args[2]), true));
            return;
        }
        String[][] sets = {{"count_based", "200"}, {"time_based", "200"}};
        StringBuilder sb = new StringBuilder("{\"library\":\"resilience4j v2.4.0 f1c3be8e79d09c70d457b2f89c3f89d03f1b5720\",\"chunk\":" + CHUNK);
        for (String[] s : sets) {
            sb.append(",\n\"").append(s[0]).append("\":{\"config_keys\":").append(CONFIG_KEYS)
              .append(",\"gen_keys\":").append(GEN_KEYS).append(",\"cases\":[");
            for (int i = 0; i < Integer.parseInt(s[1]); i++) {
                sb.append(i == 0 ? "\n" : ",\n").append(one(s[0], i + 1, false));
            }
            sb.append("]}");
        }
        sb.append("}\n");
        Files.write(Paths.get(args[0]), sb.toString().getBytes("UTF-8"));
    }
}
