//! The workspace's modules form layers: no module imports another that imports it back,
//! directly or through others (issue 28). Each crate's source files are read, every path
//! that starts with `crate::` or `super::` (including `use crate::{a, b::c}` groups) is
//! resolved to the module file it names, and the graph of those edges must have no cycle.
//! A module and the modules inside it (a parent and its children) may use each other, as
//! Rust intends; test modules (`#[cfg(test)] mod tests` and `tests.rs` files) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's modules by path (`a::b`), each with its source file.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|l| l == "tests") {
                continue;
            }
            if parts
                .last()
                .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
            {
                parts.pop();
            }
            out.insert(parts, p);
        }
    }
    out
}

/// The text of a source file without comments and without its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers of a path written from `at` (`a::b::c`), and where it ends.
fn path_at(s: &[u8], mut at: usize) -> (Vec<String>, usize) {
    let mut segs = Vec::new();
    loop {
        let start = at;
        while at < s.len() && (s[at].is_ascii_alphanumeric() || s[at] == b'_') {
            at += 1;
        }
        if at == start {
            break;
        }
        segs.push(String::from_utf8_lossy(&s[start..at]).into_owned());
        if s[at..].starts_with(b"::") {
            at += 2;
        } else {
            break;
        }
    }
    (segs, at)
}

/// Every path a file names below `crate::` or `super::`, from the crate's root; the
/// members of a `{...}` group each make their own path.
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let s = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < s.len() {
        let rest = &s[at..];
        let (base, len) = if rest.starts_with(b"crate::") {
            (Vec::new(), 7)
        } else if rest.starts_with(b"super::") {
            // The parent module, whichever file the module is written in.
            (module[..module.len().saturating_sub(1)].to_vec(), 7)
        } else {
            at += 1;
            continue;
        };
        let before = at.checked_sub(1).map(|i| s[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            at += 1;
            continue;
        }
        let (segs, end) = path_at(s, at + len);
        let mut prefix = base;
        prefix.extend(segs);
        if s[end..].starts_with(b"{") {
            // A group: each member is a path from the prefix (nested groups flattened).
            let close = s[end..]
                .iter()
                .position(|&b| b == b'}')
                .map_or(s.len(), |i| end + i);
            for member in text[end + 1..close].split([',', '{', '}']) {
                let m = member.trim();
                let (segs, _) = path_at(m.as_bytes(), 0);
                let mut p = prefix.clone();
                p.extend(segs);
                out.push(p);
            }
            at = close;
        } else {
            out.push(prefix);
            at = end;
        }
    }
    out
}

/// The longest module that `path` starts with.
fn resolve(path: &[String], mods: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| mods.contains_key(p))
}

/// The cycles of one crate's module graph (strongly connected parts of more than one).
fn cycles(src: &Path) -> Vec<Vec<String>> {
    let mods = modules(src);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, file) in &mods {
        for p in named_paths(&code(file), m) {
            let Some(to) = resolve(&p, &mods) else {
                continue;
            };
            let related = to.starts_with(m) || m.starts_with(&to);
            if !related {
                edges.entry(m.clone()).or_default().insert(to);
            }
        }
    }
    // Tarjan's strongly connected components.
    struct State<'g> {
        edges: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        found: Vec<Vec<String>>,
    }
    fn visit(st: &mut State<'_>, v: &Vec<String>) {
        let i = st.index.len();
        st.index.insert(v.clone(), i);
        st.low.insert(v.clone(), i);
        st.stack.push(v.clone());
        let next: Vec<Vec<String>> = st
            .edges
            .get(v)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        for w in &next {
            if !st.index.contains_key(w) {
                visit(st, w);
                let l = st.low[w].min(st.low[v]);
                st.low.insert(v.clone(), l);
            } else if st.stack.contains(w) {
                let l = st.index[w].min(st.low[v]);
                st.low.insert(v.clone(), l);
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.stack.pop() {
                let done = &w == v;
                comp.push(w.join("::"));
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                st.found.push(comp);
            }
        }
    }
    let mut st = State {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !st.index.contains_key(v) {
            visit(&mut st, v);
        }
    }
    st.found
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut seen = 0;
    for e in std::fs::read_dir(&crates).unwrap() {
        let src = e.unwrap().path().join("src");
        if src.is_dir() {
            seen += 1;
            for c in cycles(&src) {
                found.push(format!("{}: {}", src.display(), c.join(" <-> ")));
            }
        }
    }
    assert!(
        seen >= 8,
        "only {seen} crates found under {}",
        crates.display()
    );
    assert!(
        found.is_empty(),
        "modules that import each other:\n{}",
        found.join("\n")
    );
}

/// The checker itself: a cycle written into a scratch crate is found, through a `use`
/// group and a plain path alike, and a parent using its child is not one.
#[test]
fn the_checker_finds_a_cycle_and_allows_a_parent_and_child() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("c")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::{x, y}, c};\n").unwrap();
    std::fs::write(src.join("b.rs"), "fn f() { crate::a::g(); }\n").unwrap();
    std::fs::write(src.join("c/mod.rs"), "mod d;\nuse d::z;\n").unwrap();
    std::fs::write(src.join("c/d.rs"), "use super::w; // crate::a\n").unwrap();
    assert_eq!(cycles(&src), vec![vec!["a".to_string(), "b".to_string()]]);
    std::fs::write(src.join("b.rs"), "fn f() {}\n").unwrap();
    assert!(cycles(&src).is_empty());
}
