//! The functions of a Rust source and their lengths, for tidy's
//! function-length rule.
//!
//! The key decision: a small lexer, not a parser. Braces are counted
//! outside comments, string, raw-string and character literals, and a
//! function runs from its `fn` line to the brace that closes its body; a
//! declaration without a body (a trait's) has no length. Unit-test modules
//! (`#[cfg(test)] mod`) are not scanned: a test reads as data however long.

/// One function with a body: its name, the line of its `fn` (1-based) and
/// its length in lines, the `fn` line and the closing brace's included.
#[derive(Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The name a line defines a function by, if it opens with `fn` after
/// visibility and qualifiers.
fn defines(code: &str) -> Option<&str> {
    let mut rest = code.trim_start();
    loop {
        let next = ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "]
            .iter()
            .find_map(|prefix| rest.strip_prefix(prefix));
        match next {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// What the lexer is inside of, carried from one line to the next.
#[derive(Clone, Copy, PartialEq)]
enum Inside {
    Code,
    BlockComment,
    Str,
    /// A raw string closed by `"` and this many `#`.
    RawStr(usize),
}

/// The code of one line with comments and literals blanked (so braces in
/// them do not count), and the state the next line starts in.
fn code_only(line: &str, mut inside: Inside) -> (String, Inside) {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match inside {
            Inside::BlockComment => {
                if c == '*' && next == Some('/') {
                    inside = Inside::Code;
                    i += 1;
                }
            }
            Inside::Str => match c {
                '\\' => i += 1,
                '"' => inside = Inside::Code,
                _ => {}
            },
            Inside::RawStr(hashes) => {
                if c == '"' && chars[i + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes {
                    inside = Inside::Code;
                    i += hashes;
                }
            }
            Inside::Code => match (c, next) {
                ('/', Some('/')) => break,
                ('/', Some('*')) => {
                    inside = Inside::BlockComment;
                    i += 1;
                }
                ('"', _) => inside = Inside::Str,
                ('r', Some('"' | '#')) if i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') => {
                    let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        inside = Inside::RawStr(hashes);
                        i += 1 + hashes;
                    } else {
                        out.push(c);
                    }
                }
                // A character literal ('{', '\'', '\u{7b}'), not a lifetime.
                ('\'', Some('\\')) => {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                }
                ('\'', Some(_)) if chars.get(i + 2) == Some(&'\'') => i += 2,
                _ => out.push(c),
            },
        }
        i += 1;
    }
    (out, inside)
}

/// Every function with a body in `text`, outside unit-test modules.
pub fn functions(text: &str) -> Vec<Function> {
    let mut found = Vec::new();
    // Open functions: (name, line, the depth their body opens at).
    let mut open: Vec<(String, usize, Option<i64>)> = Vec::new();
    let mut depth: i64 = 0;
    let mut inside = Inside::Code;
    let mut previous_is_cfg_test = false;
    for (n, line) in text.lines().enumerate() {
        let (code, next) = code_only(line, inside);
        let at_code = inside == Inside::Code;
        inside = next;
        let trimmed = code.trim();
        if previous_is_cfg_test && trimmed.starts_with("mod ") {
            break;
        }
        if trimmed.is_empty() && !at_code {
            continue;
        }
        previous_is_cfg_test = trimmed == "#[cfg(test)]" || (previous_is_cfg_test && trimmed.starts_with("#["));
        if let Some(name) = at_code.then(|| defines(&code)).flatten() {
            open.push((name.to_owned(), n + 1, None));
        }
        for c in code.chars() {
            match c {
                '{' => {
                    if let Some(last) = open.last_mut().filter(|f| f.2.is_none()) {
                        last.2 = Some(depth);
                    }
                    depth += 1;
                }
                '}' => {
                    depth -= 1;
                    if let Some((name, line, _)) = open.pop_if(|f| f.2 == Some(depth)) {
                        found.push(Function { name, line, lines: n + 2 - line });
                    }
                }
                // A declaration without a body.
                ';' => {
                    open.pop_if(|f| f.2.is_none());
                }
                _ => {}
            }
        }
    }
    found.sort_by_key(|f| f.line);
    found
}

#[test]
fn lengths_count_the_body_and_skip_braces_in_literals_and_comments() {
    let text = r##"//! A file.
pub(crate) fn short() -> u32 {
    let s = "{ not a brace";
    let c = '{';
    let r = r#"}"#; // } nor this
    /* { */
    1
}
trait T {
    fn declared(&self);
    fn defaulted(&self) {}
}
fn outer<'a>(x: &'a str) -> &'a str {
    fn inner() {
    }
    x
}
#[cfg(test)]
mod tests {
    fn not_scanned() {}
}
"##;
    let found = functions(text);
    let got: Vec<(&str, usize, usize)> = found.iter().map(|f| (f.name.as_str(), f.line, f.lines)).collect();
    assert_eq!(got, [("short", 2, 7), ("defaulted", 11, 1), ("outer", 13, 5), ("inner", 14, 2)]);
}
