//! Message text shared by the validators of scenarios, policies, sweeps and tunes. A leaf
//! module, so that policies need not import the scenario to word an error.

/// Names listed in a message: all of them when few, else the first ten and how many more,
/// so a scenario with 100,000 classes still gets a message a reader can take in.
pub fn listing<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 10;
    let head: Vec<&str> = names.iter().take(SHOWN).map(AsRef::as_ref).collect();
    match names.len().saturating_sub(SHOWN) {
        0 => head.join(", "),
        more => format!("{}, ... and {more} more", head.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_show_ten_names_then_a_count() {
        assert_eq!(listing(&["a", "b"]), "a, b");
        let many: Vec<String> = (0..25).map(|i| format!("c{i}")).collect();
        assert_eq!(listing(&many), "c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, ... and 15 more");
        assert_eq!(listing::<&str>(&[]), "");
    }
}
