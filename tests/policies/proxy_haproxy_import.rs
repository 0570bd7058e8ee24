//! `brownout import haproxy` and `Import(..)` of an `haproxy.cfg` (issue 39): the sample
//! `scenarios/imports/haproxy.cfg` read as HAProxy reads it (`doc/configuration.txt`: a
//! backend inherits the last `defaults` section above it; `timeout` values are milliseconds
//! unless a unit follows), each value cited `file:line`, every other directive warned, bad
//! values refused at their line and column. Expected values read off the sample by hand.

use std::path::{Path, PathBuf};

use brownout::import::{Imported, Library, import_file, import_text};

use crate::common::import::{Cited, cited, runs_as_written_by_hand};

fn sample() -> PathBuf {
    crate::common::import::sample("haproxy.cfg")
}

/// `(name, value, origin)` of every field of the one layer.
fn fields(out: &Imported) -> Vec<Cited<'_>> {
    let mut layers = cited(out);
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0].0, "HaproxyBackend");
    layers.remove(0).1
}

fn haproxy(text: &str, backend: Option<&str>) -> Result<Imported, String> {
    import_text(Some(Library::Haproxy), Path::new("h.cfg"), text, backend).map_err(|e| e.to_string())
}

#[test]
fn the_sample_backend_with_its_defaults() {
    let out = import_file(Some(Library::Haproxy), &sample(), Some("app")).unwrap();
    // `server app1 ... maxconn 20` (line 26), `timeout queue 200ms` (23), `timeout server
    // 500ms` (24, over the defaults' 2s at 14), `timeout connect 1s` from the defaults (12).
    assert_eq!(
        fields(&out),
        [
            ("maxconn", "20", "haproxy.cfg:26 maxconn"),
            ("timeout_queue", "\"200ms\"", "haproxy.cfg:23 timeout queue"),
            ("timeout_connect", "\"1s\"", "haproxy.cfg:12 timeout connect"),
            ("timeout_server", "\"500ms\"", "haproxy.cfg:24 timeout server"),
            ("retries", "0", "haproxy.cfg:25 retries"),
        ]
    );
    let warned: Vec<(usize, &str)> = out.warnings.iter().map(|w| (w.at.line, w.key.as_str())).collect();
    assert_eq!(warned, [(9, "mode"), (10, "log"), (11, "option"), (13, "timeout client"), (22, "balance"),]);
    // The printed stack is what `check` accepts.
    let ron = out.to_ron();
    assert!(ron.contains("(policy: HaproxyBackend(("), "{ron}");
}

#[test]
fn a_server_without_maxconn_sets_no_limit_and_several_backends_need_a_name() {
    let out = import_file(Some(Library::Haproxy), &sample(), Some("admin")).unwrap();
    assert_eq!(
        fields(&out),
        [
            ("timeout_connect", "\"1s\"", "haproxy.cfg:12 timeout connect"),
            ("timeout_server", "\"5s\"", "haproxy.cfg:29 timeout server"),
            ("retries", "3", "haproxy.cfg:15 retries"),
        ]
    );
    let e = import_file(Some(Library::Haproxy), &sample(), None).unwrap_err().to_string();
    assert!(e.contains("several backends") && e.contains("app") && e.contains("admin"), "{e}");
    let e = import_file(Some(Library::Haproxy), &sample(), Some("nope")).unwrap_err().to_string();
    assert!(e.contains("no backend \"nope\""), "{e}");
}

#[test]
fn servers_add_up_default_server_applies_and_units_are_read() {
    let text = "defaults\n  timeout queue 2s\nbackend b from nothing\n";
    assert!(haproxy(text, None).unwrap_err().contains("\"nothing\", which is not in the file"));
    let text = "defaults d1\n  timeout server 1m\n\
                defaults d2\n  timeout server 3s\n\
                backend b from d1\n  default-server maxconn 5 maxqueue 2\n  timeout queue 1500us\n\
                  server s1 10.0.0.1:80\n  server s2 10.0.0.2:80 maxconn 7\n";
    let out = haproxy(text, None).unwrap();
    assert_eq!(
        fields(&out),
        [
            ("maxconn", "12", "h.cfg:6 maxconn"),
            ("maxqueue", "4", "h.cfg:6 maxqueue"),
            ("timeout_queue", "\"1500us\"", "h.cfg:7 timeout queue"),
            ("timeout_server", "\"1m\"", "h.cfg:2 timeout server"),
            ("servers", "2", "2 server lines"),
        ]
    );
}

#[test]
fn bad_values_are_refused_at_their_line_and_column_and_unknown_lines_warned() {
    let backend = |line: &str| format!("backend b\n  server s 1.2.3.4:80 maxconn 3\n{line}\n");
    for (line, col, what) in [
        ("  timeout server 30x", 18, "not a time"),
        ("  timeout server 30d", 18, "out of range"),
        ("  timeout queue 0", 17, "0 is no timeout"),
        ("  timeout connect", 11, "needs a value"),
        ("  server t 1.2.3.4:80 maxconn -1", 31, "whole number"),
        ("  server t 1.2.3.4:80 maxqueue 3000000000", 32, "whole number"),
    ] {
        let e = haproxy(&backend(line), None).unwrap_err();
        assert!(e.starts_with(&format!("h.cfg:3:{col}: ")) && e.contains(what), "{line}: {e}");
    }
    let e = haproxy("defaults\n  maxconn 10\nbackend b\n  server s 1.2.3.4:80\n", None).unwrap_err();
    assert!(e.starts_with("h.cfg:3:1: ") && e.contains("nothing to import"), "{e}");
    let out = haproxy(&backend("  frobnicate 1 # a comment"), None).unwrap();
    let w = &out.warnings[0];
    assert_eq!((w.at.line, w.at.col, w.key.as_str()), (3, 3, "frobnicate"));
    assert!(w.message.contains("unknown"));
}

#[test]
fn an_import_layer_runs_as_the_preset_written_by_hand() {
    let imported = runs_as_written_by_hand(
        r#"(policy: Import((file: "haproxy.cfg", instance: "app")))"#,
        r#"(policy: HaproxyBackend((maxconn: 20, timeout_queue: "200ms", timeout_connect: "1s", timeout_server: "500ms", retries: 0)))"#,
    );
    // The sample's backend queues and times out under this load.
    let c = &imported.classes[0];
    assert!(c.outcomes.error > 0 && c.outcomes.timeout > 0, "{:?}", c.outcomes);
}
