//! Maps byte offsets of a source text to 1-based lines and columns, where a column counts
//! Unicode scalar values (the convention of the diagnostics JSON contract).

/// 1-based line and column of a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// Line starts of one source, built once and queried per span.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    source: &'a str,
    line_starts: Vec<u32>,
}

impl<'a> LineIndex<'a> {
    pub fn new(source: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts
            .extend(source.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { source, line_starts }
    }

    /// Line and column of `offset`; offsets past the end or inside a character clamp to the
    /// nearest preceding character boundary.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let mut offset = (offset as usize).min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s as usize <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let column = self.source[start..offset].chars().count() as u32 + 1;
        LineCol { line: line as u32 + 1, column }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_scalar_values() {
        let index = LineIndex::new("ab\nçé x\n");
        assert_eq!(index.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(2), LineCol { line: 1, column: 3 });
        assert_eq!(index.line_col(3), LineCol { line: 2, column: 1 });
        // "çé " is 5 bytes; `x` is at byte 8 and is the 4th scalar of line 2.
        assert_eq!(index.line_col(8), LineCol { line: 2, column: 4 });
        assert_eq!(index.line_col(100), LineCol { line: 3, column: 1 });
    }
}
