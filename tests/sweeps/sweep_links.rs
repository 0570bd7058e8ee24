//! Linked axes are validated point by point, after the links are applied (issue 31): the
//! payments sweep (scenarios/sweeps/payments-share.ron) links refund's share to `1 -
//! authorize_share`. Its base scenario gives authorize 0.7 and refund 0.1, so authorize at
//! 0.95 alone over the base's refund sums to 1.05 and the scenario refuses it, while the point
//! the sweep runs, (0.95, 0.05), sums to 1: a check of each value alone against the base would
//! refuse a valid sweep. A point whose linked pair is itself invalid is still refused, naming
//! the point.

use std::path::{Path, PathBuf};

use brownout::sweep::grid;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The payments spec with `edits` applied (each `from` once), its base made absolute.
fn payments_spec(dir: &Path, edits: &[(&str, &str)]) -> (PathBuf, String) {
    let mut text = std::fs::read_to_string(repo("scenarios/sweeps/payments-share.ron")).unwrap();
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        text = text.replace(from, to);
    }
    let base = repo("scenarios/payments-share.ron");
    let text = text.replace("\"../payments-share.ron\"", &format!("{:?}", base.to_str().unwrap()));
    let p = dir.join("spec.ron");
    std::fs::write(&p, &text).unwrap();
    (p, text)
}

const VALUES: &str = "values: [0.5, 0.6, 0.7, 0.8, 0.9]";

#[test]
fn a_value_the_base_refuses_alone_is_valid_with_its_link() {
    let base = std::fs::read_to_string(repo("scenarios/payments-share.ron")).unwrap();
    // The premise: the base's refund share is 0.1, so 0.95 alone sums to 1.05.
    assert!(base.contains("(name: \"refund\", share: 0.1,"), "the base scenario changed");
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = payments_spec(dir.path(), &[(VALUES, "values: [0.5, 0.95]")]);
    let plan = grid::load(&p).unwrap_or_else(|e| panic!("{e}"));
    // Axes: authorize_share, refund_share (linked), depth, depth_end (linked); first axis slowest.
    let pairs: Vec<(f64, f64)> = plan.info.points.iter().map(|p| (p[0], p[1])).collect();
    assert!(pairs.contains(&(0.95, 0.05)), "{pairs:?}");
    assert!(pairs.contains(&(0.5, 0.5)), "{pairs:?}");
    assert_eq!(plan.info.points.len(), 4, "2 shares x 2 depths");
}

#[test]
fn a_point_whose_linked_pair_is_invalid_is_refused_naming_it() {
    // At 0.5 the link gives 0.5 (sum 1, valid); at 0.95 it gives -0.4, a negative share.
    let dir = tempfile::tempdir().unwrap();
    let (p, text) = payments_spec(
        dir.path(),
        &[(VALUES, "values: [0.5, 0.95]"), ("link: \"1 - authorize_share\"", "link: \"1.5 - 2 * authorize_share\"")],
    );
    let e = grid::load(&p).expect_err("the point (0.95, -0.4) must be refused");
    let line = text.lines().position(|l| l.contains("1.5 - 2 * authorize_share")).unwrap() + 1;
    assert_eq!(e.line, line, "{e}");
    assert!(e.message.contains("authorize_share=0.95") && e.message.contains("refund_share=-0.4"), "{e}");
}
