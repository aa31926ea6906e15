//! Resource URIs as the gateway checks them: RFC 3986 syntax-based normalisation (percent-encoded
//! unreserved characters decoded, other escapes in upper case, dot segments removed), so that
//! `…/dynamic/text/../../static/x` or `%2e%2e` cannot pass a role's pattern as one resource and
//! reach the upstream as another. The normalised URI is what is matched, forwarded and audited.

/// Why a URI is refused before any lookup.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsafe;

/// The normalised form of `uri`. URIs of the gateway's own `mcpgw://UPSTREAM/ORIGINAL` form are
/// normalised inside: the upstream's URI is a URI of its own. A backslash or an encoded slash
/// (`%2F`, `%5C`) is refused: some upstreams (WHATWG URL parsers) treat them as separators, which
/// would reopen the dot-segment hole after the check.
pub fn normalize(uri: &str) -> Result<String, Unsafe> {
    if let Some(rest) = uri
        .strip_prefix(registry::view::URI_SCHEME)
        .and_then(|r| r.strip_prefix("://"))
    {
        let (upstream, original) = rest.split_once('/').ok_or(Unsafe)?;
        return Ok(format!(
            "{}://{upstream}/{}",
            registry::view::URI_SCHEME,
            normalize(original)?
        ));
    }
    let decoded = decode_unreserved(uri)?;
    if decoded.contains('\\') {
        return Err(Unsafe);
    }
    // scheme ":" hier-part: only hierarchical paths have dot segments.
    let Some(colon) = decoded.find(':').filter(|&i| is_scheme(&decoded[..i])) else {
        return Ok(decoded);
    };
    let (scheme, rest) = decoded.split_at(colon + 1);
    let (rest, tail) = match rest.find(['?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (&rest[..2 + end], &after[end..])
        }
        None => ("", rest),
    };
    if !path.starts_with('/') {
        // A rootless path (`urn:a:b`, `mailto:x`) has no segments to climb out of.
        if path.split('/').any(|s| s == "." || s == "..") {
            return Err(Unsafe);
        }
        return Ok(decoded);
    }
    Ok(format!(
        "{scheme}{authority}{}{tail}",
        remove_dot_segments(path)
    ))
}

fn is_scheme(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// RFC 3986 §6.2.2.2: escapes of unreserved characters decoded, the others upper-cased.
fn decode_unreserved(uri: &str) -> Result<String, Unsafe> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) else {
                out.push(b'%');
                i += 1;
                continue;
            };
            let c = h * 16 + l;
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                out.push(c);
            } else if c == b'/' || c == b'\\' {
                return Err(Unsafe);
            } else {
                out.extend_from_slice(format!("%{c:02X}").as_bytes());
            }
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Unsafe)
}

/// RFC 3986 §5.2.4 for an absolute path: `.` dropped, `..` takes the segment before it (never
/// above the root).
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path[1..].split('/').collect();
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." | ".." => {
                if *seg == ".." {
                    out.pop();
                }
                // A trailing dot segment leaves a directory: `/a/b/..` is `/a/`.
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s).unwrap()
    }

    #[test]
    fn dot_segments_are_removed() {
        assert_eq!(
            n("demo://resource/dynamic/text/../../static/document/a.md"),
            "demo://resource/static/document/a.md"
        );
        assert_eq!(
            n("demo://resource/dynamic/text/%2e%2e/%2E%2E/static/x"),
            "demo://resource/static/x"
        );
        assert_eq!(n("demo://r/a/./../b"), "demo://r/b");
        assert_eq!(n("file:///a/b/../../../etc/passwd"), "file:///etc/passwd");
        assert_eq!(n("file:///a/b/.."), "file:///a/");
        assert_eq!(n("file:///a/./b/."), "file:///a/b/");
        assert_eq!(n("test://x/a?p=../b#..",), "test://x/a?p=../b#..");
        assert_eq!(
            n("mcpgw://everything/demo://resource/static/../dynamic/text/1"),
            "mcpgw://everything/demo://resource/dynamic/text/1"
        );
    }

    #[test]
    fn unreserved_escapes_are_decoded_and_others_kept() {
        assert_eq!(n("demo://r/%73tatic/%7e"), "demo://r/static/~");
        assert_eq!(n("demo://r/a%20b%3a"), "demo://r/a%20b%3A");
        assert_eq!(n("demo://r/100%"), "demo://r/100%");
        assert_eq!(
            n("demo://resource/static/document/architecture.md"),
            "demo://resource/static/document/architecture.md"
        );
        assert_eq!(n("urn:isbn:0451450523"), "urn:isbn:0451450523");
    }

    #[test]
    fn separators_in_disguise_are_refused() {
        assert_eq!(normalize("file:///a/..%2F..%2Fetc"), Err(Unsafe));
        assert_eq!(normalize("file:///a/..\\..\\etc"), Err(Unsafe));
        assert_eq!(normalize("file:///a/%5c"), Err(Unsafe));
        assert_eq!(normalize("x:a/../b"), Err(Unsafe));
    }
}
