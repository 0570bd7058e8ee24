//! `brownout import nginx` and `Import(..)` of an `nginx.conf` (issue 39): the sample
//! `scenarios/imports/nginx.conf` (the same file the real nginx runs from in CI) read as
//! nginx reads it (`ngx_conf_read_token`: words up to `;` or a block; a location inherits
//! the `http` block's directives), each value cited `file:line`, every other directive of
//! the upstream and of the location's blocks warned, bad values refused at their line and
//! column. Expected values read off the sample by hand.

use std::path::{Path, PathBuf};

use brownout::import::{Imported, Library, import_file, import_text};

use crate::common::import::{cited as layers, runs_as_written_by_hand};

fn sample() -> PathBuf {
    crate::common::import::sample("nginx.conf")
}

fn nginx(text: &str, upstream: Option<&str>) -> Result<Imported, String> {
    import_text(Some(Library::Nginx), Path::new("n.conf"), text, upstream).map_err(|e| e.to_string())
}

#[test]
fn the_sample_upstream_with_its_location_and_http_block() {
    let out = import_file(Some(Library::Nginx), &sample(), Some("app")).unwrap();
    // limit_req (line 20) with its zone's rate (11) and limit_req_status (12, http block);
    // the server's max_conns (14); the location's proxy_* (25-27).
    assert_eq!(
        layers(&out),
        [
            (
                "NginxLimitReq",
                vec![
                    ("rate", "PerSecond(50)", "nginx.conf:11 limit_req_zone rate"),
                    ("burst", "20", "nginx.conf:20 limit_req burst"),
                    ("nodelay", "true", "nginx.conf:20 limit_req nodelay"),
                    ("status", "429", "nginx.conf:12 limit_req_status"),
                ]
            ),
            (
                "NginxUpstream",
                vec![
                    ("max_conns", "20", "nginx.conf:14 max_conns"),
                    ("proxy_read_timeout", "\"500ms\"", "nginx.conf:25 proxy_read_timeout"),
                    // The connect timeout of the pool behind it, when that pool has a `connect`.
                    ("proxy_connect_timeout", "\"200ms\"", "nginx.conf:24 proxy_connect_timeout"),
                    ("proxy_next_upstream", "[Error, Timeout]", "nginx.conf:26 proxy_next_upstream"),
                    ("proxy_next_upstream_tries", "1", "nginx.conf:27 proxy_next_upstream_tries"),
                ]
            ),
        ]
    );
    let warned: Vec<(usize, &str)> = out.warnings.iter().map(|w| (w.at.line, w.key.as_str())).collect();
    assert_eq!(warned, [(10, "access_log"), (22, "proxy_http_version"), (23, "proxy_set_header")]);
    // The one upstream is found without a name, and `.conf` is told to be nginx's.
    let alone = import_file(None, &sample(), None).unwrap();
    assert_eq!(layers(&alone), layers(&out));
    // What it writes is a stack `check` accepts.
    let ron = out.to_ron();
    assert!(ron.contains("(policy: NginxUpstream(("), "{ron}");
    let text = format!(
        r#"Scenario(
        name: "pasted", seed: 1, horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 20, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 5.0), deadline: "2s")],
        dependency: (latency: Constant("100ms")),
        policies: [(name: "p", stack: {ron})],
    )"#
    );
    brownout::scenario::load_text(Path::new("pasted.ron"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn inner_blocks_override_and_servers_add_up() {
    let text = "http {\n\
        proxy_read_timeout 2;\n\
        proxy_next_upstream error http_503 http_504;\n\
        limit_conn_zone $binary_remote_addr zone=c:1m;\n\
        upstream u { server a max_conns=4 max_fails=3; server b max_conns=4; }\n\
        server { proxy_read_timeout 1m30s;\n\
          location /x { proxy_pass http://u/path; limit_conn c 7; limit_conn_status 429; }\n\
        }\n}\n";
    let out = nginx(text, None).unwrap();
    assert_eq!(
        layers(&out),
        [
            (
                "Limiter",
                vec![
                    ("permits", "7", "n.conf:7 limit_conn"),
                    ("queue", "0", "limit_conn never queues"),
                    ("refuse_as", "Rejected", "n.conf:7 limit_conn_status"),
                ]
            ),
            (
                "NginxUpstream",
                vec![
                    ("max_conns", "4", "n.conf:5 max_conns"),
                    ("servers", "2", "n.conf:5 2 server lines"),
                    ("proxy_read_timeout", "\"90s\"", "n.conf:6 proxy_read_timeout"),
                    ("proxy_next_upstream", "[Error, Http503]", "n.conf:3 proxy_next_upstream"),
                ]
            ),
        ]
    );
    let warned: Vec<&str> = out.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(warned, ["limit_conn_zone key $binary_remote_addr", "server max_fails", "proxy_next_upstream http_504"]);
}

#[test]
fn bad_values_are_refused_at_their_line_and_column() {
    let conf = |line: &str| {
        format!(
            "http {{\nupstream u {{ server a max_conns=2; }}\nlimit_req_zone k zone=z:1m rate=5r/s;\nserver {{ location / {{ proxy_pass http://u;\n{line}\n}} }}\n}}\n"
        )
    };
    for (line, col, what) in [
        ("proxy_read_timeout 30x;", 20, "not a time"),
        ("proxy_read_timeout 5ms2s;", 20, "not a time"),
        ("proxy_read_timeout 0;", 20, "> 0"),
        ("proxy_next_upstream error bogus;", 27, "invalid value"),
        ("proxy_next_upstream_tries -1;", 27, "whole number"),
        ("limit_req zone=z burst=0;", 18, "whole number"),
        ("limit_req zone=y;", 11, "no limit_req_zone"),
        ("limit_req_status 404;", 18, "429 or 503"),
        ("limit_req_status 600;", 18, "whole number"),
    ] {
        let e = nginx(&conf(line), None).unwrap_err();
        assert!(e.starts_with(&format!("n.conf:5:{col}: ")) && e.contains(what), "{line}: {e}");
    }
    for (text, at, what) in [
        ("http { upstream u { server a; }", "n.conf:1:1:", "no \"}\""),
        ("http { upstream u { server a } }", "n.conf:1:21:", "no \";\""),
        ("http { }\n}", "n.conf:2:1:", "no block is open"),
        ("http { x \"a\"b; }", "n.conf:1:13:", "after a quoted word"),
        ("http { upstream u { server a; } }", "n.conf:1:8:", "no location passes"),
        (
            "http { upstream u { server a max_conns=x; } server { location / { proxy_pass http://u; } } }",
            "n.conf:1:30:",
            "whole number",
        ),
    ] {
        let e = nginx(text, None).unwrap_err();
        assert!(e.starts_with(at) && e.contains(what), "{text}: {e}");
    }
    let two = "http { upstream a { server x; } upstream b { server y; } }";
    assert!(nginx(two, None).unwrap_err().contains("several upstreams"));
    assert!(nginx(two, Some("c")).unwrap_err().contains("no upstream \"c\""));
}

#[test]
fn an_import_layer_runs_as_the_presets_written_by_hand() {
    let imported = runs_as_written_by_hand(
        r#"(policy: Import((file: "nginx.conf", instance: "app")))"#,
        r#"(policy: NginxLimitReq((rate: PerSecond(50), burst: 20, nodelay: true, status: 429))),
           (policy: NginxUpstream((max_conns: 20, proxy_read_timeout: "500ms", proxy_next_upstream_tries: 1)))"#,
    );
    // Under 60/s of 300 ms calls the 20 connections fill (502s) and the slow tail times out.
    let c = &imported.classes[0];
    assert!(c.causes.no_live_upstream > 0 && c.causes.attempt_timeout > 0, "{:?}", c.causes);
}
