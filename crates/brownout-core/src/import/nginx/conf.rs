//! nginx's configuration syntax, read as nginx reads it (`src/core/ngx_conf_file.c`,
//! `ngx_conf_read_token` and `ngx_conf_parse`): directives, blocks, comments, quotes.

use super::super::ImportError;
use super::super::Pos;

/// One word: where it starts and its text, quotes and escapes resolved.
#[derive(Debug, Clone)]
pub(super) struct Word {
    pub(super) at: Pos,
    pub(super) text: String,
}

/// A directive: its words (the name first) and its block, if it has one.
#[derive(Debug, Clone)]
pub(super) struct Directive {
    pub(super) words: Vec<Word>,
    pub(super) block: Option<Vec<Directive>>,
}

impl Directive {
    pub(super) fn name(&self) -> &str {
        &self.words[0].text
    }
    pub(super) fn at(&self) -> Pos {
        self.words[0].at
    }
    /// Argument `i` (1 = the first after the name).
    pub(super) fn arg(&self, i: usize) -> Option<&Word> {
        self.words.get(i)
    }
}

pub(super) fn error(at: Pos, message: String) -> ImportError {
    ImportError { line: at.line, col: at.col, message, ..ImportError::default() }
}

/// The tokenizer and block parser: `ngx_conf_read_token` and `ngx_conf_parse`.
struct Parser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    line: usize,
    col: usize,
}

/// What ends a run of words.
enum End {
    Semicolon,
    Open,
    Close(Pos),
    Eof,
}

impl Parser<'_> {
    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn here(&self) -> Pos {
        Pos { line: self.line, col: self.col }
    }

    /// The words up to the next `;`, `{`, `}` or the end of the file.
    fn words(&mut self) -> Result<(Vec<Word>, End), ImportError> {
        let mut words = Vec::new();
        loop {
            let at = self.here();
            let Some(&(_, c)) = self.chars.peek() else { return Ok((words, End::Eof)) };
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '#' => {
                    while self.chars.peek().is_some_and(|&(_, c)| c != '\n') {
                        self.bump();
                    }
                }
                ';' => {
                    self.bump();
                    return Ok((words, End::Semicolon));
                }
                '{' => {
                    self.bump();
                    return Ok((words, End::Open));
                }
                '}' => {
                    self.bump();
                    return Ok((words, End::Close(at)));
                }
                '"' | '\'' => {
                    self.bump();
                    let mut text = String::new();
                    loop {
                        match self.bump() {
                            None => return Err(error(at, "unexpected end of file: a quote is not closed".into())),
                            Some('\\') => text.extend(self.bump()),
                            Some(q) if q == c => break,
                            Some(other) => text.push(other),
                        }
                    }
                    // ngx_conf_read_token: a closing quote must be followed by a space, `;` or `{`.
                    if self.chars.peek().is_some_and(|&(_, n)| !(n.is_whitespace() || n == ';' || n == '{')) {
                        return Err(error(
                            self.here(),
                            format!("unexpected \"{}\" after a quoted word", self.chars.peek().map_or(' ', |p| p.1)),
                        ));
                    }
                    words.push(Word { at, text });
                }
                _ => {
                    let mut text = String::new();
                    let mut braces = false;
                    while let Some(&(_, c)) = self.chars.peek() {
                        if braces {
                            braces = c != '}';
                        } else if c.is_whitespace() || c == ';' || c == '}' || (c == '{' && !text.ends_with('$')) {
                            break;
                        } else if c == '{' {
                            braces = true; // `${name}`
                        } else if c == '\\' {
                            self.bump();
                            text.extend(self.bump());
                            continue;
                        }
                        text.push(c);
                        self.bump();
                    }
                    words.push(Word { at, text });
                }
            }
        }
    }

    /// The directives of a block (or of the file when `top`), up to its `}`.
    fn block(&mut self, top: bool, open: Pos) -> Result<Vec<Directive>, ImportError> {
        let mut out = Vec::new();
        loop {
            let (words, end) = self.words()?;
            match end {
                End::Semicolon if words.is_empty() => return Err(error(self.here(), "unexpected \";\"".into())),
                End::Semicolon => out.push(Directive { words, block: None }),
                End::Open => {
                    let Some(first) = words.first() else {
                        return Err(error(self.here(), "unexpected \"{\": a block needs a directive name".into()));
                    };
                    let at = first.at;
                    let block = self.block(false, at)?;
                    out.push(Directive { words, block: Some(block) });
                }
                End::Close(at) => {
                    if top {
                        return Err(error(at, "unexpected \"}\": no block is open".into()));
                    }
                    if let Some(w) = words.first() {
                        return Err(error(w.at, format!("\"{}\" has no \";\" before \"}}\"", w.text)));
                    }
                    return Ok(out);
                }
                End::Eof => {
                    if let Some(w) = words.first() {
                        return Err(error(w.at, format!("unexpected end of file: \"{}\" has no \";\"", w.text)));
                    }
                    if !top {
                        return Err(error(open, "unexpected end of file: this block has no \"}\"".into()));
                    }
                    return Ok(out);
                }
            }
        }
    }
}

/// Parse an nginx configuration into its top-level directives.
pub(super) fn parse(text: &str) -> Result<Vec<Directive>, ImportError> {
    Parser { chars: text.char_indices().peekable(), line: 1, col: 1 }.block(true, Pos { line: 1, col: 1 })
}
