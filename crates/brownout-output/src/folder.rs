//! Output folders: a name that stays inside its parent, an exclusive lock per folder so two
//! processes never write one folder at once, and run folders replaced whole (written into a
//! staging folder beside the target, then swapped in), so a folder never mixes two runs.
//!
//! The lock is the file `.<name>.lock` beside the folder, not inside it, because a run's
//! folder is replaced by another inode when it is swapped in. Lock files are left in place:
//! deleting one while another process opens it would let two processes hold "the" lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// `root/name`, refusing a name that is not one plain path component (`.`, `..`, `a/b`, empty):
/// such a name would put results outside `root`.
pub fn child(root: &Path, name: &str) -> Result<PathBuf> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(n)), None) if n == name => Ok(root.join(name)),
        _ => bail!(
            "the name \"{name}\" cannot be a folder name (it must be one plain path component, not `.`, `..` or a path); rename it or pass --out"
        ),
    }
}

/// The parent and the final (plain) component of an output folder path.
fn split(dir: &Path) -> Result<(PathBuf, String)> {
    let Some(Component::Normal(name)) = dir.components().next_back() else {
        bail!("{} does not name a folder: give a path ending in a folder name", dir.display());
    };
    let name = name.to_str().with_context(|| format!("{}: the folder name is not UTF-8", dir.display()))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((parent.to_path_buf(), name.to_string()))
}

/// An exclusive lock on an output folder, released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    _file: File,
    dir: PathBuf,
}

impl Lock {
    /// The folder this lock guards.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Lock `dir` for this process, or refuse at once if another process holds it.
pub fn lock(dir: &Path) -> Result<Lock> {
    let (parent, name) = split(dir)?;
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let path = parent.join(format!(".{name}.lock"));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Lock { _file: file, dir: dir.to_path_buf() }),
        Err(TryLockError::WouldBlock) => bail!(
            "{} is in use by another brownout process (it holds {}): wait for it to finish, or choose another --out",
            dir.display(),
            path.display()
        ),
        Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
    }
}

/// Is `name` a temporary file of [`super::write_atomic`] (or of older versions)?
fn is_temporary(name: &str) -> bool {
    name.starts_with('.')
        && (name.ends_with(".tmp") || name.rsplit_once(".tmp-").is_some_and(|(_, pid)| pid.parse::<u32>().is_ok()))
}

/// Remove temporary files that a killed process left in `dir` and `dir/charts`. Only safe
/// under the folder's lock: every writer of the folder holds it.
pub fn clean_temporaries(lock: &Lock) -> Result<()> {
    for d in [lock.dir.clone(), lock.dir.join("charts")] {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            // symlink_metadata: a planted link is removed itself, never followed.
            let is_file = std::fs::symlink_metadata(e.path()).is_ok_and(|m| !m.is_dir());
            if is_file && name.to_str().is_some_and(is_temporary) {
                std::fs::remove_file(e.path()).with_context(|| format!("removing {}", e.path().display()))?;
            }
        }
    }
    Ok(())
}

/// A folder being written, to be swapped in for the target by [`Staged::commit`].
#[derive(Debug)]
pub struct Staged {
    dir: tempfile::TempDir,
    target: PathBuf,
}

/// Start replacing the locked folder: refuse a target that holds anything but `owned` entries
/// (the files a run writes), clear litter of killed processes, create the staging folder.
pub fn stage(lock: &Lock, owned: &[&str]) -> Result<Staged> {
    let target = lock.dir.clone();
    let (parent, name) = split(&target)?;
    clean_staging(&parent, &name, &target)?;
    match std::fs::symlink_metadata(&target) {
        Ok(m) if !m.is_dir() => bail!("{} exists and is not a folder; choose another --out", target.display()),
        Ok(_) => {
            for e in std::fs::read_dir(&target).with_context(|| format!("reading {}", target.display()))? {
                let e = e?;
                let entry = e.file_name().to_string_lossy().into_owned();
                if !owned.contains(&entry.as_str()) && !is_temporary(&entry) {
                    bail!(
                        "{} holds {entry}, which brownout did not write there; a run replaces its folder whole, so choose another --out",
                        target.display()
                    );
                }
            }
        }
        Err(_) => {}
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!(".{name}.staging-"))
        .tempdir_in(&parent)
        .with_context(|| format!("creating a staging folder in {}", parent.display()))?;
    Ok(Staged { dir, target })
}

/// Remove staging folders of killed processes; put back a folder that a killed process
/// moved aside on a system without an atomic exchange.
fn clean_staging(parent: &Path, name: &str, target: &Path) -> Result<()> {
    let (staging, old) = (format!(".{name}.staging-"), format!(".{name}.old-"));
    let Ok(entries) = std::fs::read_dir(parent) else { return Ok(()) };
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        if entry.starts_with(&old) && !target.exists() {
            std::fs::rename(e.path(), target).with_context(|| format!("restoring {}", target.display()))?;
        } else if entry.starts_with(&staging) || entry.starts_with(&old) {
            std::fs::remove_dir_all(e.path()).with_context(|| format!("removing {}", e.path().display()))?;
        }
    }
    Ok(())
}

impl Staged {
    /// Where to write the new folder's files.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Put the staged folder in place of the target in one step; the old one is deleted.
    pub fn commit(self) -> Result<()> {
        let (staged, target) = (self.dir.path().to_path_buf(), &self.target);
        if std::fs::symlink_metadata(target).is_err() {
            std::fs::rename(&staged, target).with_context(|| format!("renaming into {}", target.display()))?;
            let _ = self.dir.keep();
            return Ok(());
        }
        if !exchange(&staged, target)? {
            // No atomic exchange here: move the old folder aside, then the new one in.
            let (parent, name) = split(target)?;
            let aside = tempfile::Builder::new().prefix(&format!(".{name}.old-")).tempdir_in(&parent)?.keep();
            std::fs::rename(target, &aside).with_context(|| format!("moving {} aside", target.display()))?;
            std::fs::rename(&staged, target).with_context(|| format!("renaming into {}", target.display()))?;
            std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
            let _ = self.dir.keep();
            return Ok(());
        }
        // The staging path now holds the old folder: dropping the TempDir deletes it.
        self.dir.close().with_context(|| format!("removing the previous {}", target.display()))
    }
}

/// Swap two folders atomically; `false` when the system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => Ok(false),
        Err(e) => {
            Err(std::io::Error::from(e)).with_context(|| format!("swapping {} into {}", a.display(), b.display()))
        }
    }
}

/// Swap two folders atomically; `false` when the system cannot.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
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
    fn folder_paths_must_end_in_a_name() {
        assert_eq!(split(Path::new("out")).unwrap(), (PathBuf::from("."), "out".to_string()));
        assert_eq!(split(Path::new("a/b")).unwrap(), (PathBuf::from("a"), "b".to_string()));
        for bad in [".", "..", "/", "a/.."] {
            assert!(split(Path::new(bad)).is_err(), "{bad:?} accepted");
        }
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
        drop(first);
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
        let s = stage(&l, &["summary.json", "report.md"]).unwrap();
        std::fs::write(s.path().join("summary.json"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "new");
        assert!(!target.join("report.md").exists(), "the old folder's files do not survive");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "only the folder and its lock: {names:?}");
        std::fs::write(target.join("notes.txt"), "mine").unwrap();
        assert!(stage(&l, &["summary.json"]).unwrap_err().to_string().contains("notes.txt"));
    }
}
