//! The "Examples:" block of each subcommand's `--help`.

/// (subcommand, examples), each example a command line starting with `brownout `.
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "run",
        &[
            "brownout run scenarios/grocery.ron",
            "brownout run p.ron --seed 7 --out results/p --no-charts",
            "brownout run p.ron --json --junit expectations.xml --quiet > run.json",
        ],
    ),
    ("check", &["brownout check scenarios/grocery.ron", "brownout check p.ron --json"]),
    ("verify", &["brownout verify --quick", "brownout verify --replications 20 --seed 3 --json"]),
    (
        "diff",
        &[
            "brownout diff output/before output/after",
            "brownout diff base head --fail-on-regression checkout/goodput_per_s:5% --json",
            "brownout diff before after --fail-on-regression 'dependencies[pricing]/abandoned'",
        ],
    ),
    ("plot", &["brownout plot output/grocery"]),
    (
        "sweep",
        &[
            "brownout sweep scenarios/sweeps/grocery.ron -j 2 --out output/grocery-sweep",
            "brownout sweep scenarios/sweeps/grocery.ron --shard 0/4 --out shard-0 --resume",
            "brownout sweep scenarios/sweeps/checkout-flat.ron -j 2 --out output/checkout-flat",
        ],
    ),
    (
        "tune",
        &[
            "brownout tune scenarios/tune/grocery-tiered.ron -j 2 --out output/grocery-tune",
            "brownout tune scenarios/tune/grocery-tiered.ron --out output/grocery-tune --resume",
        ],
    ),
    ("merge", &["brownout merge shard-0 shard-1 shard-2 shard-3 --out merged"]),
    (
        "new",
        &[
            "brownout new --list",
            "brownout new payments > p.ron && brownout run p.ron",
            "brownout new fleet --out fleet.ron",
        ],
    ),
    ("completions", &["brownout completions bash > ~/.local/share/bash-completion/completions/brownout"]),
    (
        "import",
        &[
            "brownout import resilience4j application.yml --instance inventory",
            "brownout import envoy destination-rule.yaml --out inventory-stack.ron",
            "brownout import resilience4j application.yml --instance pricing --dependency pricing --scenario checkout.ron",
        ],
    ),
    ("export", &["brownout export openmetrics output/grocery --start 2026-01-01T00:00:00Z --out grocery.om"]),
    (
        "calibrate",
        &[
            "brownout calibrate prometheus rates.json latency.json --class browse=browse_requests_total --latency dependency_latency_seconds_bucket --out fitted",
            "brownout calibrate otlp traces.jsonl --service gateway --step 1m --out fitted",
        ],
    ),
    ("explain", &["brownout explain", "brownout explain TieredBulkhead", "brownout explain --all > docs/reference.md"]),
];

/// `cmd` with each listed subcommand's examples as its `after_help`.
pub fn with_examples(mut cmd: clap::Command) -> clap::Command {
    for (name, lines) in EXAMPLES {
        let text = format!("Examples:\n{}", lines.iter().map(|l| format!("  {l}\n")).collect::<String>());
        // Panics on a name that is not a subcommand: any test that parses arguments catches it.
        cmd = cmd.mut_subcommand(name, |s| s.after_help(text));
    }
    cmd
}
