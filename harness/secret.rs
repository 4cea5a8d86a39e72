//! Secrets kept out of what toolcost writes: a URL's `user:password@` and the values of query
//! parameters that carry credentials (`api_key`, `token`, `key`, `access_token`, ...), in any
//! text a report, a log row or a comment holds (an error that quotes a URL included).

/// Query parameter names whose values are credentials (compared without case, `-` read as `_`).
/// `key` is the Gemini API's; `access_token` an OAuth bearer token (Google's among others);
/// `sig` and `signature` sign a URL (Azure SAS, S3 presigned).
const SECRET_PARAMS: &[&str] = &[
    "api_key",
    "apikey",
    "key",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth",
    "authorization",
    "password",
    "passwd",
    "pass",
    "secret",
    "client_secret",
    "sig",
    "signature",
    "x_amz_signature",
    "x_amz_credential",
    "x_goog_signature",
    "x_goog_credential",
    "session",
    "sessionid",
    "code",
];

/// What a redacted value is written as.
pub const REDACTED: &str = "REDACTED";

/// Whether a query parameter's name says it carries a credential.
pub fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    SECRET_PARAMS.contains(&n.as_str())
        || n.ends_with("_token")
        || n.ends_with("_key")
        || n.ends_with("_secret")
        || n.ends_with("password")
}

/// `text` with every URL's credentials redacted: `user:password@` (or `token@`) becomes
/// `REDACTED@`, a path segment that reads as a token ([`looks_like_token`]), the value of every
/// secret query parameter and any fragment become `REDACTED`. A bare path with a query
/// (`/v1/models/x:generateContent?key=...`, a logged request path) is redacted parameter by
/// parameter, a URL inside a parameter's value as a URL.
pub fn redact(text: &str) -> String {
    if let Some(q) = text.find('?') {
        let path = &text[..q];
        if text.starts_with('/') && !path.contains(char::is_whitespace) && !path.contains("://") {
            return format!("{}?{}", redact_path(path), redact_query(&text[q + 1..]));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_url(rest) {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(rest.len(), |e| at + e);
        out.push_str(&redact_url(&rest[at..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    redact_loose_pairs(&out)
}

/// `text` with the value of every secret parameter that follows a `?`, `&` or `;` anywhere in it
/// redacted: a query quoted without its URL (`path=/mcp?token=...` in a server's error page).
fn redact_loose_pairs(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if matches!(b[i], b'?' | b'&' | b';') {
            let name_end = (i + 1..b.len())
                .find(|&j| {
                    !(b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'-' | b'%' | b'.'))
                })
                .unwrap_or(b.len());
            if name_end > i + 1 && b.get(name_end) == Some(&b'=') {
                let name = &text[i + 1..name_end];
                let value_end = (name_end + 1..b.len())
                    .find(|&j| {
                        b[j].is_ascii_whitespace()
                            || matches!(
                                b[j],
                                b'&' | b';'
                                    | b'#'
                                    | b'"'
                                    | b'\''
                                    | b'<'
                                    | b'>'
                                    | b'`'
                                    | b','
                                    | b')'
                            )
                    })
                    .unwrap_or(b.len());
                let value = &text[name_end + 1..value_end];
                if is_secret_param(&percent_decoded(name)) && !value.is_empty() && value != REDACTED
                {
                    out.push_str(&text[copied..name_end + 1]);
                    out.push_str(REDACTED);
                    copied = value_end;
                }
                i = value_end.max(i + 1);
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether a URL path segment reads as a credential rather than a name: it holds a run of at
/// least 16 ASCII letters and digits with both in it (`/s/9fK2...Qx/mcp`, a key in the path),
/// where names, dates, versions and model ids break into shorter runs at `-`, `_` or `.`.
pub fn looks_like_token(segment: &str) -> bool {
    segment
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|run| {
            run.len() >= 16
                && run.bytes().any(|b| b.is_ascii_digit())
                && run.bytes().any(|b| b.is_ascii_alphabetic())
        })
}

/// A path with each segment that reads as a token redacted.
fn redact_path(path: &str) -> String {
    path.split('/')
        .map(|seg| match looks_like_token(seg) {
            true => REDACTED,
            false => seg,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `text` with each of `values` (secrets toolcost itself passed on: an entry's `env` values, its
/// header values) replaced by `REDACTED`, longest first, then [`redact`]ed. Values shorter than
/// four characters are left (a `1` or `true` is no secret and would blank the text).
pub fn redact_values<'a>(text: &str, values: impl IntoIterator<Item = &'a str>) -> String {
    let mut values: Vec<&str> = values.into_iter().filter(|v| v.len() >= 4).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut out = text.to_string();
    for v in values {
        if out.contains(v) {
            out = out.replace(v, REDACTED);
        }
    }
    redact(&out)
}

/// Where the first `scheme://` in `s` starts: any scheme (`https`, `postgres`, `mongodb+srv`,
/// `redis`, ...), a letter then letters, digits, `+`, `-` or `.`.
fn find_url(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find("://").map(|i| from + i) {
        let mut start = i;
        while start > 0
            && matches!(b[start - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'-' | b'.')
        {
            start -= 1;
        }
        // The scheme begins at its first letter.
        while start < i && !b[start].is_ascii_alphabetic() {
            start += 1;
        }
        if start < i {
            return Some(start);
        }
        from = i + 3;
    }
    None
}

/// One URL redacted.
fn redact_url(url: &str) -> String {
    let (scheme, after) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => return url.to_string(),
    };
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(i) => format!("{REDACTED}@{}", &authority[i + 1..]),
        None => authority.to_string(),
    };
    let tail = match tail.find(['?', '#']) {
        Some(q) if tail.as_bytes()[q] == b'?' => {
            format!(
                "{}?{}",
                redact_path(&tail[..q]),
                redact_query(&tail[q + 1..])
            )
        }
        Some(f) => format!("{}{}", redact_path(&tail[..f]), redact_fragment(&tail[f..])),
        None => redact_path(tail),
    };
    format!("{scheme}{authority}{tail}")
}

/// A fragment (from its `#`): any text in it is redacted (a fragment can carry a token, as an
/// OAuth implicit grant's `#access_token=` does).
fn redact_fragment(fragment: &str) -> String {
    match fragment.len() > 1 {
        true => format!("#{REDACTED}"),
        false => fragment.to_string(),
    }
}

/// A query string (after its `?`) with secret values redacted, a URL in a value redacted as a
/// URL, and its fragment redacted.
fn redact_query(query: &str) -> String {
    let (q, fragment) = match query.find('#') {
        Some(i) => query.split_at(i),
        None => (query, ""),
    };
    // Pairs are split at `&` and `;`, and at a second `?` (a client that appends `?key=` to a
    // URL that already has a query sends one).
    let mut out = String::with_capacity(q.len());
    let mut at = 0;
    for pair in q.split(['&', ';', '?']) {
        if at > 0 {
            // The separator before this pair, as it was.
            out.push(q.as_bytes()[at - 1] as char);
        }
        at += pair.len() + 1;
        match pair.split_once('=') {
            Some((k, v)) if is_secret_param(&percent_decoded(k)) && !v.is_empty() => {
                out.push_str(k);
                out.push('=');
                out.push_str(REDACTED);
            }
            Some((k, v)) if v.contains("://") => {
                out.push_str(k);
                out.push('=');
                out.push_str(&redact(v));
            }
            _ => out.push_str(pair),
        }
    }
    format!("{out}{}", redact_fragment(fragment))
}

/// Text with its `%XX` escapes read (so `api%5Fkey` is `api_key`); bytes that are not UTF-8 are
/// replaced.
pub fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1..i + 3)) {
            (b'%', Some(hex)) => match std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                Some(v) => {
                    out.push(v);
                    i += 3;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_redacted() {
        for (text, want) in [
            (
                "https://u:p4ss@mcp.example.com/mcp?api_key=abc&x=1",
                "https://REDACTED@mcp.example.com/mcp?api_key=REDACTED&x=1",
            ),
            (
                "failed: could not reach https://h.example/mcp?access_token=ya29.x (timeout)",
                "failed: could not reach https://h.example/mcp?access_token=REDACTED (timeout)",
            ),
            (
                "/v1beta/models/gemini-3:generateContent?alt=sse&key=AIza",
                "/v1beta/models/gemini-3:generateContent?alt=sse&key=REDACTED",
            ),
            (
                "HTTPS://h/x?Api-Key=1#frag",
                "HTTPS://h/x?Api-Key=REDACTED#REDACTED",
            ),
            (
                "https://h/cb#access_token=ya29.abc&x=1 then",
                "https://h/cb#REDACTED then",
            ),
            (
                "/v1/chat?url=https://a.example/x&access_token=abc&page=2",
                "/v1/chat?url=https://a.example/x&access_token=REDACTED&page=2",
            ),
            (
                "https://h/x?next=https://u:p@a.example/y%3Fq&sig=zz",
                "https://h/x?next=https://REDACTED@a.example/y%3Fq&sig=REDACTED",
            ),
            (
                "failed at https://mcp.example.com/s/9fK2xQ7LmN4pR8sT1vW3/mcp (401)",
                "failed at https://mcp.example.com/s/REDACTED/mcp (401)",
            ),
            (
                "/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getUpdates?offset=1",
                "/REDACTED/getUpdates?offset=1",
            ),
            (
                "https://h/v1/models/claude-3-5-sonnet-20241022/2026-07-28/server-everything",
                "https://h/v1/models/claude-3-5-sonnet-20241022/2026-07-28/server-everything",
            ),
            (
                "401: path=/mcp?token=QTOKEN2&page=1 and ?Token=UP&x-api-key=XAKV1;sig=S1 (q?x=1)",
                "401: path=/mcp?token=REDACTED&page=1 and ?Token=REDACTED&x-api-key=REDACTED;sig=REDACTED (q?x=1)",
            ),
            ("https://h/x?api%5Fkey=1", "https://h/x?api%5Fkey=REDACTED"),
            (
                "https://h/x?my_token=1&page=2",
                "https://h/x?my_token=REDACTED&page=2",
            ),
            ("no url here", "no url here"),
            ("https://h/x?q=cats", "https://h/x?q=cats"),
            (
                "/v1beta/models/m:streamGenerateContent?x=1?key=AIza;token=t",
                "/v1beta/models/m:streamGenerateContent?x=1?key=REDACTED;token=REDACTED",
            ),
            (
                "db at postgres://admin:pgpass@db:5432/app and mongodb+srv://u:p@c.example/x, redis://:pw@r:6379",
                "db at postgres://REDACTED@db:5432/app and mongodb+srv://REDACTED@c.example/x, redis://REDACTED@r:6379",
            ),
            ("a :// b", "a :// b"),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn values_toolcost_passed_are_redacted() {
        let text = "auth failed with token tok-ENVSECRET-777 (mode 1) at https://u:p@h/x";
        assert_eq!(
            redact_values(text, ["tok-ENVSECRET-777", "1", "tok-ENV"]),
            "auth failed with token REDACTED (mode 1) at https://REDACTED@h/x"
        );
    }
}
