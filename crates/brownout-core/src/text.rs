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

/// Unicode's bidirectional embedding, override and isolate controls, which can make text
/// display in an order other than the one it has (Trojan Source).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// A character a reader cannot see as written: a control character or a bidirectional control.
pub fn is_unseen(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// `text` on one line with every [`is_unseen`] character shown as `\u{..}`, for quoting a
/// name in a message.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unseen(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
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

    #[test]
    fn unseen_characters_are_shown_as_escapes() {
        assert_eq!(visible("a\nb\t\u{1b}[0m\u{202e}c"), "a\\u{a}b\\u{9}\\u{1b}[0m\\u{202e}c");
        assert_eq!(visible("naïve ✓"), "naïve ✓");
    }
}
