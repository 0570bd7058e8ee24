//! Imported configurations (issue 32): `brownout import` refuses a file that holds nothing it
//! reads and a setting brownout cannot reproduce, at the offending value; a scenario's
//! `Import(..)` layer whose value the scenario's checks refuse names the imported file's
//! line and column.

use super::{Action, Case};

fn import(name: &str, library: &str, file: &str, text: &str, mention: &str) -> Case {
    Case {
        name: format!("import {name}"),
        files: vec![(file.into(), text.as_bytes().to_vec())],
        action: Action::Cli(vec!["import".into(), library.into(), format!("{{dir}}/{file}")], mention.into()),
        located: true,
    }
}

/// The cases.
pub fn imports() -> Vec<Case> {
    let mut cases = vec![
        import("envoy a line of text", "envoy", "notes.yaml", "just a line of text\n", "notes.yaml:1:1"),
        import("envoy an empty file", "envoy", "empty.yaml", "", "empty.yaml:1:1"),
        import("envoy a cluster without limits", "envoy", "c.yaml", "name: c\nconnect_timeout: 1s\n", "c.yaml:1:1"),
        import(
            "istio a rule without a traffic policy",
            "envoy",
            "dr.yaml",
            "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n",
            "dr.yaml:3:1",
        ),
        import(
            "istio a traffic policy with nothing read",
            "envoy",
            "dr.yaml",
            "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  trafficPolicy:\n    loadBalancer: {simple: RANDOM}\n",
            "dr.yaml:4:3",
        ),
        import(
            "haproxy a backend with nothing to read",
            "haproxy",
            "haproxy.cfg",
            "defaults\n  mode http\nbackend app\n  server s 127.0.0.1:80\n",
            "haproxy.cfg:3:1",
        ),
        import(
            "haproxy a timeout out of range",
            "haproxy",
            "haproxy.cfg",
            "backend app\n  timeout server 25d\n",
            "haproxy.cfg:2:18",
        ),
        import(
            "nginx a read timeout that is not a time",
            "nginx",
            "nginx.conf",
            "http {\n  upstream app { server s max_conns=2; }\n  server { location / { proxy_pass http://app;\n    proxy_read_timeout 5x; } }\n}\n",
            "nginx.conf:4:24",
        ),
        import(
            "nginx an unclosed block",
            "nginx",
            "nginx.conf",
            "http {\n  upstream app { server s; }\n",
            "nginx.conf:1:1",
        ),
        import(
            "dotnet linear backoff",
            "dotnet",
            "appsettings.json",
            "{\"Retry\": {\"BackoffType\": \"Linear\"}}",
            "appsettings.json:1:27",
        ),
        import(
            "envoy a merge key on a scalar",
            "envoy",
            "m.yaml",
            "a: &a 1\noutlier_detection:\n  <<: *a\n",
            "a merge key (<<) takes a mapping",
        ),
    ];
    // An Import layer the scenario's checks refuse: at the imported value, 3:14 of o.json.
    let text = super::scenarios::edit(
        "(name: \"direct\", stack: []),",
        "(name: \"direct\", stack: [(policy: Import((file: \"o.json\")))]),",
    );
    cases.push(Case {
        name: "import layer value the scenario refuses".into(),
        files: vec![
            ("s.ron".into(), text.into_bytes()),
            ("o.json".into(), b"{\n  \"resetTimeout\": 1000,\n  \"timeout\": 1.5\n}\n".to_vec()),
        ],
        action: Action::Scenario("s.ron".into()),
        // Located in o.json (3:14), not in s.ron, which it names as "(imported by
        // s.ron:L:C)": tests/policies/import.rs a_refused_imported_value_names_the_imported_files_line
        // checks both.
        located: false,
    });
    cases
}
