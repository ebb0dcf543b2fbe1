//! Finds the bytes of a JSON path in the text of a registry file, so registry findings can be
//! shown as diagnostics pointing into the file. A light scanner: the text has already parsed.

use crate::diag::Span;

use super::json_path::{JsonPath, PathSegment, array_index};

/// The span at `path` in `source`: a value, or a whole `"key": value` member when the path ends
/// at an object key. `None` when the path is not in the text or the text is not well formed.
pub fn locate(source: &str, path: &JsonPath) -> Option<Span> {
    let mut scanner = Scanner { bytes: source.as_bytes(), pos: 0 };
    let mut member_start = None;
    for segment in path.segments() {
        scanner.whitespace();
        member_start = match scanner.peek()? {
            b'{' => Some(scanner.enter_member(segment)?),
            b'[' => {
                scanner.enter_item(segment)?;
                None
            }
            _ => return None,
        };
    }
    scanner.whitespace();
    let start = scanner.pos;
    scanner.skip_value()?;
    let start = member_start.unwrap_or(start);
    Some(Span::new(u32::try_from(start).ok()?, u32::try_from(scanner.pos).ok()?))
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// At `{`: moves to the value of the member named by `segment`; returns where its key starts.
    fn enter_member(&mut self, segment: &PathSegment) -> Option<usize> {
        self.pos += 1;
        loop {
            self.whitespace();
            let key_start = self.pos;
            self.skip_string()?;
            let key: String = serde_json::from_slice(&self.bytes[key_start..self.pos]).ok()?;
            self.expect(b':')?;
            let found = match segment {
                PathSegment::Key(wanted) => *wanted == key,
                PathSegment::Index(i) => i.to_string() == key,
            };
            if found {
                return Some(key_start);
            }
            self.whitespace();
            self.skip_value()?;
            self.expect(b',')?;
        }
    }

    /// At `[`: moves to the item at the index `segment` names.
    fn enter_item(&mut self, segment: &PathSegment) -> Option<()> {
        let wanted = match segment {
            PathSegment::Index(i) => *i,
            PathSegment::Key(key) => array_index(key)?,
        };
        self.pos += 1;
        for _ in 0..wanted {
            self.whitespace();
            self.skip_value()?;
            self.expect(b',')?;
        }
        self.whitespace();
        (self.peek()? != b']').then_some(())
    }

    fn skip_string(&mut self) -> Option<()> {
        (self.peek()? == b'"').then_some(())?;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_at(source: &str, pointer: &str) -> Option<String> {
        let path = JsonPath::from_pointer(pointer)?;
        locate(source, &path).map(|span| source[span.range()].to_owned())
    }

    #[test]
    fn finds_members_and_items() {
        let source =
            r#"{ "tools": [ {"name": "a"}, { "name" : "b\"c", "x": [1, {"y": null}] } ], "k~/": 2 }"#;
        assert_eq!(text_at(source, "/tools/1/name").as_deref(), Some(r#""name" : "b\"c""#));
        assert_eq!(text_at(source, "/tools/1/x/1").as_deref(), Some(r#"{"y": null}"#));
        assert_eq!(text_at(source, "/tools/1/x/1/y").as_deref(), Some(r#""y": null"#));
        assert_eq!(text_at(source, "/k~0~1").as_deref(), Some(r#""k~/": 2"#));
        assert_eq!(text_at(source, "").as_deref(), Some(source));
        assert_eq!(text_at(source, "/tools/2"), None);
        assert_eq!(text_at(source, "/missing"), None);
    }

    #[test]
    fn malformed_text_gives_none() {
        for source in ["", "{", r#"{"a" 1}"#, "[1,", r#"{"a": "#, "\"abc"] {
            assert_eq!(locate(source, &JsonPath::root().key("a")), None);
        }
    }
}
