//! `brownout new [TEMPLATE] [--out FILE]`: a commented starter scenario from a built-in
//! template (the files in `templates/`, embedded in the binary).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::Failure;

/// A built-in template.
pub struct Template {
    /// The name given to `brownout new`.
    pub name: &'static str,
    /// One line for `brownout new --list`.
    pub summary: &'static str,
    /// The scenario text (RON with comments).
    pub text: &'static str,
}

/// Every template, `minimal` first (the default).
pub const TEMPLATES: &[Template] = &[
    Template {
        name: "minimal",
        summary: "one class, one dependency that slows down, no protection versus a timeout",
        text: include_str!("../../templates/minimal.ron"),
    },
    Template {
        name: "grocery",
        summary: "the seed's case in six minutes: inventory drifts to 6 s; checkout waits, browse takes the cache",
        text: include_str!("../../templates/grocery.ron"),
    },
    Template {
        name: "payments",
        summary: "fraud scoring slows down: authorize must wait, refund fails fast, health never calls it",
        text: include_str!("../../templates/payments.ron"),
    },
    Template {
        name: "fleet",
        summary: "six instances, a partition and a rolling restart: per-instance versus fleet-wide breakers",
        text: include_str!("../../templates/fleet.ron"),
    },
];

/// Arguments of `brownout new`.
#[derive(Args, Debug)]
pub struct NewArgs {
    /// The template (see --list).
    #[arg(default_value = "minimal")]
    template: String,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long, requires = "out")]
    force: bool,
    /// List the templates, one line each.
    #[arg(long, conflicts_with_all = ["out", "force"])]
    list: bool,
}

/// The template called `name`.
pub fn find(name: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.name == name)
}

fn known() -> String {
    TEMPLATES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

/// Print the list, or the template to stdout or `--out`.
pub fn new(args: NewArgs) -> Result<(), Failure> {
    if args.list {
        let width = TEMPLATES.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in TEMPLATES {
            println!("{:width$}  {}", t.name, t.summary);
        }
        return Ok(());
    }
    let template = find(&args.template).ok_or_else(|| {
        Failure::input(format!("error: unknown template {:?}: known templates are {}", args.template, known()))
    })?;
    match super::out_file(args.out.as_deref()) {
        None => {
            print!("{}", template.text);
            Ok(())
        }
        Some(path) => {
            write_file(path, template.text, args.force)
                .map_err(|e| Failure::input(format!("error: {}: {e}", path.display())))?;
            eprintln!("{}", brownout::report::escape::terminal(&format!("wrote {}", path.display())));
            Ok(())
        }
    }
}

/// Write through a temporary file in the same folder, so a failure leaves nothing behind and
/// an existing file is replaced only with `force` (checked atomically, not before writing).
/// The file's mode is 0666 less the umask, as any editor's; errors name `path` and the cause,
/// never the temporary file.
pub(super) fn write_file(path: &Path, text: &str, force: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        let what = if dir.exists() { "is not a folder" } else { "does not exist" };
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("folder {} {what}", dir.display())));
    }
    if !force && path.symlink_metadata().is_ok() {
        return Err(exists());
    }
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir).map_err(cause)?;
    tmp.write_all(text.as_bytes()).map_err(cause)?;
    tmp.as_file().sync_all().map_err(cause)?;
    if force {
        tmp.persist(path).map_err(|e| cause(e.error))?;
    } else {
        tmp.persist_noclobber(path)
            .map_err(|e| if e.error.kind() == std::io::ErrorKind::AlreadyExists { exists() } else { cause(e.error) })?;
    }
    Ok(())
}

/// The cause of `e` alone: tempfile's errors name the temporary file, which the user never
/// asked for.
fn cause(e: std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::from(e.kind()),
    }
}

fn exists() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::AlreadyExists, "already exists (use --force to overwrite it)")
}
