//! Which requests are static files, as GoAccess 1.7 decides it (parser.c
//! `verify_static_content`): the extensions ([`STATIC_EXTENSIONS`], those of the
//! configuration GoAccess installs), tested on the end of the request's URI without case,
//! and what that URI is in each format ([`Statics`]): the whole request-line URI, query
//! string included, where the query is part of it (combined, the load balancers, JSON), or
//! the path alone where the format logs the query in a field of its own (W3C's
//! `cs-uri-query`, CloudFront's; GoAccess's `%q`, appended after the test).

use crate::logs::format::{Reader, FORMATS};

/// The default static-file extensions: GoAccess 1.7's, the 40 of the configuration it
/// installs (`/etc/goaccess/goaccess.conf`), so that both count the same static files.
pub const STATIC_EXTENSIONS: &[&str] = &[
    "css", "js", "jpg", "png", "gif", "ico", "jpeg", "pdf", "csv", "mpeg", "mpg", "swf", "woff",
    "woff2", "xls", "xlsx", "doc", "docx", "ppt", "pptx", "txt", "zip", "ogg", "mp3", "mp4", "exe",
    "iso", "gz", "rar", "svg", "bmp", "tar", "tgz", "tiff", "tif", "ttf", "flv", "dmg", "xz",
    "zst",
];

/// [`STATIC_EXTENSIONS`] as owned strings.
pub fn default_static() -> Vec<String> {
    STATIC_EXTENSIONS.iter().map(|s| s.to_string()).collect()
}

/// Whether a request key (`METHOD URI PROTOCOL`, or a URI) asks for a static file, as
/// GoAccess decides it on a request line: its URI, query string included, ends in `.EXT`
/// for one of `exts` (lower case, compared without case) after at least one other byte.
/// So `/a.css` is static and `/a.css?v=2` is not.
pub fn is_static(request: &[u8], exts: &[String]) -> bool {
    let (_, uri, _) = crate::logs::format::split_key(request);
    ends_static(uri, exts)
}

/// Whether `uri` ends in `.EXT` for one of `exts`, after at least one other byte.
fn ends_static(uri: &[u8], exts: &[String]) -> bool {
    exts.iter().any(|e| {
        let e = e.as_bytes();
        uri.len() > e.len() + 1 && {
            let tail = &uri[uri.len() - e.len() - 1..];
            tail[0] == b'.' && tail[1..].eq_ignore_ascii_case(e)
        }
    })
}

/// Whether a log in the format named `name` ([`crate::logs::format::Format::name`]) logs
/// a request's query in a field of its own: the W3C formats (IIS, CloudFront), whose
/// reader joins `cs-uri-stem`, `?` and `cs-uri-query` into the URI.
pub fn query_apart(name: &str) -> bool {
    FORMATS
        .iter()
        .filter(|b| matches!(b.reader, Reader::W3cFields))
        .any(|b| b.shown.iter().any(|s| s.name == name))
}

/// How the summary tells the static files among its request keys.
#[derive(Debug, Clone, Copy)]
pub struct Statics<'e> {
    /// The extensions (lower case, without the dot).
    pub exts: &'e [String],
    /// The log's query is a field of its own ([`query_apart`]): the extension is looked
    /// for in the URI before its first `?` (the one the reader joined it with, unless the
    /// path itself holds a `?`, decoded from `%3F`).
    pub query_apart: bool,
}

impl<'e> Statics<'e> {
    /// The static files by `exts` of a log in the format named `format`.
    pub fn new(exts: &'e [String], format: &str) -> Statics<'e> {
        Statics {
            exts,
            query_apart: query_apart(format),
        }
    }

    /// Whether a request key (`METHOD URI PROTOCOL`, or a URI) asks for a static file.
    pub fn test(&self, request: &[u8]) -> bool {
        if !self.query_apart {
            return is_static(request, self.exts);
        }
        let (_, uri, _) = crate::logs::format::split_key(request);
        let path = memchr::memchr(b'?', uri).map_or(uri, |q| &uri[..q]);
        ends_static(path, self.exts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_ends_the_uri_or_in_a_query_apart_format_its_path() {
        let exts = default_static();
        // GoAccess's rule: the URI's end, query string included, without case.
        assert!(is_static(b"GET /a/b.CSS HTTP/1.1", &exts));
        assert!(!is_static(b"GET /a/b.CSS?v=1 HTTP/1.1", &exts));
        assert!(is_static(b"GET /x?f=a.css HTTP/1.1", &exts));
        assert!(is_static(b"GET /archive.tar.gz HTTP/1.1", &exts));
        assert!(!is_static(b"GET /a.avi HTTP/1.1", &exts));
        assert!(!is_static(b"GET .css HTTP/1.1", &exts) && is_static(b"/.css", &exts));
        assert!(!is_static(b"GET /a.b/c HTTP/1.1", &exts));
        assert!(!is_static(b"GET / HTTP/1.1", &exts));
        // Combined logs keep that rule; W3C's and CloudFront's test the path alone.
        let combined = Statics::new(&exts, "combined");
        assert!(!combined.query_apart && !combined.test(b"GET /a.css?v=1 HTTP/1.1"));
        for name in ["w3c", "cloudfront"] {
            let apart = Statics::new(&exts, name);
            assert!(apart.query_apart, "{name}");
            assert!(apart.test(b"GET /a.CSS?v=1 "));
            assert!(apart.test(b"GET /a.css "));
            assert!(!apart.test(b"GET /x?f=a.css "));
            assert!(!apart.test(b"GET .css?v=1 "));
        }
        for name in ["json", "elb", "alb", "vhost_combined", "custom"] {
            assert!(!query_apart(name), "{name}");
        }
    }
}
