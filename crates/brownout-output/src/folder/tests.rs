//! Unit tests of `folder`, in a file of their own to keep the module short.

use super::*;

#[test]
fn only_plain_components_are_folder_names() {
    let root = Path::new("output");
    assert_eq!(child(root, "grocery").unwrap(), root.join("grocery"));
    assert_eq!(child(root, ".hidden").unwrap(), root.join(".hidden"));
    for bad in [".", "..", "", "a/b", "a/", "/abs", "./a", "a/.", "../x"] {
        assert!(child(root, bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn paths_resolve_to_one_spelling() {
    let d = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir(real.join("sub")).unwrap();
    std::os::unix::fs::symlink(real.join("sub"), real.join("alias")).unwrap();
    let x = real.join("x");
    for same in ["x/.", "x/", "sub/../x", "nope/../x", "./x"] {
        assert_eq!(resolve(&real.join(same)).unwrap(), x, "{same}");
    }
    assert_eq!(resolve(&real.join("alias/y")).unwrap(), real.join("sub/y"));
    assert_eq!(resolve(&real.join("alias")).unwrap(), real.join("sub"));
    assert!(resolve(Path::new("")).is_err());
}

#[test]
fn temporary_names() {
    assert!(is_temporary(".summary.csv.tmp-1234"));
    assert!(is_temporary(".summary.csv.Xy12ab.tmp"));
    assert!(!is_temporary("summary.csv"));
    assert!(!is_temporary(".res.lock"));
    assert!(!is_temporary(".x.tmp-abc"));
}

#[test]
fn a_second_lock_is_refused_until_the_first_is_dropped() {
    let d = tempfile::tempdir().unwrap();
    let first = lock(&d.path().join("x")).unwrap();
    let err = lock(&d.path().join("x")).unwrap_err().to_string();
    assert!(err.contains("in use by another brownout process"), "{err}");
    std::os::unix::fs::symlink(d.path().join("x"), d.path().join("alias")).unwrap();
    let err = lock(&d.path().join("alias/.")).unwrap_err().to_string();
    assert!(err.contains("in use by another brownout process"), "an alias: {err}");
    drop(first);
    // Nothing was written: the folder the lock created went with it.
    assert!(!d.path().join("x").exists());
    lock(&d.path().join("x")).unwrap();
}

#[test]
fn commit_replaces_the_folder_whole() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("run");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("summary.json"), "old").unwrap();
    std::fs::write(target.join("report.md"), "old").unwrap();
    let l = lock(&target).unwrap();
    let s = stage(&l).unwrap();
    std::fs::write(s.path().join("summary.json"), "new").unwrap();
    s.commit().unwrap();
    assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "new");
    assert!(!target.join("report.md").exists(), "the old folder's files do not survive");
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["run"], "only the folder: {names:?}");
    // The lock holds across the swap: the folder's lock file now is the staged one's.
    assert!(lock(&target).unwrap_err().to_string().contains("in use"));
    std::fs::write(target.join("notes.txt"), "mine").unwrap();
    assert!(stage(&l).unwrap_err().to_string().contains("notes.txt"));
    std::fs::remove_file(target.join("notes.txt")).unwrap();
    // The manifest lists what the run wrote: a file it did not write is refused at depth.
    std::fs::create_dir(target.join("charts")).unwrap();
    std::fs::write(target.join("charts/mine.png"), "mine").unwrap();
    assert!(stage(&l).unwrap_err().to_string().contains("charts/mine.png"));
    assert!(claim(&l, Kind::Sweep).unwrap_err().to_string().contains("results of a run"));
}

#[test]
fn a_replacement_cut_by_a_kill_is_finished_by_the_next_lock() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("run");
    let stage = target.join(META).join("stage-x");
    std::fs::create_dir_all(stage.join("charts")).unwrap();
    std::fs::write(target.join("report.md"), "old").unwrap();
    std::fs::create_dir(target.join("charts")).unwrap();
    std::fs::write(target.join("charts/a.png"), "old").unwrap();
    // Killed after moving summary.json in, before charts.
    std::fs::write(target.join("summary.json"), "new").unwrap();
    std::fs::write(stage.join("charts/b.png"), "new").unwrap();
    let files = ["summary.json", "charts/b.png"].map(String::from).into();
    let c = Commit {
        stage: stage.clone(),
        old: vec!["charts".into(), "report.md".into(), "summary.json".into()],
        new: vec!["charts".into(), "summary.json".into()],
        manifest: Manifest { kind: Kind::Run, files },
    };
    std::fs::write(target.join(META).join("commit"), serde_json::to_vec(&c).unwrap()).unwrap();
    let l = lock(&target).unwrap();
    assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "new");
    assert_eq!(std::fs::read_to_string(target.join("charts/b.png")).unwrap(), "new");
    assert!(!target.join("charts/a.png").exists() && !target.join("report.md").exists());
    assert!(!stage.exists() && !target.join(META).join("commit").exists());
    assert_eq!(read_manifest(&l.real).unwrap().unwrap(), c.manifest);
}
