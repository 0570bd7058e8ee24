//! Output folders: a name that stays inside its parent, an exclusive lock per folder so two
//! processes never write one folder at once, a record of what brownout wrote there (so a
//! folder brownout did not write, or wrote for another command, is never replaced), and run
//! folders replaced whole, so a folder never mixes two runs.
//!
//! Everything brownout keeps about a folder lives inside it, in `.brownout/`: the lock file
//! `lock`, the `manifest` (the kind of results and every file written, at every depth), and
//! the records of a replacement in progress (`staging`, `commit`). Being inside the folder
//! ties them to the folder itself: an alias (a symlink, `out/.`) reaches the same lock, and
//! a sibling folder, whatever its name, has its own. The path given is resolved first
//! (absolute, `.` and `..` removed, the existing part canonical), so `out/.` is `out`.
//!
//! A run folder is written into a staging folder, then swapped in:
//! - beside the folder (`.<name>.brownout-XXXXXX`, recorded in `.brownout/staging` of both
//!   folders), exchanged with it in one atomic step where the system can (Linux
//!   `RENAME_EXCHANGE`); the staged folder carries its own locked lock file, so the lock
//!   holds across the swap, and a locker that finds the lock file replaced under it tries
//!   again;
//! - otherwise (a read-only parent, no atomic exchange) inside `.brownout/`, then moved in
//!   entry by entry after writing `.brownout/commit` (what to remove and what to move), a
//!   step that is finished by whichever brownout next locks the folder if a kill cut it.
//!   The folder then holds the new results whole once the step is finished.
//!
//! Lock files are left in place: deleting one while another process opens it would let two
//! processes hold "the" lock (the one exception is a folder that this lock created and
//! nothing was written to, removed while the lock is still held, which a waiting locker
//! detects and retries).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// brownout's own entry in every folder it writes.
pub const META: &str = ".brownout";

/// `root/name`, refusing a name that is not one plain path component (`.`, `..`, `a/b`, empty):
/// such a name would put results outside `root`.
pub(crate) fn child(root: &Path, name: &str) -> Result<PathBuf> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(n)), None) if n == name => Ok(root.join(name)),
        _ => bail!(
            "the name \"{name}\" cannot be a folder name (it must be one plain path component, not `.`, `..` or a path); rename it or pass --out"
        ),
    }
}

/// Where a run or a sweep named `name` writes when no folder is given: `output/<name>/`.
pub fn default_dir(name: &str) -> Result<PathBuf> {
    child(Path::new("output"), name)
}

/// `path` made absolute, without `.` and `..`, its longest existing part canonical (links
/// resolved, so an alias and the folder it names are one path). The part that does not exist
/// yet holds no link, so its `..` are removed by name.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    if path.as_os_str().is_empty() {
        bail!("an empty path names no folder");
    }
    let abs = std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
    let parts: Vec<Component> = abs.components().collect();
    let mut existing = parts.len();
    let mut base = loop {
        let prefix: PathBuf = parts[..existing].iter().collect();
        if let Ok(real) = std::fs::canonicalize(&prefix) {
            break real;
        }
        // The root always canonicalizes, so this ends.
        existing -= 1;
    };
    for c in &parts[existing..] {
        match c {
            Component::ParentDir => {
                base.pop();
            }
            Component::Normal(n) => base.push(n),
            _ => {}
        }
    }
    Ok(base)
}

/// The kind of results a folder holds; a command writes only into a folder of its own kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `brownout run`: replaced whole by each run.
    Run,
    /// `brownout sweep` and `merge`: a journal and the files rendered from it.
    Sweep,
    /// `brownout tune`: a journal of evaluations and the files rendered from it.
    Tune,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Sweep => "sweep",
            Kind::Tune => "tune",
        }
    }

    /// The top-level entries a folder of this kind may hold.
    fn files(self) -> &'static [&'static str] {
        match self {
            Kind::Run => super::run::RUN_FILES,
            Kind::Sweep => &[
                "plan.json",
                "journal.jsonl",
                "sweep.json",
                "sweep.csv",
                "runs.csv",
                "recommendation.json",
                "report.html",
                "charts",
            ],
            Kind::Tune => &["tune-journal.jsonl", "recommendation.json", "trace.csv", "report.html", "charts"],
        }
    }

    /// The kind of a folder written before folders had a manifest, told by its files.
    fn of_legacy(dir: &Path) -> Option<Kind> {
        let has = |f: &str| std::fs::symlink_metadata(dir.join(f)).is_ok();
        if has("tune-journal.jsonl") {
            Some(Kind::Tune)
        } else if has("journal.jsonl") || has("plan.json") || has("sweep.json") {
            Some(Kind::Sweep)
        } else if has("summary.json") {
            Some(Kind::Run)
        } else {
            None
        }
    }
}

/// `.brownout/manifest`: the folder's kind and every file brownout wrote in it (paths
/// relative to the folder, `/`-separated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    kind: Kind,
    files: BTreeSet<String>,
}

fn read_manifest(dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(META).join("manifest");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let bytes = crate::read_regular(&path)?;
    let m = serde_json::from_slice(&bytes).with_context(|| format!("{}: not brownout's manifest", path.display()))?;
    Ok(Some(m))
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(m)?;
    bytes.push(b'\n');
    crate::write_atomic(&dir.join(META).join("manifest"), &bytes)
}

/// An exclusive lock on an output folder, released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    /// The lock files held: the folder's, and the one of a staged folder swapped in.
    files: Arc<Mutex<Vec<File>>>,
    dir: PathBuf,
    real: PathBuf,
    /// This lock created the folder: dropped with nothing written, the folder goes too.
    created: bool,
    /// This lock created `.brownout/` in a folder that had none: dropped with no manifest
    /// written (the folder was refused), `.brownout/` goes.
    created_meta: bool,
}

impl Lock {
    /// The folder this lock guards, as it was given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder this lock guards, resolved ([`resolve`]).
    pub fn path(&self) -> &Path {
        &self.real
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Still holding the lock: a process that opened the lock file meanwhile finds it
        // gone once it gets it, and starts again.
        if self.created && holds_nothing(&self.real) {
            let _ = std::fs::remove_dir_all(&self.real);
        } else if self.created_meta && std::fs::symlink_metadata(self.real.join(META).join("manifest")).is_err() {
            let _ = std::fs::remove_dir_all(self.real.join(META));
        }
    }
}

/// Does `dir` hold nothing but brownout's bookkeeping (and a manifest listing no file)?
fn holds_nothing(dir: &Path) -> bool {
    let names = |d: &Path| -> Option<Vec<String>> {
        let entries = std::fs::read_dir(d).ok()?;
        Some(entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
    };
    names(dir).is_some_and(|n| n == [META])
        && names(&dir.join(META))
            .is_some_and(|n| n.iter().all(|f| ["lock", "staging", "manifest"].contains(&f.as_str())))
        && read_manifest(dir).ok().flatten().is_none_or(|m| m.files.is_empty())
}

/// Is the file at `path` the open `file` (not replaced since it was opened)?
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("opening the lock file {}", path.display()))
}

/// Lock `dir` for this process, or refuse at once if another process holds it. The folder
/// is created if need be (its parents too); an existing path that is not a folder is refused.
pub fn lock(dir: &Path) -> Result<Lock> {
    let real = resolve(dir)?;
    if std::fs::symlink_metadata(&real).is_ok() && !real.is_dir() {
        bail!("{} exists and is not a folder; choose another --out", dir.display());
    }
    for _ in 0..1000 {
        let created = !real.exists();
        let meta = real.join(META);
        let created_meta = !meta.exists();
        std::fs::create_dir_all(&meta).with_context(|| format!("creating {}", meta.display()))?;
        let path = meta.join("lock");
        let file = match open_lock_file(&path) {
            Ok(f) => f,
            // Removed by a holder that had created it and wrote nothing: start again.
            Err(_) if !meta.exists() => continue,
            Err(e) => return Err(e),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => bail!(
                "{} is in use by another brownout process (it holds {}): wait for it to finish, or choose another --out",
                dir.display(),
                path.display()
            ),
            Err(TryLockError::Error(e)) => return Err(e).with_context(|| format!("locking {}", path.display())),
        }
        // The previous holder may have swapped a new folder in (or removed the folder it
        // created) between our open and our lock: the lock is ours only if still in place.
        if same_file(&file, &path) {
            let files = Arc::new(Mutex::new(vec![file]));
            let lock = Lock { files, dir: dir.to_path_buf(), real, created, created_meta };
            finish_commit(&lock.real)?;
            return Ok(lock);
        }
    }
    bail!("{}: its lock file keeps being replaced; try again", dir.display())
}

/// Is `name` a temporary file of [`super::write_atomic`] (or of older versions)?
fn is_temporary(name: &str) -> bool {
    name.starts_with('.')
        && (name.ends_with(".tmp") || name.rsplit_once(".tmp-").is_some_and(|(_, pid)| pid.parse::<u32>().is_ok()))
}

/// Remove temporary files that a killed process left in `dir` and `dir/charts`. Only safe
/// under the folder's lock: every writer of the folder holds it.
pub fn clean_temporaries(lock: &Lock) -> Result<()> {
    for d in [lock.real.clone(), lock.real.join("charts")] {
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

/// The entries of folder `d` (not `.brownout` at the top, not temporaries), sorted, each with
/// whether it is a folder. An entry gone between the listing and its look-up (another
/// process's temporary) is passed over: it is not in the folder any more.
fn entries(d: &Path, top: bool) -> Result<Vec<(String, bool)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).with_context(|| format!("reading {}", d.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if (top && name == META) || is_temporary(&name) {
            continue;
        }
        match std::fs::symlink_metadata(e.path()) {
            Ok(m) => out.push((name, m.is_dir())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err).with_context(|| format!("reading {}", e.path().display())),
        }
    }
    out.sort();
    Ok(out)
}

/// Every file of a staged folder, which brownout wrote whole, at every depth, relative and
/// `/`-separated: its manifest.
fn staged_files(dir: &Path) -> Result<BTreeSet<String>> {
    let mut files = BTreeSet::new();
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = todo.pop() {
        for (name, is_dir) in entries(&d, prefix.is_empty())? {
            if is_dir {
                todo.push((d.join(&name), format!("{prefix}{name}/")));
            } else {
                files.insert(format!("{prefix}{name}"));
            }
        }
    }
    Ok(files)
}

/// Refuse `lock`'s folder unless brownout wrote everything in it, at every depth, for a
/// command of `kind`; the manifest it holds (or one made from a folder written before
/// manifests, whose files are then told by their names).
fn owned(lock: &Lock, kind: Kind) -> Result<Manifest> {
    owned_at(&lock.dir, &lock.real, kind)
}

/// [`owned`] for the folder `dir` (resolved), shown as `shown`.
fn owned_at(shown: &Path, dir: &Path, kind: Kind) -> Result<Manifest> {
    let manifest = read_manifest(dir)?;
    let held = manifest.as_ref().map(|m| m.kind).or_else(|| Kind::of_legacy(dir));
    if let Some(k) = held.filter(|k| *k != kind) {
        bail!(
            "{} holds the results of a {}, not of a {}: brownout does not mix them in one folder, so choose another --out",
            shown.display(),
            k.name(),
            kind.name()
        );
    }
    let listed = manifest.as_ref().map(|m| &m.files);
    let mut files = BTreeSet::new();
    // Judged while listed, folder by folder: the first entry brownout did not write refuses
    // the folder at once, and only a folder brownout writes (`charts`) is looked into, so
    // `--out ..` or `--out /` reads one listing, never the tree below it.
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = todo.pop() {
        for (name, is_dir) in entries(&d, prefix.is_empty())? {
            let rel = format!("{prefix}{name}");
            let top = !rel.contains('/');
            let chart = rel.strip_prefix("charts/").filter(|c| !c.contains('/'));
            let ok = if is_dir {
                rel == "charts" && kind.files().contains(&"charts")
            } else if top {
                kind.files().contains(&rel.as_str()) || listed.is_some_and(|l| l.contains(&rel))
            } else {
                // A run folder is replaced whole: only the charts it lists are brownout's. The
                // others are written in place, so a chart's name is enough (nothing is removed).
                let named_like_a_chart = chart.is_some_and(|c| c.ends_with(".png") || c.ends_with(".svg"));
                listed.is_some_and(|l| l.contains(&rel))
                    || (named_like_a_chart && (listed.is_none() || kind != Kind::Run))
            };
            if !ok {
                bail!(
                    "{} holds {rel}, which brownout did not write there; it never replaces or mixes in a folder it did not write, so choose another --out",
                    shown.display()
                );
            }
            if is_dir {
                todo.push((d.join(&name), format!("{rel}/")));
            } else {
                files.insert(rel);
            }
        }
    }
    Ok(Manifest { kind, files })
}

/// Take `lock`'s folder for a command of `kind` that writes in place (a sweep, a merge, a
/// search): refused unless it is empty or brownout wrote everything in it for that kind
/// (`owned`); its manifest then records the kind.
pub fn claim(lock: &Lock, kind: Kind) -> Result<()> {
    let m = owned(lock, kind)?;
    write_manifest(&lock.real, &m)
}

/// Add `written` (paths in `lock`'s folder, as given or relative to it; those that are not
/// files there are skipped) to its manifest, for the next command to know they are
/// brownout's. A folder without a manifest (written before manifests) is left as it is.
pub fn record<P: AsRef<Path>>(lock: &Lock, written: impl IntoIterator<Item = P>) -> Result<()> {
    let dir = &lock.real;
    // A folder written before manifests keeps being told by its files' names.
    let Some(mut m) = read_manifest(dir)? else { return Ok(()) };
    for p in written {
        let p = p.as_ref();
        let rel = p.strip_prefix(&lock.dir).or_else(|_| p.strip_prefix(dir)).unwrap_or(p);
        let rel: Vec<String> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if !rel.is_empty() && dir.join(rel.join("/")).is_file() {
            m.files.insert(rel.join("/"));
        }
    }
    write_manifest(dir, &m)
}

/// Remove from folder `dir` the files its manifest lists that the writer at hand writes
/// (`owns`, by their `/`-separated path in the folder) and that its new results do not
/// hold (`written`): what an earlier write left that the new one has no counterpart for (a
/// chart of a metric no longer swept, the recommendation of a dropped `decide`), so a
/// folder written in place never mixes two writes. They leave the manifest too. A folder
/// without a manifest (written before manifests) is left as it is: nothing in it is known
/// to be brownout's.
pub(crate) fn prune(dir: &Path, owns: impl Fn(&str) -> bool, written: &BTreeSet<String>) -> Result<()> {
    let Some(mut m) = read_manifest(dir)? else { return Ok(()) };
    let stale: Vec<String> = m.files.iter().filter(|f| owns(f) && !written.contains(*f)).cloned().collect();
    if stale.is_empty() {
        return Ok(());
    }
    for f in &stale {
        let path = dir.join(f);
        // symlink_metadata: a link in its place is removed itself, never followed.
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if !meta.is_dir() => {
                std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?
            }
            _ => {}
        }
        m.files.remove(f);
    }
    write_manifest(dir, &m)
}

/// A folder being written, to be swapped in for the target by [`Staged::commit`].
#[derive(Debug)]
pub(crate) struct Staged {
    dir: tempfile::TempDir,
    /// Staged beside the target (so it can be exchanged with it), not inside its `.brownout/`.
    beside: bool,
    target: PathBuf,
    shown: PathBuf,
    locks: Arc<Mutex<Vec<File>>>,
}

/// Start replacing the locked folder with a run's: refuse a folder that brownout did not
/// write for a run, at any depth ([`owned`]), remove what a killed run left, create the
/// staging folder (beside the folder where its parent can be written, else inside it).
pub(crate) fn stage(lock: &Lock) -> Result<Staged> {
    let target = lock.real.clone();
    owned(lock, Kind::Run)?;
    clean_staging(&target)?;
    let meta = target.join(META);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = target.parent().unwrap_or(Path::new("/"));
    let beside = tempfile::Builder::new().prefix(&format!(".{name}.brownout-")).tempdir_in(parent);
    let (dir, beside) = match beside {
        Ok(d) => (d, true),
        Err(_) => {
            let d = tempfile::Builder::new()
                .prefix("stage-")
                .tempdir_in(&meta)
                .with_context(|| format!("creating a staging folder in {}", meta.display()))?;
            (d, false)
        }
    };
    if beside {
        // Recorded in the folder (a kill before the swap leaves it there) and in the staged
        // folder (after the swap, the folder holds the staged one's record, naming the old).
        let record = dir.path().file_name().unwrap_or_default().to_string_lossy().into_owned();
        std::fs::create_dir(dir.path().join(META))?;
        crate::write_atomic(&dir.path().join(META).join("staging"), record.as_bytes())?;
        crate::write_atomic(&meta.join("staging"), record.as_bytes())?;
    }
    Ok(Staged { dir, beside, target, shown: lock.dir.clone(), locks: lock.files.clone() })
}

/// Remove what a killed run left: the staging folder (or old folder) recorded in
/// `.brownout/staging`, and staging folders inside `.brownout/`. Only the recorded name is
/// touched beside the folder: a sibling folder is never taken for litter, whatever its name.
fn clean_staging(target: &Path) -> Result<()> {
    let meta = target.join(META);
    let record = meta.join("staging");
    if std::fs::symlink_metadata(&record).is_ok() {
        let name = String::from_utf8_lossy(&crate::read_regular(&record)?).into_owned();
        let own = target.file_name().map(|n| format!(".{}.brownout-", n.to_string_lossy()));
        if let (Some(parent), Some(own)) = (target.parent(), own)
            && name.starts_with(&own)
            && child(parent, &name).is_ok()
        {
            let left = parent.join(&name);
            if left.join(META).is_dir() {
                std::fs::remove_dir_all(&left).with_context(|| format!("removing {}", left.display()))?;
            }
        }
        std::fs::remove_file(&record).with_context(|| format!("removing {}", record.display()))?;
    }
    for e in std::fs::read_dir(&meta).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("stage-") {
            std::fs::remove_dir_all(e.path()).with_context(|| format!("removing {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// `.brownout/commit`: a replacement moved in entry by entry; enough to finish it.
#[derive(Debug, Serialize, Deserialize)]
struct Commit {
    /// The staged folder (absolute).
    stage: PathBuf,
    /// The old folder's top-level entries to remove.
    old: Vec<String>,
    /// The staged folder's top-level entries to move in.
    new: Vec<String>,
    /// The new manifest.
    manifest: Manifest,
}

/// Finish a replacement that a kill cut short, if `dir` records one.
fn finish_commit(dir: &Path) -> Result<()> {
    let path = dir.join(META).join("commit");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let c: Commit = serde_json::from_slice(&crate::read_regular(&path)?)
        .with_context(|| format!("{}: not brownout's commit record", path.display()))?;
    for name in c.old.iter().filter(|n| !c.new.contains(n)) {
        remove_entry(&dir.join(name))?;
    }
    for name in &c.new {
        let from = c.stage.join(name);
        if std::fs::symlink_metadata(&from).is_ok() {
            remove_entry(&dir.join(name))?;
            std::fs::rename(&from, dir.join(name))
                .with_context(|| format!("moving {} in", dir.join(name).display()))?;
        }
    }
    write_manifest(dir, &c.manifest)?;
    if c.stage.starts_with(dir.join(META)) || c.stage.join(META).is_dir() {
        let _ = std::fs::remove_dir_all(&c.stage);
    }
    std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))
}

fn remove_entry(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
        Ok(_) => std::fs::remove_file(p),
        Err(_) => return Ok(()),
    }
    .with_context(|| format!("removing {}", p.display()))
}

impl Staged {
    /// Where to write the new folder's files.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Put the staged folder in place of the target; the old one is deleted. Refused, with
    /// the old folder left as it was, if a file brownout did not write appeared meanwhile.
    pub fn commit(self) -> Result<()> {
        let staged = self.dir.path().to_path_buf();
        let files = staged_files(&staged)?;
        let manifest = Manifest { kind: Kind::Run, files };
        // A file the user put there while the run was simulating is not brownout's either.
        owned_at(&self.shown, &self.target, Kind::Run)?;
        if self.beside {
            write_manifest(&staged, &manifest)?;
            // The folder keeps its mode (a staging folder is created owner-only).
            if let Ok(m) = std::fs::metadata(&self.target) {
                std::fs::set_permissions(&staged, m.permissions())
                    .with_context(|| format!("setting the mode of {}", staged.display()))?;
            }
            // The staged folder's own lock, held before it takes the folder's place.
            let file = open_lock_file(&staged.join(META).join("lock"))?;
            file.try_lock().map_err(|e| anyhow::anyhow!("locking the staged folder: {e:?}"))?;
            if exchange(&staged, &self.target)? {
                self.locks.lock().unwrap_or_else(|e| e.into_inner()).push(file);
                // The staging path now holds the old folder: dropping the TempDir deletes it.
                let removed = self.dir.close();
                let _ = std::fs::remove_file(self.target.join(META).join("staging"));
                return removed.with_context(|| format!("removing the previous {}", self.shown.display()));
            }
        }
        let top = |d: &Path| -> Result<Vec<String>> { Ok(entries(d, true)?.into_iter().map(|(r, _)| r).collect()) };
        let commit = Commit { stage: staged.clone(), old: top(&self.target)?, new: top(&staged)?, manifest };
        crate::write_atomic(&self.target.join(META).join("commit"), &serde_json::to_vec(&commit)?)?;
        // From here the staged folder is the commit record's: finishing removes it.
        let _ = self.dir.keep();
        finish_commit(&self.target)
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
mod tests;
