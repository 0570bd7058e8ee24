//! Where a value sits in a RON document: a small tokenizer (skipping comments and strings)
//! and a tree of struct / tuple / list / map nesting with the line and column of every
//! value, so a semantic error found on the deserialized value can point at the text that
//! wrote it. Paths look like `dependency.drift.Brownout.peak`, `classes[2].deadline` or
//! `policies[1].stack[0].policy.TieredBulkhead.classes[checkout].share`.

/// A 1-based line and column (columns count characters).
pub type Pos = (usize, usize);

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A struct field, an enum variant or a map key.
    Key(String),
    /// A list or tuple element.
    Index(usize),
    /// The list element whose `name` field is this.
    Named(String),
}

/// Split `a.b[2][x].c` into steps; `None` for a malformed path.
pub fn steps(path: &str) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Step::Key(key.to_string()));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']')?;
            let sel = &inner[..close];
            out.push(sel.parse().map_or_else(|_| Step::Named(sel.to_string()), Step::Index));
            rest = &inner[close + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// An identifier, number or other bare word.
    Word(String),
    /// A string literal's content.
    Str(String),
    /// One of `( ) [ ] { } , : # !`.
    Punct(char),
}

/// Tokens with their positions; comments and whitespace dropped.
fn tokenize(text: &str) -> Vec<(Tok, Pos)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let mut out = Vec::new();
    // Advance over `n` characters, keeping line and column.
    let step = |i: &mut usize, line: &mut usize, col: &mut usize, n: usize| {
        for _ in 0..n {
            if chars.get(*i) == Some(&'\n') {
                *line += 1;
                *col = 1;
            } else {
                *col += 1;
            }
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let pos = (line, col);
        if c.is_whitespace() {
            step(&mut i, &mut line, &mut col, 1);
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                step(&mut i, &mut line, &mut col, 1);
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                let two = (chars[i], chars.get(i + 1).copied());
                if two == ('/', Some('*')) {
                    depth += 1;
                    step(&mut i, &mut line, &mut col, 2);
                } else if two == ('*', Some('/')) {
                    depth -= 1;
                    step(&mut i, &mut line, &mut col, 2);
                    if depth == 0 {
                        break;
                    }
                } else {
                    step(&mut i, &mut line, &mut col, 1);
                }
            }
        } else if c == '"' || c == '\'' || ((c == 'b' || c == 'r') && matches!(next, Some('"' | '#'))) {
            let s = string(&chars, &mut i, |i, n| step(i, &mut line, &mut col, n));
            out.push((Tok::Str(s), pos));
        } else if "()[]{},:#!".contains(c) {
            out.push((Tok::Punct(c), pos));
            step(&mut i, &mut line, &mut col, 1);
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !"()[]{},:\"/".contains(chars[i]) {
                step(&mut i, &mut line, &mut col, 1);
            }
            if i == start {
                step(&mut i, &mut line, &mut col, 1); // a lone '/': skip it
                continue;
            }
            out.push((Tok::Word(chars[start..i].iter().collect()), pos));
        }
    }
    out
}

/// Read a string, char, byte-string or raw-string literal starting at `i`; returns its content.
fn string(chars: &[char], i: &mut usize, mut advance: impl FnMut(&mut usize, usize)) -> String {
    if chars[*i] == 'b' {
        advance(i, 1);
    }
    let raw = chars.get(*i) == Some(&'r');
    if raw {
        advance(i, 1);
    }
    let mut hashes = 0;
    while chars.get(*i) == Some(&'#') {
        hashes += 1;
        advance(i, 1);
    }
    let quote = chars.get(*i).copied().unwrap_or('"');
    advance(i, 1);
    let mut s = String::new();
    while *i < chars.len() {
        let c = chars[*i];
        if !raw && c == '\\' {
            if let Some(&e) = chars.get(*i + 1) {
                s.push(e);
            }
            advance(i, 2);
            continue;
        }
        if c == quote && (0..hashes).all(|k| chars.get(*i + 1 + k) == Some(&'#')) {
            advance(i, 1 + hashes);
            break;
        }
        s.push(c);
        advance(i, 1);
    }
    s
}

/// A value of the document with the position of its first token.
#[derive(Debug, Clone)]
pub struct Node {
    /// Where the value starts (a named struct or tuple: its name).
    pub pos: Pos,
    name: Option<String>,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Word(String),
    Str(String),
    Fields(Vec<(String, Node)>),
    Items(Vec<Node>),
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// Nesting deeper than this is not followed (ron itself refuses such documents).
const MAX_DEPTH: usize = 512;

struct Parser {
    toks: Vec<(Tok, Pos)>,
    at: usize,
}

impl Parser {
    fn peek(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.at + k).map(|t| &t.0)
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek(0) == Some(&Tok::Punct(c));
        self.at += usize::from(hit);
        hit
    }

    fn skip_attributes(&mut self) {
        while self.peek(0) == Some(&Tok::Punct('#')) {
            while let Some(t) = self.peek(0).cloned() {
                self.at += 1;
                if t == Tok::Punct(']') {
                    break;
                }
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (tok, pos) = self.toks.get(self.at)?.clone();
        self.at += 1;
        let kind = match tok {
            Tok::Str(s) => Kind::Str(s),
            Tok::Punct('(') => return self.paren(pos, None, depth),
            Tok::Punct('[') => Kind::List(self.items(']', depth)?),
            Tok::Punct('{') => Kind::Map(self.map(depth)?),
            Tok::Word(w) if self.eat('(') => return self.paren(pos, Some(w), depth),
            Tok::Word(w) => Kind::Word(w),
            Tok::Punct(_) => return None,
        };
        Some(Node { pos, name: None, kind })
    }

    /// After `(`: struct fields when it starts with `word :`, else tuple items.
    fn paren(&mut self, pos: Pos, name: Option<String>, depth: usize) -> Option<Node> {
        let fields = matches!(self.peek(0), Some(Tok::Word(_))) && self.peek(1) == Some(&Tok::Punct(':'));
        if !fields {
            return Some(Node { pos, name, kind: Kind::Items(self.items(')', depth)?) });
        }
        let mut out = Vec::new();
        while !self.eat(')') {
            let Some((Tok::Word(key), _)) = self.toks.get(self.at).cloned() else { return None };
            self.at += 1;
            if !self.eat(':') {
                return None;
            }
            out.push((key, self.value(depth + 1)?));
            self.eat(',');
        }
        Some(Node { pos, name, kind: Kind::Fields(out) })
    }

    fn items(&mut self, close: char, depth: usize) -> Option<Vec<Node>> {
        let mut out = Vec::new();
        while !self.eat(close) {
            out.push(self.value(depth + 1)?);
            self.eat(',');
        }
        Some(out)
    }

    fn map(&mut self, depth: usize) -> Option<Vec<(Node, Node)>> {
        let mut out = Vec::new();
        while !self.eat('}') {
            let k = self.value(depth + 1)?;
            if !self.eat(':') {
                return None;
            }
            out.push((k, self.value(depth + 1)?));
            self.eat(',');
        }
        Some(out)
    }
}

/// Parse a RON document into its tree of positioned values (`None` when it is not RON).
pub fn document(text: &str) -> Option<Node> {
    let mut p = Parser { toks: tokenize(text), at: 0 };
    p.skip_attributes();
    p.value(0)
}

impl Node {
    /// `Some(x)` written out is the same place as `x`.
    fn unwrap_some(&self) -> &Node {
        match (&self.name, &self.kind) {
            (Some(n), Kind::Items(v)) if n == "Some" && v.len() == 1 => v[0].unwrap_some(),
            _ => self,
        }
    }

    fn text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Word(s) | Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    fn field(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Fields(f) => f.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Kind::Map(m) => m.iter().find(|(k, _)| k.text() == Some(key)).map(|(_, v)| v),
            _ => None,
        }
    }

    fn child(&self, step: &Step) -> Option<&Node> {
        let n = self.unwrap_some();
        match step {
            // A variant: the named value itself, or a newtype variant's content.
            Step::Key(k) if n.name.as_deref() == Some(k) || n.text() == Some(k) => Some(match &n.kind {
                Kind::Items(v) if v.len() == 1 => &v[0],
                _ => n,
            }),
            Step::Key(k) => n.field(k),
            Step::Index(i) => match &n.kind {
                Kind::Items(v) | Kind::List(v) => v.get(*i),
                _ => None,
            },
            Step::Named(name) => match &n.kind {
                Kind::Items(v) | Kind::List(v) => v.iter().find(|e| e.field("name").and_then(Node::text) == Some(name)),
                _ => None,
            },
        }
    }

    /// The position of the value at `path`, or of the deepest value on the way when the
    /// rest is not written (a defaulted field); the flag says whether all of it was found.
    pub fn resolve(&self, path: &[Step]) -> (Pos, bool) {
        let mut cur = self;
        for step in path {
            match cur.child(step) {
                Some(next) => cur = next,
                None => return (cur.unwrap_some().pos, false),
            }
        }
        (cur.unwrap_some().pos, true)
    }
}

/// The position of the value at `path` in `text` (see [`Node::resolve`]); `None` when the
/// text is not RON or the path is malformed.
pub fn locate(text: &str, path: &str) -> Option<(Pos, bool)> {
    Some(document(text)?.resolve(&steps(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "// peak: 1, drift (comment)\nScenario(\n  name: \"a // not a comment\", /* peak: 2 */\n  \
                       drift: Brownout(start: \"5m\", peak: 30.0),\n  policy: Timeout((timeout: \"2s\")),\n  \
                       pts: Points([(\"0s\", 1.0), (\"1s\", 2.5)]),\n  opt: Some(7),\n  m: {\"k\": 3},\n  \
                       cs: [(name: \"x\", v: 1), (name: \"y\", v: 2)],\n)";

    fn at(path: &str) -> (Pos, bool) {
        locate(DOC, path).expect("parses")
    }

    #[test]
    fn finds_values_past_comments_and_strings() {
        assert_eq!(at("drift.Brownout.peak"), ((4, 38), true));
        assert_eq!(at("drift"), ((4, 10), true));
        assert_eq!(at("policy.Timeout.timeout"), ((5, 29), true));
        assert_eq!(at("pts.Points[1][1]"), ((6, 36), true));
        assert_eq!(at("opt"), ((7, 13), true));
        assert_eq!(at("m.k"), ((8, 12), true));
        assert_eq!(at("cs[y].v"), ((9, 42), true));
        assert_eq!(at("cs[1].name"), ((9, 34), true));
    }

    #[test]
    fn stops_at_the_deepest_written_value() {
        assert_eq!(at("drift.Brownout.hold"), ((4, 10), false));
        assert_eq!(at("nothing.here"), ((2, 1), false));
        assert_eq!(at("cs[5].v"), ((9, 7), false));
    }

    #[test]
    fn parses_paths() {
        assert_eq!(
            steps("a.b[2][x].c"),
            Some(vec![
                Step::Key("a".into()),
                Step::Key("b".into()),
                Step::Index(2),
                Step::Named("x".into()),
                Step::Key("c".into())
            ])
        );
        assert_eq!(steps("a[2"), None);
        assert_eq!(steps(""), Some(vec![]));
    }

    #[test]
    fn raw_strings_and_nested_comments_are_skipped() {
        let doc = "/* a /* nested */ still comment */ (a: r#\"x \" y\"#, b: 'c', c: 5)";
        assert_eq!(locate(doc, "c"), Some(((1, 63), true)));
    }

    #[test]
    fn broken_text_never_panics() {
        // Every truncation and every single-character replacement of the document.
        let chars: Vec<char> = DOC.chars().collect();
        for n in 0..=chars.len() {
            let cut: String = chars[..n].iter().collect();
            let _ = locate(&cut, "drift.Brownout.peak");
            for c in ['"', '(', ')', '[', '/', '*', '\\', '#', 'r', ':'] {
                let mut edited = chars.clone();
                if n < edited.len() {
                    edited[n] = c;
                }
                let _ = locate(&edited.iter().collect::<String>(), "cs[y].v");
            }
        }
    }
}
