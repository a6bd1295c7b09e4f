//! The layering of the workspace: inside each crate, modules import one way. A set of two
//! or more source files that reach each other through `crate::` and `super::` paths is a
//! circle, and fails the test with the files named. Comments, string and character
//! literals and `#[cfg(test)]` modules are not read (a test module may use anything).
//!
//! The paths are read from the source text, as written: `crate::a::b::Item` names the file
//! of the longest module path it starts with (`src/a/b.rs`, else `src/a.rs` or
//! `src/a/mod.rs`); `use crate::{a::X, b::{c, d}}` names each path of its braces;
//! `super::` starts at the file's parent module. Items of the crate's root (lib.rs,
//! main.rs) lead nowhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source directories of the workspace's crates.
const CRATES: [&str; 4] = ["src", "resolver/src", "protocol/src", "cmdline/src"];

#[test]
fn no_circle_of_imports() {
    let root = common::repository();
    let mut found = Vec::new();
    for krate in CRATES {
        let dir = root.join(krate);
        assert!(dir.is_dir(), "{} is a crate's sources", dir.display());
        for circle in circles(&imports(&dir)) {
            let names: Vec<String> = circle
                .iter()
                .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
                .collect();
            found.push(names.join(" <-> "));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other (README, \"Layout\", says which way imports run):\n{}",
        found.join("\n")
    );
}

/// The reader on a crate made for it: a circle through a grouped `use`, a `super::` path
/// and a nested module is found; paths in comments, strings and test modules, and a path
/// that goes one way, are not.
#[test]
fn a_circle_is_found_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |name: &str, text: &str| {
        let path = src.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e;",
    );
    write("a.rs", "use crate::{b::{inner::X, Y}, c};\n");
    write("b/mod.rs", "pub mod inner;\n");
    write("b/inner.rs", "fn f() { super::super::a::g(); }\n");
    write(
        "c.rs",
        "// crate::d::x\nconst S: &str = \"crate::d::x\";\nconst R: &str = r#\"crate::e\"#;\n\
         fn f<'a>(c: char) -> bool { c == '\"' }\n\
         #[cfg(test)]\nmod tests { use crate::d::x; fn t() { let _ = crate::e::y; } }\n",
    );
    write("d.rs", "use crate::c::S;\n");
    write("e.rs", "pub fn y() { crate::d::x() }\n");
    let graph = imports(src);
    let circles = circles(&graph);
    let names: Vec<Vec<String>> = circles
        .iter()
        .map(|c| {
            c.iter()
                .map(|f| f.strip_prefix(src).unwrap().display().to_string())
                .collect()
        })
        .collect();
    assert_eq!(names, [["a.rs", "b/inner.rs"]]);
    // c.rs reads nothing: its paths are in a comment, strings and a test module.
    assert!(graph[&src.join("c.rs")].is_empty());
    assert_eq!(graph[&src.join("e.rs")], BTreeSet::from([src.join("d.rs")]));
}

/// Every source file of the crate at `src` but its roots, with the files it imports.
fn imports(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    walk(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_path(src, f), f.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let text = without_test_modules(&code_only(
            &std::fs::read_to_string(file).unwrap_or_default(),
        ));
        let me = module_path(src, file);
        let mut imported = BTreeSet::new();
        let mut at = 0;
        while let Some(found) = next_root(&text, at) {
            let (start, mut base) = match found {
                Root::Crate(end) => (end, Vec::new()),
                Root::Super(end) => (end, me.clone()),
            };
            // `super::super::x`: each `super::` one module up.
            let mut tail = &text[start..];
            while let Some(rest) = tail.strip_prefix("super::") {
                base.pop();
                tail = rest;
            }
            at = text.len() - tail.len();
            for path in paths(tail) {
                let mut full = base.clone();
                full.extend(path);
                while !full.is_empty() && !modules.contains_key(&full) {
                    full.pop();
                }
                if let Some(target) = modules.get(&full) {
                    if target != file {
                        imported.insert(target.clone());
                    }
                }
            }
        }
        graph.insert(file.clone(), imported);
    }
    graph
}

/// The `.rs` files under `dir`, but the crate roots (`lib.rs`, `main.rs`).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(
                path.file_name().and_then(|n| n.to_str()),
                Some("lib.rs" | "main.rs")
            )
        {
            out.push(path);
        }
    }
}

/// `a/b.rs` → `[a, b]`; `a/mod.rs` → `[a]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

enum Root {
    /// `crate::`, and where its path starts.
    Crate(usize),
    /// `super::` (the first of a chain), and where it starts.
    Super(usize),
}

/// The next `crate::` or `super::` from `at` that starts a path (not the end of a longer
/// name such as `my_crate::`).
fn next_root(text: &str, mut at: usize) -> Option<Root> {
    loop {
        let rest = &text[at..];
        let c = rest.find("crate::");
        let s = rest.find("super::");
        let (offset, is_crate) = match (c, s) {
            (Some(c), Some(s)) if c < s => (c, true),
            (Some(c), None) => (c, true),
            (_, Some(s)) => (s, false),
            (None, None) => return None,
        };
        let start = at + offset;
        let standalone = text[..start]
            .chars()
            .next_back()
            .is_none_or(|p| !(p.is_alphanumeric() || p == '_'));
        if !standalone {
            at = start + 7;
            continue;
        }
        return Some(if is_crate {
            Root::Crate(start + "crate::".len())
        } else {
            // The chain is walked by the caller, from the first `super::`.
            Root::Super(start)
        });
    }
}

/// The module paths named by the text after `crate::` (or after the `super::`s): one
/// path, or each path of a brace group, nested groups included.
fn paths(tail: &str) -> Vec<Vec<String>> {
    let (found, _) = tree(tail);
    found
}

/// One use tree from the start of `s`: its paths, and how many bytes it took.
fn tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let bytes = s.as_bytes();
    let skip_space = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut prefix: Vec<String> = Vec::new();
    let mut i = 0;
    loop {
        i = skip_space(i);
        match bytes.get(i) {
            Some(b'{') => {
                i += 1;
                let mut out = Vec::new();
                loop {
                    i = skip_space(i);
                    if bytes.get(i) == Some(&b'}') {
                        return (out, i + 1);
                    }
                    let (inner, used) = tree(&s[i..]);
                    for p in inner {
                        let mut full = prefix.clone();
                        full.extend(p);
                        out.push(full);
                    }
                    i = skip_space(i + used);
                    match bytes.get(i) {
                        Some(b',') => i += 1,
                        Some(b'}') => return (out, i + 1),
                        _ => return (out, i),
                    }
                }
            }
            Some(b'*') => return (vec![prefix], i + 1),
            _ => {}
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i > start {
            prefix.push(s[start..i].to_string());
        }
        if i > start && s[i..].starts_with("::") {
            i += 2;
        } else {
            let found = if prefix.is_empty() {
                vec![]
            } else {
                vec![prefix]
            };
            return (found, i);
        }
    }
}

/// The code of a Rust source without its comments, string literals (plain, byte and raw)
/// and character literals, each literal left as an empty one.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let word_before = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if text[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if text[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(rest).filter(|_| !word_before(i)) {
            let (open, count) = hashes;
            let close = format!("\"{}", "#".repeat(count));
            let body = i + open;
            i = text[body..]
                .find(&close)
                .map_or(b.len(), |e| body + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            match char_literal_len(rest) {
                Some(len) => {
                    i += len;
                    out.push_str("' '");
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"`, `r#"`, `br##"` … at the start of `s`: how many bytes open it and its `#`s.
fn raw_string_start(s: &str) -> Option<(usize, usize)> {
    let after_b = s.strip_prefix('b').unwrap_or(s);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.bytes().take_while(|&c| c == b'#').count();
    after_r[hashes..]
        .starts_with('"')
        .then(|| (s.len() - after_r.len() + hashes + 1, hashes))
}

/// The length of a character literal at the start of `s` (`'a'`, `'\n'`, `'\u{e9}'`,
/// `'"'`), or None for a lifetime or a label.
fn char_literal_len(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        let end = s[2..].find('\'')?;
        return (end <= 10).then_some(2 + end + 1);
    }
    let (at, close) = chars.next()?;
    (close == '\'').then_some(at + 1)
}

/// `text` without its `#[cfg(test)] mod name { … }` blocks.
fn without_test_modules(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let item = trimmed.strip_prefix("pub ").unwrap_or(trimmed).trim_start();
        let Some(module) = item.strip_prefix("mod ") else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        };
        let Some(open) = module.find(['{', ';']) else {
            break;
        };
        out.push_str(&rest[..at]);
        if module.as_bytes()[open] == b';' {
            rest = &module[open + 1..];
            continue;
        }
        let body = &module[open + 1..];
        let mut depth = 1;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The sets of two or more files that reach each other (strongly connected components, by
/// Tarjan's algorithm), each sorted, in the order found.
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            let graph = self.graph;
            for w in graph.get(v).into_iter().flatten() {
                let Some((w, _)) = graph.get_key_value(w) else {
                    continue;
                };
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}
