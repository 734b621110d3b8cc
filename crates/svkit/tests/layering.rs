//! The library's module layering, read from its sources and held to
//! ARCHITECTURE.md's table ("The library, one line a module"): no import
//! cycle between top-level modules; each module imports only those in its
//! row or above it, never below; and each row's **must not import** column
//! holds (`svkit's domain`: nothing but the first row, the infrastructure).
//! Every top-level module must have its row.
//!
//! An edge `a -> b` is any `crate::b` path in a non-test source file of
//! top-level module `a` (comments, `#[cfg(test)]` items and `*tests.rs` files
//! do not count: tests may reach anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// One row of ARCHITECTURE.md's module table: its modules, and what they
/// must not import (`None`: anything of svkit's domain).
struct Row {
    modules: Vec<String>,
    forbidden: Option<Vec<String>>,
}

/// The words in backquotes of a table cell (its modules).
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// ARCHITECTURE.md's module table, top row first.
fn table() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Some((_, section)) = text.split_once("## The library, one line a module") else {
        panic!("{}: no module table", path.display());
    };
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(first), Some(last)) = (cells.get(1), cells.get(3)) else {
            continue;
        };
        let modules = quoted(first);
        if modules.is_empty() {
            continue; // the header and its rule
        }
        let forbidden = (!last.contains("svkit's domain")).then(|| {
            (last.split(','))
                .map(|w| w.trim().trim_matches('`').to_string())
                .filter(|w| !w.is_empty())
                .collect()
        });
        rows.push(Row { modules, forbidden });
    }
    rows
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`None` for `lib.rs`).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

/// The source with comments, string/char literals' contents and
/// `#[cfg(test)]` items blanked out, so only live code paths remain.
fn live_code(text: &str) -> String {
    let no_comments = strip_comments(text);
    strip_cfg_test(&no_comments)
}

fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            // Raw strings (r"..", r#".."#) are rare here and hold no braces
            // that matter; ordinary strings may hold `{` and `crate::`.
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            out.push('"');
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal such as '{' or '\n' (not a lifetime).
            let end = b[i + 1..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| i + 1 + p);
            let end = if b[i + 1] == b'\\' {
                end.max(i + 3)
            } else {
                end
            };
            out.push_str("' '");
            i = end + 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Drops every item preceded by `#[cfg(test)]`: up to its `;` if that comes
/// before any `{`, else through its balanced braces.
fn strip_cfg_test(text: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let b = item.as_bytes();
        let mut i = 0;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b';' if depth == 0 => {
                    i += 1;
                    break;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        rest = &item[i.min(item.len())..];
    }
    out.push_str(rest);
    out
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules named by `crate::X` paths, including grouped
/// `use crate::{a, b::c}` forms.
fn imported_modules(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let after = code[at + "crate::".len()..].trim_start();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0usize;
            let mut expect_name = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    c if expect_name && depth == 0 && (c.is_ascii_alphabetic() || c == '_') => {
                        found.insert(ident(&group[i..]).to_string());
                        expect_name = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                found.insert(name.to_string());
            }
        }
    }
    found
}

fn graph() -> Graph {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let Some(module) = top_module(&src, &file) else {
            continue;
        };
        graph.entry(module.clone()).or_default();
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with("tests.rs") {
            continue;
        }
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for dep in imported_modules(&live_code(&text)) {
            if dep != module && dep != "self" {
                graph.entry(module.clone()).or_default().insert(dep);
            }
        }
    }
    graph
}

/// For each import `a -> b` that lies on a cycle, a shortest cycle through
/// it (each cycle reported once, written from its least module).
fn cycles(graph: &Graph) -> BTreeSet<Vec<String>> {
    let mut cycles = BTreeSet::new();
    for (from, deps) in graph {
        for to in deps {
            let Some(mut path) = shortest_path(graph, to, from) else {
                continue;
            };
            path.pop();
            path.insert(0, from.clone());
            let least = path
                .iter()
                .enumerate()
                .min_by_key(|(_, m)| *m)
                .map_or(0, |(i, _)| i);
            path.rotate_left(least);
            path.push(path[0].clone());
            cycles.insert(path);
        }
    }
    cycles
}

/// Breadth-first path `from -> ... -> to`, both ends included.
fn shortest_path(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![to.to_string()];
            let mut back = to;
            while back != from {
                back = prev[back];
                path.push(back.to_string());
            }
            path.reverse();
            return Some(path);
        }
        for next in graph.get(at).into_iter().flatten() {
            if next != from && !prev.contains_key(next.as_str()) {
                prev.insert(next, at);
                queue.push_back(next);
            }
        }
    }
    None
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let cycles = cycles(&graph());
    let shown: Vec<String> = cycles.iter().map(|c| c.join(" -> ")).collect();
    assert!(
        shown.is_empty(),
        "import cycles between top-level modules:\n  {}",
        shown.join("\n  ")
    );
}

#[test]
fn layering_follows_the_architecture_table() {
    let rows = table();
    let rank: BTreeMap<&str, usize> = (rows.iter().enumerate())
        .flat_map(|(i, r)| r.modules.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let mut broken = Vec::new();
    for (module, deps) in &graph() {
        let Some(&at) = rank.get(module.as_str()) else {
            broken.push(format!("{module}: no row in ARCHITECTURE.md's table"));
            continue;
        };
        for dep in deps {
            let Some(&dep_at) = rank.get(dep.as_str()) else {
                continue; // reported as a module of its own
            };
            if dep_at > at {
                broken.push(format!("{module} imports {dep}, below it in the table"));
            }
            let bad = match &rows[at].forbidden {
                None => dep_at != 0,
                Some(list) => list.contains(dep),
            };
            if bad {
                broken.push(format!("{module} imports {dep}, which it must not"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "layering rules broken:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_table_is_read() {
    let rows = table();
    assert!(rows[0].modules.iter().any(|m| m == "msg"));
    assert!(rows[0].forbidden.is_none());
    let render = rows.iter().find(|r| r.modules == ["render"]);
    assert_eq!(
        render.and_then(|r| r.forbidden.clone()),
        Some(vec!["s6".into()])
    );
}

#[test]
fn the_reader_sees_imports_and_skips_tests() {
    let code = live_code(
        "use crate::{a, b::{c, d}, e as f};\n\
         // crate::commented\n\
         fn g() { crate::h::i(); let s = \"crate::quoted\"; let c = '{'; }\n\
         #[cfg(test)]\nmod tests { use crate::tested; fn x() { if true { } } }\n\
         #[cfg(test)]\nmod more;\n\
         fn j() -> crate::k::L { todo!() }\n",
    );
    let found: Vec<String> = imported_modules(&code).into_iter().collect();
    assert_eq!(found, ["a", "b", "e", "h", "k"]);
}
