//! Escaping names (of scenarios, classes, policies, axes, metrics) for each output format, so
//! a name is shown as written and never read as markup, a formula or a terminal command.
//! HTML escaping is `output::html::escape`.

/// A name as Markdown text (also inside a table cell): backslash-escapes the characters that
/// start markup (`|`, `*`, `` ` ``, `[`, `]`, `~`, `\`, `_` at a word's edge), and `<` or `&`
/// where they could open raw HTML or an entity; line breaks and control characters become
/// `\u{..}` text.
pub fn md(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len());
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let escape = match c {
            '\\' | '|' | '*' | '`' | '[' | ']' | '~' => true,
            // Inside a word (`ok_ratio`) an underscore is not emphasis.
            '_' => !(prev.is_some_and(char::is_alphanumeric) && next.is_some_and(char::is_alphanumeric)),
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(n)),
            '&' => next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#'),
            _ => false,
        };
        if crate::text::is_unseen(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            if escape {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// Prose (a scenario's description) as Markdown text: each line as [`md`] escapes a name, so
/// no link, HTML tag, emphasis or control character takes effect, and a line that would open
/// a heading, quote, list or rule starts with a backslash; line breaks stay line breaks.
pub fn md_text(text: &str) -> String {
    text.lines()
        .map(|line| {
            let body = md(line);
            let starts_block = line.trim_start().starts_with(['#', '>', '-', '+', '=']);
            if starts_block { format!("\\{}", body.trim_start()) } else { body }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A name as a Markdown code span: `` `name` ``, with a fence longer than any run of backticks
/// in the name, and `|` escaped so the span cannot split a table cell.
pub(crate) fn md_code(name: &str) -> String {
    let clean = visible(name);
    let longest = clean.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if clean.starts_with('`') || clean.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{}{pad}{fence}", clean.replace('|', "\\|"))
}

/// A name as a CSV cell: a spreadsheet reads a cell starting with `=`, `+`, `-`, `@`, a tab or
/// a carriage return as a formula, so such a name gets a leading `'` (as does a name already
/// starting with `'`, so that [`csv_name`] undoes it exactly).
pub fn csv_cell(name: &str) -> String {
    if name.starts_with(['=', '+', '-', '@', '\t', '\r', '\'']) { format!("'{name}") } else { name.to_string() }
}

/// The name a [`csv_cell`] holds.
pub fn csv_name(cell: &str) -> String {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@', '\t', '\r', '\'']) => rest.to_string(),
        _ => cell.to_string(),
    }
}

/// Text for a terminal: control characters (escape sequences, bells, carriage returns) and
/// bidirectional overrides become visible `\u{..}` text; line breaks and tabs stay.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || crate::text::is_bidi_control(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `name` with control characters shown as `\u{..}` (for places that need one line).
pub fn visible(name: &str) -> String {
    crate::text::visible(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_names() {
        assert_eq!(md("checkout"), "checkout");
        assert_eq!(md("retry-only"), "retry-only");
        assert_eq!(md("ok_ratio < 0.5"), "ok_ratio < 0.5");
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(md("<script>"), "\\<script>");
        assert_eq!(md("_x_ *y*"), "\\_x\\_ \\*y\\*");
        assert_eq!(md("&amp; & b"), "\\&amp; & b");
        assert_eq!(md("a\nb\u{1b}"), "a\\u{a}b\\u{1b}");
        assert_eq!(md("[l](u)"), "\\[l\\](u)");
    }

    #[test]
    fn markdown_prose() {
        // Each hostile form from issue 32, and how CommonMark would otherwise read it.
        assert_eq!(md_text("<script>alert(1)</script>"), "\\<script>alert(1)\\</script>");
        assert_eq!(md_text("[x](javascript:alert(1))"), "\\[x\\](javascript:alert(1))");
        assert_eq!(md_text("red \u{1b}[31m"), "red \\u{1b}\\[31m");
        assert_eq!(md_text("# title\n> quote\n- item"), "\\# title\n\\> quote\n\\- item");
        assert_eq!(md_text("Two lines,\nplain."), "Two lines,\nplain.");
    }

    #[test]
    fn markdown_code_spans() {
        assert_eq!(md_code("tiered"), "`tiered`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x"), "`` `x ``");
        assert_eq!(md_code("a|b"), "`a\\|b`");
    }

    #[test]
    fn csv_names_round_trip() {
        for name in ["plain", "=1+2", "+x", "-y", "@z", "'quoted", "''=x", "\tt", "a=b", "", "'"] {
            assert_eq!(csv_name(&csv_cell(name)), name, "{name:?}");
            assert!(!csv_cell(name).starts_with(['=', '+', '-', '@', '\t', '\r']), "{name:?}");
        }
        assert_eq!(csv_cell("=cmd()"), "'=cmd()");
        assert_eq!(csv_cell("plain"), "plain");
    }

    #[test]
    fn terminal_text() {
        assert_eq!(terminal("a\u{1b}[31mb\n\tc\r\u{7}"), "a\\u{1b}[31mb\n\tc\\u{d}\\u{7}");
        assert_eq!(terminal("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(terminal("naïve ✓"), "naïve ✓");
    }
}
