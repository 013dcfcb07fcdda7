//! AmberScript tokenizer.
//!
//! AmberScript is line oriented: words are separated by blanks, `#` starts a comment that
//! runs to the end of the line, and the end of a line is itself a token (most commands end
//! there). Shader sources are raw text up to a line holding only `END`; the parser asks for
//! them with [`Lexer::raw_block`].

use std::fmt;

/// What a token is. Numbers keep their spelling in [`Token::text`] as well.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A word that is not a number: keyword, name, `1%`, ...
    Ident,
    /// An integer literal, decimal or `0x` hexadecimal, with optional sign.
    Int(i128),
    /// A floating-point literal, including `nan`, `inf` and `-inf`.
    Float(f64),
    /// End of a line.
    Eol,
    /// End of the file.
    Eof,
}

/// One token with its line (1-based) and its spelling.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub text: String,
    pub line: usize,
}

impl Token {
    pub fn is_eol(&self) -> bool {
        matches!(self.kind, TokenKind::Eol | TokenKind::Eof)
    }

    pub fn is_ident(&self, word: &str) -> bool {
        self.kind == TokenKind::Ident && self.text == word
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.kind {
            TokenKind::Eol => write!(f, "end of line"),
            TokenKind::Eof => write!(f, "end of file"),
            _ => write!(f, "'{}'", self.text),
        }
    }
}

/// Classifies one word: integer, float or identifier.
pub fn classify(word: &str) -> TokenKind {
    if let Some(v) = parse_int(word) {
        return TokenKind::Int(v);
    }
    let body = word.strip_prefix(['-', '+']).unwrap_or(word);
    let neg = word.starts_with('-');
    match body {
        "nan" | "NaN" | "NAN" => return TokenKind::Float(f64::NAN),
        "inf" | "Inf" | "INF" | "infinity" => {
            return TokenKind::Float(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        _ => {}
    }
    let numeric = body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        && body.chars().any(|c| c.is_ascii_digit());
    if numeric {
        if let Ok(v) = word.parse::<f64>() {
            return TokenKind::Float(v);
        }
    }
    TokenKind::Ident
}

/// Parses a decimal or `0x` hexadecimal integer with an optional sign.
pub fn parse_int(word: &str) -> Option<i128> {
    let (neg, body) = match word.as_bytes().first()? {
        b'-' => (true, &word[1..]),
        b'+' => (false, &word[1..]),
        _ => (false, word),
    };
    if body.is_empty() {
        return None;
    }
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        i128::from_str_radix(hex, 16).ok()?
    } else {
        if !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// The tokenizer over one script.
pub struct Lexer<'a> {
    lines: Vec<&'a str>,
    /// Index of the line being tokenized.
    line: usize,
    /// Byte position inside that line.
    col: usize,
    peeked: Option<Token>,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            lines: src.lines().collect(),
            line: 0,
            col: 0,
            peeked: None,
        }
    }

    /// The raw text of line `n` (1-based), for error messages and header comments.
    pub fn line_text(&self, n: usize) -> &'a str {
        self.lines.get(n.wrapping_sub(1)).copied().unwrap_or("")
    }

    pub fn peek(&mut self) -> &Token {
        if self.peeked.is_none() {
            let t = self.scan();
            self.peeked = Some(t);
        }
        self.peeked.as_ref().expect("peeked token was just stored")
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Token {
        match self.peeked.take() {
            Some(t) => t,
            None => self.scan(),
        }
    }

    fn scan(&mut self) -> Token {
        let Some(text) = self.lines.get(self.line) else {
            return Token {
                kind: TokenKind::Eof,
                text: String::new(),
                line: self.lines.len(),
            };
        };
        let bytes = text.as_bytes();
        while self.col < bytes.len() && bytes[self.col].is_ascii_whitespace() {
            self.col += 1;
        }
        if self.col >= bytes.len() || bytes[self.col] == b'#' {
            let line = self.line + 1;
            self.line += 1;
            self.col = 0;
            return Token {
                kind: TokenKind::Eol,
                text: String::new(),
                line,
            };
        }
        let start = self.col;
        while self.col < bytes.len()
            && !bytes[self.col].is_ascii_whitespace()
            && bytes[self.col] != b'#'
        {
            self.col += 1;
        }
        let word = &text[start..self.col];
        if word == "\\" {
            // A backslash continues the command on the next line.
            self.line += 1;
            self.col = 0;
            return self.scan();
        }
        Token {
            kind: classify(word),
            text: word.to_string(),
            line: self.line + 1,
        }
    }

    /// Returns the raw lines from the current line (the caller has consumed the end of the
    /// header line) up to, not including, a line whose only word is `END`, and consumes that
    /// line. Returns the text and the line number of `END`, or `None` when the file ends first.
    pub fn raw_block(&mut self) -> Option<(String, usize)> {
        debug_assert!(self.peeked.is_none(), "raw_block after a peek");
        self.peeked = None;
        self.col = 0;
        let mut out = String::new();
        while let Some(l) = self.lines.get(self.line) {
            self.line += 1;
            if l.trim() == "END" {
                return Some((out, self.line));
            }
            out.push_str(l);
            out.push('\n');
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let mut lx = Lexer::new(src);
        let mut v = Vec::new();
        loop {
            let t = lx.next();
            if t.kind == TokenKind::Eof {
                return v;
            }
            v.push(t.kind);
        }
    }

    #[test]
    fn numbers_and_comments() {
        let k = kinds("A 0x1F -3 2.5 # comment 7\nnan -inf 1e3 1% x1 +4");
        assert_eq!(
            &k[..5],
            &[
                TokenKind::Ident,
                TokenKind::Int(31),
                TokenKind::Int(-3),
                TokenKind::Float(2.5),
                TokenKind::Eol
            ]
        );
        assert!(matches!(k[5], TokenKind::Float(v) if v.is_nan()));
        assert_eq!(
            &k[6..],
            &[
                TokenKind::Float(f64::NEG_INFINITY),
                TokenKind::Float(1000.0),
                TokenKind::Ident,
                TokenKind::Ident,
                TokenKind::Int(4),
                TokenKind::Eol
            ]
        );
    }

    #[test]
    fn backslash_continues_a_line() {
        let k = kinds("ATTACH s \\\n  SPECIALIZE 1 \\ # comment\n AS uint32 2\nRUN");
        // ATTACH s SPECIALIZE 1 AS uint32 2 <eol> RUN <eol>
        assert_eq!(k.iter().filter(|t| **t == TokenKind::Eol).count(), 2);
        assert_eq!(k.len(), 10);
    }

    #[test]
    fn lines_are_counted() {
        let mut lx = Lexer::new("#!amber\n\nRUN p 1 1 1\n");
        assert_eq!(lx.next().kind, TokenKind::Eol);
        assert_eq!(lx.next().kind, TokenKind::Eol);
        let t = lx.next();
        assert_eq!((t.text.as_str(), t.line), ("RUN", 3));
    }

    #[test]
    fn raw_block_stops_at_end() {
        let mut lx =
            Lexer::new("SHADER compute s GLSL\n#version 450\nvoid main() {}\n  END  \nRUN");
        for _ in 0..5 {
            lx.next();
        }
        let (text, line) = lx.raw_block().expect("block");
        assert_eq!(text, "#version 450\nvoid main() {}\n");
        assert_eq!(line, 4);
        assert_eq!(lx.next().text, "RUN");
    }

    #[test]
    fn raw_block_without_end() {
        let mut lx = Lexer::new("SHADER compute s GLSL\nvoid main() {}\n");
        for _ in 0..5 {
            lx.next();
        }
        assert!(lx.raw_block().is_none());
    }

    #[test]
    fn big_hex_values() {
        assert_eq!(parse_int("0xFFFFFFFFFFFFFFFF"), Some(u64::MAX as i128));
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("0x"), None);
        assert_eq!(parse_int("12a"), None);
    }
}
