//! A cheap bound on YAML nesting, checked before any YAML parser sees a text.
//!
//! YAML parsers spend time that grows with the square of the nesting depth (80 KB of `[` kept
//! `serde_yaml` busy for the engine's whole 20 s deadline). Real frontmatter and configuration
//! nest a handful of levels, so [`check`] refuses a text that nests deeper than
//! [`MAX_DEPTH`] levels after one linear pass over its bytes, naming the line.
//!
//! What counts as a level (an over-estimate of YAML's own nesting, never an under-estimate of
//! what the parsers recurse on):
//! - every open flow collection (`[` or `{` that starts a node, outside quotes and comments);
//! - every open block indentation level (a line more indented than the one it belongs to);
//! - every compact block sequence entry (`- - - x` on one line is three levels).
//!
//! Quoted scalars (over several lines too), comments and the content lines of block scalars
//! (`|`, `>`) are skipped, so brackets in descriptions and code samples never count.

/// The deepest nesting accepted (flow collections plus block indentation levels).
pub const MAX_DEPTH: usize = 64;

/// Where and how a text nests too deeply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line (in the text checked) where the depth first went over the limit.
    pub line: u32,
    /// The limit that was passed.
    pub limit: usize,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the YAML nests deeper than {} levels (flow brackets and indentation) at line {}; refused before parsing",
            self.limit, self.line
        )
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Whether a node may start at `b[p]` (`[`, `{`, a quote, a block scalar header), given the
/// previous significant byte on the line: nothing yet, `,`, `[`, `{`, or an indicator `:`,
/// `-`, `?` followed by a space (`a-[b` and `key:[x` are plain text).
fn node_start(prev: Option<u8>, b: &[u8], p: usize) -> bool {
    match prev {
        None | Some(b',' | b'[' | b'{') => true,
        Some(b':' | b'-' | b'?') => p > 0 && matches!(b[p - 1], b' ' | b'\t'),
        _ => false,
    }
}

/// Is `rest` (a line's remainder, comment removed) a block scalar header (`|`, `>-`, `|2+`)?
fn block_scalar_header(rest: &[u8]) -> bool {
    let rest = rest.trim_ascii_end();
    match rest.split_first() {
        Some((b'|' | b'>', tail)) => tail
            .iter()
            .all(|b| b.is_ascii_digit() || *b == b'+' || *b == b'-'),
        _ => false,
    }
}

/// Refuse `text` if its YAML nesting goes over `limit` levels (see the module docs). Linear in
/// the length of `text`; uses memory bounded by `limit`.
pub fn check(text: &str, limit: usize) -> Result<(), TooDeep> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut quote = Quote::None;
    // Content lines of a block scalar: lines indented more than this column (or blank).
    let mut block_scalar_parent: Option<usize> = None;
    for (i, line) in text.split('\n').enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let b = line.as_bytes();
        let col = b.iter().take_while(|&&c| c == b' ').count();
        let blank = b[col..].iter().all(|c| c.is_ascii_whitespace());
        if let Some(parent) = block_scalar_parent {
            if blank || col > parent {
                continue;
            }
            block_scalar_parent = None;
        }
        let too_deep = |depth: usize| -> Result<(), TooDeep> {
            if depth > limit {
                Err(TooDeep {
                    line: line_no,
                    limit,
                })
            } else {
                Ok(())
            }
        };
        let mut p = 0;
        // A new block line: only outside flow collections and quoted scalars.
        if flow == 0 && quote == Quote::None {
            if blank || b[col] == b'#' {
                continue;
            }
            while indents.last().is_some_and(|&top| top >= col) {
                indents.pop();
            }
            indents.push(col);
            too_deep(indents.len())?;
            p = col;
            // Compact sequence entries (`- - x`): one level each.
            while p < b.len() && b[p] == b'-' && (p + 1 == b.len() || b[p + 1] == b' ') {
                p += 1;
                while p < b.len() && b[p] == b' ' {
                    p += 1;
                }
                if p < b.len() {
                    indents.push(p);
                    too_deep(indents.len())?;
                }
            }
        }
        // Flow brackets and quotes on the rest of the line.
        let mut prev: Option<u8> = None;
        let mut header_from: Option<usize> = None;
        while p < b.len() {
            let c = b[p];
            match quote {
                Quote::Double => {
                    if c == b'\\' {
                        p += 1;
                    } else if c == b'"' {
                        quote = Quote::None;
                        prev = Some(b'"');
                    }
                }
                Quote::Single => {
                    if c == b'\'' {
                        if b.get(p + 1) == Some(&b'\'') {
                            p += 1;
                        } else {
                            quote = Quote::None;
                            prev = Some(b'\'');
                        }
                    }
                }
                Quote::None => match c {
                    b' ' | b'\t' => {}
                    b'#' if p == 0 || matches!(b[p - 1], b' ' | b'\t') => break,
                    b'"' if node_start(prev, b, p) => quote = Quote::Double,
                    b'\'' if node_start(prev, b, p) => quote = Quote::Single,
                    b'[' | b'{' if flow > 0 || node_start(prev, b, p) => {
                        flow += 1;
                        too_deep(indents.len() + flow)?;
                        prev = Some(c);
                    }
                    b']' | b'}' if flow > 0 => {
                        flow -= 1;
                        prev = Some(c);
                    }
                    b'|' | b'>' if flow == 0 && node_start(prev, b, p) => {
                        header_from = Some(p);
                        prev = Some(c);
                    }
                    // Plain text: `[`, `{`, `,` in it (`see [[x`) start nothing.
                    b'[' | b'{' | b',' if flow == 0 => prev = Some(b'a'),
                    _ => prev = Some(c),
                },
            }
            p += 1;
        }
        if let Some(h) = header_from {
            let end = b[h..]
                .windows(2)
                .position(|w| w[0] == b' ' && w[1] == b'#')
                .map_or(b.len(), |k| h + k);
            if quote == Quote::None && flow == 0 && block_scalar_header(&b[h..end]) {
                block_scalar_parent = Some(col);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str) -> bool {
        check(text, MAX_DEPTH).is_ok()
    }

    #[test]
    fn real_frontmatter_passes() {
        let yaml = "name: pdf\ndescription: \"Use [[x]] and {y} when [asked\"\nmetadata:\n  tags: [a, b, [c]]\n  nested:\n    - key: 'it''s [ok'\n      list:\n        - x\n        - - y\nnote: |\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  {{{{\nafter: don't [ stop\n";
        assert!(depth_ok(yaml));
        // Brackets in a plain scalar and in comments are text.
        let many = "[".repeat(500);
        assert!(depth_ok(&format!("description: see {many}\n# {many}\n")));
        assert!(depth_ok(&format!("description: \"{many}\"\n")));
        assert!(depth_ok(&format!(
            "description: >-\n  {many}\n  more {many}\nnext: 1\n"
        )));
        assert!(depth_ok(&format!(
            "description: 'multi\n  line {many}\n  end'\nnext: 1\n"
        )));
    }

    #[test]
    fn deep_flow_nesting_is_refused_with_its_line() {
        let text = format!("name: x\ndescription: {}\n", "[".repeat(80_000));
        let e = check(&text, MAX_DEPTH).unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.limit, MAX_DEPTH);
        assert!(e.to_string().contains("64 levels"), "{e}");
        // Exactly at the limit passes (block level 1 + 63 brackets), one more fails.
        let at = format!("a: {}{}\n", "[".repeat(63), "]".repeat(63));
        assert!(depth_ok(&at));
        let over = format!("a: {}{}\n", "[".repeat(64), "]".repeat(64));
        assert!(!depth_ok(&over));
        // Over several lines, braces too.
        let text = format!("a:\n{}\n", "{\n".repeat(100));
        assert_eq!(check(&text, MAX_DEPTH).unwrap_err().line, 65);
    }

    #[test]
    fn deep_block_nesting_is_refused() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&" ".repeat(i));
            text.push_str(&format!("k{i}:\n"));
        }
        assert_eq!(check(&text, MAX_DEPTH).unwrap_err().line, 65);
        let dashes = format!("{}x\n", "- ".repeat(100));
        assert_eq!(check(&dashes, MAX_DEPTH).unwrap_err().line, 1);
        // Going back out frees the levels.
        let mut ok = String::new();
        for _ in 0..50 {
            for i in 0..40 {
                ok.push_str(&" ".repeat(i));
                ok.push_str("k:\n");
            }
        }
        assert!(depth_ok(&ok));
    }

    #[test]
    fn linear_time_on_hostile_input() {
        let text = "[".repeat(4 << 20);
        let started = std::time::Instant::now();
        assert!(check(&text, MAX_DEPTH).is_err());
        let text = format!("a: \"{}", "[".repeat(4 << 20));
        assert!(check(&text, MAX_DEPTH).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
