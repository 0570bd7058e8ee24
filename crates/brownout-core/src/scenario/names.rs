//! Names that become file and folder names: scenario and sweep names (`output/<name>/`),
//! policy set names and class names (chart files). A name that cannot be a file name is
//! refused at validation, and two class names that map to one chart file are a collision.

/// The file-name-safe form of a name, used for chart and output file names: ASCII letters
/// (lower-cased), digits and `-` kept, everything else `_`. `a b` and `A_B` both give `a_b`.
pub fn file_stem(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// Why `name` cannot name a file or folder, if it cannot: empty, `.` or `..`, a path
/// separator, NUL or another control character.
pub fn check_file_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        Err("must not be empty".into())
    } else if name == "." || name == ".." {
        Err(format!("cannot be \"{name}\" (it names a folder, not a new one)"))
    } else if name.contains(['/', '\\']) {
        Err("must not contain a path separator (/ or \\)".into())
    } else if name.chars().any(char::is_control) {
        Err("must not contain control characters (NUL, tab, newline, escape, ...)".into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_collide_on_case_and_punctuation() {
        assert_eq!(file_stem("a b"), "a_b");
        assert_eq!(file_stem("A_B"), "a_b");
        assert_eq!(file_stem("check-out2"), "check-out2");
    }

    #[test]
    fn names_that_are_not_file_names_are_refused() {
        for bad in ["", "  ", ".", "..", "a/b", "a\\b", "a\0b", "a\tb", "x\u{1b}[31m"] {
            assert!(check_file_name(bad).is_err(), "{bad:?}");
        }
        for good in ["grocery", "a b", "...", ".hidden", "café"] {
            assert!(check_file_name(good).is_ok(), "{good:?}");
        }
    }
}
