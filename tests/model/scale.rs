//! Scale (issue 21, targets 5 and 6): validation is linear in the number of classes, checked
//! by counting the allocations `load_text` makes (a count of work, never a time).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write;
use std::path::Path;

/// The system allocator, counting the allocations of the thread that makes them (the test
/// harness runs tests on threads of their own, so counts do not mix).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A scenario whose every per-class list has `n` entries, as `benches/many_classes.sh`
/// writes: classes, Timeout layers naming them, a TieredBulkhead and a Limiter naming each,
/// one expectation per class naming a phase, and n/10 phases. Every phase keeps a recorder of
/// every class and writes its figures, so running it would need n^2 / 10 of them (400 x 4,000
/// x 24 KiB, 38 GB a run): the memory and output limits are raised, since only loading and
/// validating are measured here.
fn many_classes(n: usize) -> String {
    let mut s = String::new();
    let horizon = n + 100;
    write!(
        s,
        r#"Scenario(name: "many", seed: 1, horizon: "{horizon}s", warmup: "0s", window: "{horizon}s",
           fleet: (instances: 2, workers: (slots: 50), pool: (max_connections: 20, acquire_timeout: "100ms")),
           dependency: (latency: LogNormal(median: "20ms", sigma: 0.4)),
           limits: (max_memory: "1000TiB", max_output: "1000TiB"), classes: ["#
    )
    .unwrap();
    for i in 0..n {
        write!(s, r#"(name: "c{i}", arrivals: Poisson(rate_per_s: 0.01), deadline: "{}ms"),"#, 100 + i % 900).unwrap();
    }
    s.push_str("], phases: [");
    for i in (0..n).step_by(10) {
        write!(s, r#"(name: "p{i}", start: "{i}s", end: "{}s"),"#, i + 10).unwrap();
    }
    s.push_str(r#"], policies: [(name: "none"), (name: "timeouts", stack: ["#);
    for k in 0..4 {
        write!(s, r#"(policy: Timeout((timeout: "{}ms")), classes: ["#, 200 + k).unwrap();
        for i in (k..n).step_by(4) {
            write!(s, r#""c{i}","#).unwrap();
        }
        s.push_str("]),");
    }
    s.push_str(r#"]), (name: "bulkhead", stack: [(policy: TieredBulkhead((permits: 10, classes: ["#);
    for i in 0..n {
        write!(s, r#"(name: "c{i}", share: 0.0, on_full: FallbackNow),"#).unwrap();
    }
    s.push_str(r#"]))), (policy: Limiter((permits: 10, class_max_wait: ["#);
    for i in 0..n {
        write!(s, r#"("c{i}", "50ms"),"#).unwrap();
    }
    s.push_str("])))])], expect: [");
    for i in 0..n {
        write!(s, r#"(policy: "bulkhead", class: "c{i}", phase: "p0", metric: "ok_ratio", op: Ge, value: 0.0),"#)
            .unwrap();
    }
    s.push_str("])");
    s
}

/// Allocations made while loading and validating `text`.
fn allocations_to_load(text: &str) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    let s = brownout::scenario::load_text(Path::new("many.ron"), text).expect("the generated scenario is valid");
    let after = ALLOCATIONS.with(Cell::get);
    drop(s);
    after - before
}

#[test]
fn validating_twice_the_classes_does_about_twice_the_work() {
    let (n, two_n) = (2_000, 4_000);
    let (a, b) = (allocations_to_load(&many_classes(n)), allocations_to_load(&many_classes(two_n)));
    // Linear work doubles (plus a little for longer names and deeper ordered maps); work
    // quadratic in anything per class quadruples.
    let ratio = b as f64 / a as f64;
    assert!(ratio < 2.5, "allocations: {a} for {n} classes, {b} for {two_n} ({ratio:.2}x)");
    // Each class costs a bounded number of allocations, whatever n.
    assert!(b < 200 * two_n as u64, "{b} allocations for {two_n} classes");
}

/// A name that is not among thousands is refused in a message a reader can take in: a few
/// of the names it could have been and how many more, never the whole list.
#[test]
fn an_unknown_name_among_thousands_gets_a_short_message() {
    let n = 4_000;
    let cases = [
        (many_classes(n).replacen(r#"(name: "c7", share: 0.0"#, r#"(name: "nobody", share: 0.0"#, 1), "nobody"),
        (many_classes(n).replacen(r#"("c7", "50ms")"#, r#"("nobody", "50ms")"#, 1), "nobody"),
    ];
    for (text, name) in cases {
        let e = brownout::scenario::load_text(Path::new("many.ron"), &text).expect_err("an unknown class");
        let message = e.to_string();
        assert!(message.contains(name), "{message}");
        assert!(message.len() < 600, "{} characters: {}", message.len(), &message[..600]);
    }
}
