//! Resource URIs as the gateway checks them. A URI that is not in the catalog is read the way
//! both kinds of parser an upstream may use would read it — RFC 3986 (dot segments removed,
//! percent-encoded unreserved characters decoded) and WHATWG (what TypeScript and browser-style
//! parsers do: tab and newlines stripped, `%2e` taken as a dot, IPv4 hosts rewritten) — and is
//! refused unless both readings name the URI that was sent. The gateway then matches, forwards
//! and audits one URI that every upstream reads alike: a role's pattern cannot pass one resource
//! while the upstream serves another (`.\t./`, `%2e%2e/`, `..%2F`).

/// Why a URI is refused before any lookup.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// A control character or whitespace: WHATWG parsers strip tab and newlines, trim the ends,
    /// or cut there.
    Invisible,
    /// A backslash or an encoded slash or backslash: a separator to some parsers, not others.
    HiddenSeparator,
    /// Dot segments: the URI names `0` (its normal form), and must be sent so.
    NotNormal(String),
    /// A WHATWG parser reads another host or path than RFC 3986 does.
    Ambiguous,
}

impl Refused {
    /// Why, in words for the caller.
    pub fn reason(&self) -> String {
        match self {
            Refused::Invisible => "holds a control character or whitespace".into(),
            Refused::HiddenSeparator => "holds a backslash or an encoded separator".into(),
            Refused::NotNormal(n) => format!("holds dot segments; its normal form is {n:?}"),
            Refused::Ambiguous => "is read differently by WHATWG and RFC 3986 parsers".into(),
        }
    }
}

/// The URI to forward for `uri`, when every parser reads it as the same resource: `uri` with
/// escapes of unreserved characters decoded and other escapes upper-cased (RFC 3986 §6.2.2).
pub fn check(uri: &str) -> Result<String, Refused> {
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Refused::Invisible);
    }
    let (normal, spelled) = normalize(uri)?;
    if normal != spelled {
        return Err(Refused::NotNormal(normal));
    }
    if !whatwg_agrees(original_of(&normal)) {
        return Err(Refused::Ambiguous);
    }
    Ok(normal)
}

/// The resource URI inside the gateway's own `mcpgw://UPSTREAM/ORIGINAL` form, else `uri`.
fn original_of(uri: &str) -> &str {
    uri.strip_prefix(registry::view::URI_SCHEME)
        .and_then(|r| r.strip_prefix("://"))
        .and_then(|r| r.split_once('/'))
        .map_or(uri, |(_, original)| original)
}

/// `uri`'s normal form and `uri` as it was spelled, both with escapes normalised. URIs of the
/// gateway's own `mcpgw://UPSTREAM/ORIGINAL` form are normalised inside: the upstream's URI is a
/// URI of its own.
fn normalize(uri: &str) -> Result<(String, String), Refused> {
    if let Some(rest) = uri
        .strip_prefix(registry::view::URI_SCHEME)
        .and_then(|r| r.strip_prefix("://"))
    {
        let (upstream, original) = rest.split_once('/').ok_or(Refused::HiddenSeparator)?;
        let (normal, spelled) = normalize(original)?;
        let wrap = |s: String| format!("{}://{upstream}/{s}", registry::view::URI_SCHEME);
        return Ok((wrap(normal), wrap(spelled)));
    }
    let decoded = decode_unreserved(uri)?;
    if decoded.contains('\\') {
        return Err(Refused::HiddenSeparator);
    }
    let parts = Parts::of(&decoded);
    if !parts.path.starts_with('/') {
        // A rootless path (`urn:a:b`, `mailto:x`) has no segments to climb out of.
        if parts.path.split('/').any(|s| s == "." || s == "..") {
            return Err(Refused::NotNormal(decoded));
        }
        return Ok((decoded.clone(), decoded));
    }
    let normal = format!(
        "{}{}{}{}",
        parts.scheme,
        parts.authority,
        remove_dot_segments(parts.path),
        parts.tail
    );
    Ok((normal, decoded))
}

/// A URI cut as RFC 3986 §3 cuts it (without a scheme, it is all path).
struct Parts<'a> {
    /// `scheme:`, or empty.
    scheme: &'a str,
    /// `//authority`, or empty.
    authority: &'a str,
    path: &'a str,
    /// `?query#fragment`, or empty.
    tail: &'a str,
}

impl<'a> Parts<'a> {
    fn of(uri: &'a str) -> Self {
        let Some(colon) = uri.find(':').filter(|&i| is_scheme(&uri[..i])) else {
            return Parts {
                scheme: "",
                authority: "",
                path: uri,
                tail: "",
            };
        };
        let (scheme, rest) = uri.split_at(colon + 1);
        let (rest, tail) = rest.split_at(rest.find(['?', '#']).unwrap_or(rest.len()));
        let (authority, path) = match rest.strip_prefix("//") {
            Some(after) => rest.split_at(2 + after.find('/').unwrap_or(after.len())),
            None => ("", rest),
        };
        Parts {
            scheme,
            authority,
            path,
            tail,
        }
    }

    /// The host of the authority: after any userinfo, before any port.
    fn host(&self) -> &'a str {
        let a = self.authority.trim_start_matches('/');
        let a = a.rsplit_once('@').map_or(a, |(_, h)| h);
        if a.starts_with('[') {
            return a.find(']').map_or(a, |i| &a[..=i]);
        }
        a.split_once(':').map_or(a, |(h, _)| h)
    }
}

/// Whether a WHATWG URL parser reads the same host and path in `uri` (already in normal form)
/// as RFC 3986 does. A URI it cannot parse is left to RFC 3986: such an upstream cannot have
/// parsed it that way either.
fn whatwg_agrees(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return true;
    };
    let ours = Parts::of(uri);
    if let Some(host) = url.host_str() {
        if !decoded(host).eq_ignore_ascii_case(&decoded(ours.host())) {
            return false;
        }
    }
    if url.cannot_be_a_base() {
        return true;
    }
    decoded(url.path()) == decoded(ours.path)
}

/// `s` with every escape decoded, as bytes: the resource a path names, however it is spelled.
fn decoded(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(h * 16 + l);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
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
fn decode_unreserved(uri: &str) -> Result<String, Refused> {
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
                return Err(Refused::HiddenSeparator);
            } else {
                out.extend_from_slice(format!("%{c:02X}").as_bytes());
            }
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Refused::HiddenSeparator)
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

    fn ok(s: &str) -> String {
        check(s).unwrap_or_else(|e| panic!("{s:?} refused: {e:?}"))
    }

    fn not_normal(s: &str) -> String {
        match check(s) {
            Err(Refused::NotNormal(n)) => n,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn dot_segments_are_refused_naming_the_normal_form() {
        assert_eq!(
            not_normal("demo://resource/dynamic/text/../../static/document/a.md"),
            "demo://resource/static/document/a.md"
        );
        assert_eq!(
            not_normal("demo://resource/dynamic/text/%2e%2e/%2E%2E/static/x"),
            "demo://resource/static/x"
        );
        assert_eq!(not_normal("demo://r/a/./../b"), "demo://r/b");
        assert_eq!(
            not_normal("file:///a/b/../../../etc/passwd"),
            "file:///etc/passwd"
        );
        assert_eq!(not_normal("file:///a/b/.."), "file:///a/");
        assert_eq!(not_normal("file:///a/./b/."), "file:///a/b/");
        assert_eq!(
            not_normal("mcpgw://everything/demo://resource/static/../dynamic/text/1"),
            "mcpgw://everything/demo://resource/dynamic/text/1"
        );
        assert_eq!(ok("test://x/a?p=../b#.."), "test://x/a?p=../b#..");
    }

    #[test]
    fn unreserved_escapes_are_decoded_and_others_kept() {
        assert_eq!(ok("demo://r/%73tatic/%7e"), "demo://r/static/~");
        assert_eq!(ok("demo://r/a%20b%3a"), "demo://r/a%20b%3A");
        assert_eq!(ok("demo://r/100%"), "demo://r/100%");
        assert_eq!(
            ok("demo://resource/static/document/architecture.md"),
            "demo://resource/static/document/architecture.md"
        );
        assert_eq!(ok("urn:isbn:0451450523"), "urn:isbn:0451450523");
    }

    #[test]
    fn separators_in_disguise_are_refused() {
        for uri in [
            "file:///a/..%2F..%2Fetc",
            "file:///a/..\\..\\etc",
            "file:///a/%5c",
        ] {
            assert_eq!(check(uri), Err(Refused::HiddenSeparator), "{uri}");
        }
        assert!(matches!(check("x:a/../b"), Err(Refused::NotNormal(_))));
    }

    #[test]
    fn control_characters_and_whitespace_are_refused() {
        for uri in [
            "mcpgw://everything/demo://resource/static/.\t./dynamic/text/1",
            "demo://resource/static/.\n./x",
            "demo://resource/static/.\r./x",
            "demo://resource/static/x\u{0}",
            " demo://resource/static/x",
            "demo://resource/static/a b",
            "demo://resource/static/a\u{a0}b",
            "demo://resource/static/\u{7f}",
        ] {
            assert_eq!(check(uri), Err(Refused::Invisible), "{uri:?}");
        }
    }

    #[test]
    fn hosts_a_whatwg_parser_rewrites_are_refused() {
        // WHATWG reads `0x7f.1` as 127.0.0.1: a pattern over the one is not a grant of the other.
        assert_eq!(check("http://0x7f.1/a"), Err(Refused::Ambiguous));
        assert_eq!(ok("http://127.0.0.1/a"), "http://127.0.0.1/a");
        assert_eq!(
            ok("https://user@example.com:8443/a"),
            "https://user@example.com:8443/a"
        );
        // A fullwidth dot is a dot in a special scheme's host (IDNA), and just a character in an
        // opaque host, which WHATWG percent-encodes: the same host.
        assert_eq!(check("http://ex\u{ff0e}com/a"), Err(Refused::Ambiguous));
        assert_eq!(ok("test://\u{ff0e}\u{ff0e}/a"), "test://\u{ff0e}\u{ff0e}/a");
    }

    mod whatwg {
        //! The matcher against a real WHATWG parser (the `url` crate): any URI the gateway
        //! accepts names, to that parser, the host and path the gateway matched.
        use super::super::*;
        use proptest::prelude::*;

        /// Segments chosen to hit every way a parser may read a dot or a separator.
        fn segment() -> impl Strategy<Value = String> {
            prop_oneof![
                Just(".".to_string()),
                Just("..".to_string()),
                Just("%2e".to_string()),
                Just("%2E%2e".to_string()),
                Just(".%2e".to_string()),
                Just(".\t.".to_string()),
                Just(".\n.".to_string()),
                Just("\r..".to_string()),
                Just(". .".to_string()),
                Just("..\\x".to_string()),
                Just("..%2f".to_string()),
                Just("..%5C".to_string()),
                Just("%00".to_string()),
                Just(";..".to_string()),
                Just("..;".to_string()),
                Just("a?b".to_string()),
                Just("#..".to_string()),
                Just("\u{ff0e}\u{ff0e}".to_string()),
                Just("%C3%A9".to_string()),
                Just("static".to_string()),
                Just("dynamic".to_string()),
                "[a-z0-9._~%-]{0,6}",
            ]
        }

        fn uri() -> impl Strategy<Value = String> {
            (
                prop_oneof![
                    Just("demo://resource"),
                    Just("file://"),
                    Just("https://example.com"),
                    Just("http://0x7f.1"),
                    Just("test:"),
                ],
                prop::collection::vec(segment(), 0..7),
            )
                .prop_map(|(base, segs)| format!("{base}/{}", segs.join("/")))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn an_accepted_uri_is_what_whatwg_reads(uri in uri()) {
                if let Ok(sent) = check(&uri) {
                    let url = url::Url::parse(&sent);
                    prop_assume!(url.is_ok());
                    let url = url.unwrap();
                    let ours = Parts::of(&sent);
                    prop_assert_eq!(decoded(url.path()), decoded(ours.path), "{:?} -> {}", uri, url);
                    // An opaque host's non-ASCII bytes come back percent-encoded: the same host.
                    if let Some(host) = url.host_str() {
                        prop_assert!(
                            decoded(host).eq_ignore_ascii_case(&decoded(ours.host())),
                            "{:?} -> {}", uri, url
                        );
                    }
                    // Whatever the parser does to it, the same URI sent again is accepted as is.
                    prop_assert_eq!(check(&sent), Ok(sent.clone()));
                }
            }

            #[test]
            fn a_granted_prefix_cannot_reach_past_itself(segs in prop::collection::vec(segment(), 0..7)) {
                let uri = format!("demo://resource/static/{}", segs.join("/"));
                if let Ok(sent) = check(&uri) {
                    let url = url::Url::parse(&sent).expect("demo URIs parse");
                    prop_assert!(url.path().starts_with("/static/"), "{:?} -> {}", uri, url);
                }
            }
        }
    }
}
