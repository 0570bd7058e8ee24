//! Reading a file the user names, safely: every file brownout reads (scenarios, data files,
//! imported configurations, sweep specs, result folders, journals, summaries) comes through
//! [`open_regular`] or [`read_capped`].
//!
//! A path may name anything: a FIFO, whose `open` blocks until a writer comes (forever, in
//! CI); a device such as `/dev/zero`, whose stated size is 0 while a read never ends; a
//! regular file that grows while it is read. So the file is opened non-blocking, what was
//! opened (not what the path named a moment before) is checked to be a regular file, and at
//! most one byte past the cap is read.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why a file could not be read. `Display` gives the reason without the path: callers put
/// the path (and their own words for the file) in front.
#[derive(Debug)]
pub enum ReadError {
    /// Opening, inspecting or reading failed.
    Io(std::io::Error),
    /// What was opened is not a regular file; the text says what it is ("a FIFO").
    NotRegular(&'static str),
    /// The file holds more than `cap` bytes.
    TooLarge {
        /// The largest size read, in bytes.
        cap: u64,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read it: {e}"),
            ReadError::NotRegular(what) => write!(f, "not a regular file ({what})"),
            ReadError::TooLarge { cap } => write!(f, "larger than the limit of {}", size(*cap)),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// `cap` as a reader would say it: whole MiB or GiB when it is one, bytes otherwise.
fn size(cap: u64) -> String {
    match cap {
        c if c >= 1 << 30 && c % (1 << 30) == 0 => format!("{} GiB", c >> 30),
        c if c >= 1 << 20 && c % (1 << 20) == 0 => format!("{} MiB", c >> 20),
        c => format!("{c} bytes"),
    }
}

/// What a file type is, for the message.
fn kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a folder" } else { "not a file" }
}

/// Open `path` for reading without blocking, and refuse what was opened unless it is a
/// regular file. The returned handle reads in blocking mode as usual (a regular file never
/// blocks on `O_NONBLOCK`'s account).
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO with no writer would block `open` itself; a non-blocking open returns at once.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    // The handle's own type: a path swapped for a FIFO after a check on the path is caught.
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(ReadError::NotRegular(kind(t)));
    }
    Ok(file)
}

/// The bytes of the regular file `path`, at most `cap` of them; a longer file (even one that
/// grew since it was opened) is refused after reading `cap + 1` bytes, never more.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    let stated = file.metadata()?.len();
    if stated > cap {
        return Err(ReadError::TooLarge { cap });
    }
    let mut bytes = Vec::with_capacity(stated as usize);
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This crate's own manifest: a regular file whose length the test reads first.
    fn manifest() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")
    }

    #[test]
    fn a_regular_file_is_read_whole_up_to_its_cap() {
        let p = manifest();
        let len = p.metadata().unwrap().len();
        assert_eq!(read_capped(&p, len).unwrap().len() as u64, len);
        // One byte over the cap: refused, naming the cap.
        let e = read_capped(&p, len - 1).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { cap } if cap == len - 1), "{e}");
        assert_eq!(e.to_string(), format!("larger than the limit of {} bytes", len - 1));
    }

    #[test]
    fn devices_and_folders_are_refused_after_opening() {
        // /dev/zero states a size of 0 and never ends: refused before a byte is read.
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let e = read_capped(Path::new(env!("CARGO_MANIFEST_DIR")), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a folder)");
        // FIFOs (whose blocking open never returned) are planted by tests/io/bad_input/hostile.rs.
    }

    #[test]
    fn caps_read_as_sizes() {
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
