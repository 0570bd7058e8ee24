//! Connection rules read from the proxies' configurations (issue 39): HAProxy's `http-reuse`
//! and nginx's `proxy_connect_timeout` and upstream `keepalive`, `keepalive_timeout`,
//! `keepalive_requests` become fields of the presets, each cited `file:line`; bad values are
//! refused at their line and column.

use std::path::Path;

use brownout::import::{Imported, Library, import_text};

/// `(name, value, origin)` of every field of the one layer named `policy`.
fn fields<'a>(out: &'a Imported, policy: &str) -> Vec<(&'a str, &'a str, &'a str)> {
    let layer = out.layers.iter().find(|l| l.policy == policy).expect("the preset");
    layer.fields.iter().map(|f| (f.name, f.value.as_str(), f.origin.as_str())).collect()
}

fn nginx(text: &str) -> Result<Imported, String> {
    import_text(Some(Library::Nginx), Path::new("n.conf"), text, None).map_err(|e| e.to_string())
}

fn haproxy(text: &str) -> Result<Imported, String> {
    import_text(Some(Library::Haproxy), Path::new("h.cfg"), text, None).map_err(|e| e.to_string())
}

#[test]
fn nginx_keepalive_and_connect_timeout_become_the_upstream_s_fields() {
    let text = "http {\n\
        upstream u {\n\
          server a max_conns=8;\n\
          keepalive 16;\n\
          keepalive_timeout 30s;\n\
          keepalive_requests 100;\n\
          keepalive_time 1h;\n\
        }\n\
        server { location / { proxy_pass http://u; proxy_connect_timeout 250ms; } }\n\
    }\n";
    let out = nginx(text).unwrap();
    assert_eq!(
        fields(&out, "NginxUpstream"),
        [
            ("max_conns", "8", "n.conf:3 max_conns"),
            ("proxy_connect_timeout", "\"250ms\"", "n.conf:9 proxy_connect_timeout"),
            ("keepalive", "16", "n.conf:4 keepalive"),
            ("keepalive_timeout", "\"30s\"", "n.conf:5 keepalive_timeout"),
            ("keepalive_requests", "100", "n.conf:6 keepalive_requests"),
        ]
    );
    // keepalive_time (a connection's longest life) has no equivalent: warned.
    let warned: Vec<(usize, &str)> = out.warnings.iter().map(|w| (w.at.line, w.key.as_str())).collect();
    assert_eq!(warned, [(7, "keepalive_time")]);
}

#[test]
fn nginx_bad_connection_values_are_refused_where_they_are_written() {
    let upstream = |line: &str| {
        format!(
            "http {{\n upstream u {{ server a;\n{line}\n }}\n server {{ location / {{ proxy_pass http://u; }} }}\n}}\n"
        )
    };
    for (line, col, what) in [
        ("  keepalive 0;", 13, "whole number from 1"),
        ("  keepalive -2;", 13, "whole number from 1"),
        ("  keepalive_requests 0;", 22, "whole number from 1"),
        ("  keepalive_timeout 0;", 21, "a time > 0"),
        ("  keepalive_timeout 5x;", 21, "not a time"),
    ] {
        let e = nginx(&upstream(line)).unwrap_err();
        assert!(e.starts_with(&format!("n.conf:3:{col}: ")) && e.contains(what), "{line}: {e}");
    }
    let e = nginx("http { upstream u { server a; }\n server { location / { proxy_pass http://u;\n proxy_connect_timeout 0; } } }\n")
        .unwrap_err();
    assert!(e.starts_with("n.conf:3:24: ") && e.contains("proxy_connect_timeout 0"), "{e}");
}

#[test]
fn haproxy_http_reuse_becomes_the_backend_s_field() {
    let backend = |line: &str| format!("backend b\n  server s 1.2.3.4:80 maxconn 3\n{line}\n");
    for (value, variant) in [("never", "Never"), ("safe", "Safe"), ("aggressive", "Aggressive"), ("always", "Always")] {
        let out = haproxy(&backend(&format!("  http-reuse {value}"))).unwrap();
        assert_eq!(
            fields(&out, "HaproxyBackend"),
            [("maxconn", "3", "h.cfg:2 maxconn"), ("http_reuse", variant, "h.cfg:3 http-reuse")]
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }
    let e = haproxy(&backend("  http-reuse sometimes")).unwrap_err();
    assert!(e.starts_with("h.cfg:3:14: ") && e.contains("never, safe, aggressive or always"), "{e}");
}
