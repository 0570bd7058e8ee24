//! The M/G/1-PS rows of `brownout verify` (issue 34) can fail: a gateway that lets only three
//! calls reach the shared server at once is no longer M/G/1-PS (the others wait for a worker
//! slot, outside the dependency), so the dependency's mean time in system falls below
//! E[S] / (1 - rho) and the row must say FAIL.

use std::path::Path;
use std::process::Command;

#[test]
fn three_worker_slots_in_front_of_the_shared_server_break_mg1_ps() {
    let dir = tempfile::tempdir().unwrap();
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify");
    for entry in std::fs::read_dir(&models).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if path.file_name().unwrap() == "mg1-ps-lognormal-80.ron" {
            assert!(text.contains("slots: 100000"));
            text = text.replace("slots: 100000", "slots: 3");
        }
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_brownout"))
        .args(["verify", "--quick", "--models", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let row = stdout.lines().find(|l| l.starts_with("mg1-ps-lognormal-80")).expect("the row");
    assert!(row.ends_with("FAIL"), "{row}");
    // The other PS rows still pass: the failure is the edited model's alone.
    let others: Vec<&str> =
        stdout.lines().filter(|l| l.starts_with("mg1-ps-") && !l.contains("lognormal-80")).collect();
    assert_eq!(others.len(), 3, "{stdout}");
    assert!(others.iter().all(|l| l.ends_with("PASS")), "{stdout}");
}
