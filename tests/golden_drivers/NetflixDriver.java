// Records golden limit trajectories from Netflix concurrency-limits (AIMDLimit, VegasLimit,
// Gradient2Limit, each behind a SimpleLimiter) for tests/policies/trajectories.rs. Not library code:
// it only calls the library's public builders, acquire() and the listeners. See README.md.
//
// Usage: java -cp <classes>:<slf4j-api.jar>:. NetflixDriver <out.json>
//        java -cp ... NetflixDriver --trace <algo> <seed>   (one case, step by step, on stdout)

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

public class NetflixDriver {
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
        /** Uniform in [0, n). */
        long below(long n) { return Long.remainderUnsigned(next(), n); }
    }

    /** Seed of the traffic stream of a case (the config stream is SplitMix64(seed)). */
    static final long TRAFFIC = 0x5452414646494321L;
    /** Duration multiplier of each latency regime, in percent. */
    static final long[] REGIME = {100, 100, 150, 400};
    /** Steps per chunk: the limit at its end and a hash of (admitted, limit) after every step. */
    static final int CHUNK = 50;

    /** Traffic parameters of a case (written to the data file; the Rust side replays them). */
    static final String GEN_KEYS = "[\"steps\",\"gap\",\"base\",\"spread_pct\",\"switch_pm\",\"drop_pm\",\"grain\"]";
    static final class Gen {
        int steps; long gap; long base; long spreadPct; long switchPm; long dropPm; long grain;
        String json() {
            return String.format("[%d,%d,%d,%d,%d,%d,%d]", steps, gap, base, spreadPct, switchPm, dropPm, grain);
        }
    }

    /** FNV-style word hash; tests/policies/trajectories.rs computes the same. */
    static long mix(long h, long v) { return (h ^ v) * 0x100000001b3L; }
    static final long FNV = 0xcbf29ce484222325L;

    static final class Pending { long id, start, end; boolean drop; Limiter.Listener l; }

    static long now;

    /** Runs one case; returns the "chunks" JSON array, printing each step when trace. */
    static String run(Limit limit, Gen g, long seed, boolean trace) {
        now = 0;
        SimpleLimiter<Void> lim = SimpleLimiter.newBuilder().limit(limit).nanoClock(() -> now).build();
        Rng r = new Rng(seed ^ TRAFFIC);
        List<Pending> pending = new ArrayList<>();
        long nextArrival = 0, nextId = 0;
        int regime = 0;
        StringBuilder out = new StringBuilder("[");
        long h = FNV;
        for (int step = 0; step < g.steps; step++) {
            int first = -1;
            for (int i = 0; i < pending.size(); i++) {
                Pending p = pending.get(i);
                if (first < 0 || p.end < pending.get(first).end) first = i; // ties: lowest id (list is in id order)
            }
            long admitted = 2; // 2 = not an acquire step
            if (first >= 0 && pending.get(first).end <= nextArrival) {
                Pending p = pending.remove(first);
                now = p.end;
                if (p.drop) p.l.onDropped(); else p.l.onSuccess();
                if (trace) System.out.printf("%d t=%d %s id=%d rtt=%d", step, now, p.drop ? "drop" : "ok", p.id, p.end - p.start);
            } else {
                now = nextArrival;
                long id = nextId++;
                if (r.below(1000) < g.switchPm) regime = (int) r.below(REGIME.length);
                long dur = (g.base * REGIME[regime] / 100 + r.below(g.base * g.spreadPct / 100 + 1) + 1) * g.grain;
                boolean drop = r.below(1000) < g.dropPm;
                nextArrival = now + 1 + r.below(2 * g.gap);
                Optional<Limiter.Listener> l = lim.acquire(null);
                admitted = l.isPresent() ? 1 : 0;
                if (l.isPresent()) {
                    Pending p = new Pending();
                    p.id = id; p.start = now; p.end = now + dur; p.drop = drop; p.l = l.get();
                    pending.add(p);
                }
                if (trace) System.out.printf("%d t=%d acquire id=%d -> %s", step, now, id, l.isPresent() ? "admitted" : "refused");
            }
            int lv = lim.getLimit();
            if (trace) System.out.printf(" limit=%d%n", lv);
            h = mix(mix(h, admitted), lv);
            if ((step + 1) % CHUNK == 0 || step + 1 == g.steps) {
                if (out.length() > 1) out.append(',');
                out.append(String.format("[%d,\"%08x\"]", lv, h >>> 32));
                h = FNV;
            }
        }
        return out.append(']').toString();
    }

    /** Traffic whose mean in-flight count is `load` tenths of `limit`. Half the cases have
     *  durations in whole ms (`grain`, and `base` in grains), so that they often equal a
     *  threshold on the same grid exactly. */
    static Gen gen(Rng c, int steps, long limit) {
        Gen g = new Gen();
        g.steps = steps;
        g.grain = c.below(2) == 0 ? 1 : 1_000_000;
        g.base = g.grain == 1 ? 1_000_000 + c.below(49_000_000) : 5 + c.below(50);
        long load = 2 + c.below(29); // 0.2 .. 3.0 x the limit
        g.gap = Math.max(1, g.base * g.grain * 10 / (limit * load));
        g.spreadPct = c.below(101);
        g.switchPm = c.below(60);
        g.dropPm = c.below(4) == 0 ? 0 : c.below(120);
        return g;
    }

    static String aimd(long seed, boolean trace) {
        Rng c = new Rng(seed);
        int min = 1 + (int) c.below(40);
        int initial = min + (int) c.below(60);
        int max = initial + (int) c.below(200);
        double backoff = (50 + c.below(50)) / 100.0;
        Gen g = gen(c, 300, initial);
        long timeout = g.grain == 1 ? 2_000_000 + c.below(200_000_000) : (1 + c.below(3 * g.base)) * g.grain;
        Limit l = AIMDLimit.newBuilder().minLimit(min).initialLimit(initial).maxLimit(max)
            .backoffRatio(backoff).timeout(timeout, TimeUnit.NANOSECONDS).build();
        String cfg = String.format("[%d,%d,%d,%s,%d]",
            initial, min, max, backoff, timeout);
        return "[" + seed + "," + cfg + "," + g.json() + "," + run(l, g, seed, trace) + "]";
    }

    static String vegas(long seed, boolean large, boolean trace) {
        Rng c = new Rng(seed);
        int initial = large ? 1000 + (int) c.below(300) : 1 + (int) c.below(300);
        int max = large ? initial + (int) c.below(3000) : initial + (int) c.below(999 - initial + 1);
        long k = c.below(4);
        double smoothing = k == 0 ? 1.0 : k == 1 ? 0.5 : (1 + c.below(100)) / 100.0;
        // Probing rtt_noload draws ThreadLocalRandom jitter, which cannot be replayed: a
        // multiplier this large never probes within a case.
        int probe = 1_000_000;
        Gen g = gen(c, large ? 3000 : 300, initial);
        if (large) {
            // At limits of 1000 the queue estimate ceil(limit * (1 - rtt_noload / rtt)) stays
            // under alpha = 3 * log10(limit) only for RTTs within about 1 % of the minimum:
            // nearly constant durations, and 0.6 to 1.5 times the limit in flight (the first
            // completions come after about that many arrivals).
            g.spreadPct = c.below(2);
            g.switchPm = c.below(5);
            g.gap = Math.max(1, g.base * g.grain * 10 / (initial * (6 + c.below(10))));
        }
        Limit l = VegasLimit.newBuilder().initialLimit(initial).maxConcurrency(max).smoothing(smoothing)
            .probeMultiplier(probe).build();
        String cfg = String.format("[%d,%d,%s,%d]",
            initial, max, smoothing, probe);
        return "[" + seed + "," + cfg + "," + g.json() + "," + run(l, g, seed, trace) + "]";
    }

    static String gradient2(long seed, boolean trace) {
        Rng c = new Rng(seed);
        int min = 1 + (int) c.below(40);
        int initial = min + (int) c.below(80);
        int max = initial + (int) c.below(300);
        long k = c.below(3);
        double smoothing = k == 0 ? 0.2 : k == 1 ? 1.0 : (1 + c.below(100)) / 100.0;
        int queue = (int) c.below(9);
        int longWindow = c.below(2) == 0 ? 600 : 1 + (int) c.below(100);
        double tolerance = (10 + c.below(21)) / 10.0;
        Gen g = gen(c, 300, initial);
        Limit l = Gradient2Limit.newBuilder().minLimit(min).initialLimit(initial).maxConcurrency(max)
            .smoothing(smoothing).queueSize(queue).longWindow(longWindow).rttTolerance(tolerance).build();
        String cfg = String.format("[%d,%d,%d,%s,%d,%d,%s]",
            initial, min, max, smoothing, queue, longWindow, tolerance);
        return "[" + seed + "," + cfg + "," + g.json() + "," + run(l, g, seed, trace) + "]";
    }

    static String one(String algo, long seed, boolean trace) {
        switch (algo) {
            case "aimd": return aimd(seed, trace);
            case "vegas": return vegas(seed, false, trace);
            case "vegas_large": return vegas(seed, true, trace);
            case "gradient2": return gradient2(seed, trace);
            default: throw new IllegalArgumentException(algo);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("--trace")) {
            System.out.println(one(args[1], Long.parseLong(args[2]), true));
            return;
        }
        String vegasKeys = "[\"initial_limit\",\"max_concurrency\",\"smoothing\",\"probe_multiplier\"]";
        String[][] sets = {
            {"aimd", "200", "[\"initial_limit\",\"min_limit\",\"max_limit\",\"backoff_ratio\",\"timeout_ns\"]"},
            {"vegas", "200", vegasKeys},
            {"vegas_large", "30", vegasKeys},
            {"gradient2", "200", "[\"initial_limit\",\"min_limit\",\"max_concurrency\",\"smoothing\",\"queue_size\",\"long_window\",\"rtt_tolerance\"]"}};
        StringBuilder sb = new StringBuilder("{\"library\":\"Netflix/concurrency-limits 78a74b9878d38c4c048b0304ce12a162ab7b7222\",\"chunk\":" + CHUNK);
        for (String[] s : sets) {
            sb.append(",\n\"").append(s[0]).append("\":{\"config_keys\":").append(s[2])
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
