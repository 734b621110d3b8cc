//! Test support for the demo image (dev-only, never shipped): a small
//! Dockerfile reader, Markdown fence extraction, the s6-overlay pins of
//! the project's specification, and lookups of the external checkers (hadolint, shellcheck).
//!
//! The tests themselves are in `tests/`.
#![forbid(unsafe_code)]
// Test support only (never shipped): a broken fixture may fail a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The s6-overlay release the image pins.
pub const S6_OVERLAY_VERSION: &str = "3.2.3.0";

/// `(tarball, Dockerfile ARG, SHA256)` for every tarball the image may
/// extract, copied from the specification's pin table (a test compares them with the SPEC when
/// it is readable).
pub const S6_OVERLAY_PINS: [(&str, &str, &str); 4] = [
    (
        "s6-overlay-noarch.tar.xz",
        "S6_OVERLAY_NOARCH_SHA256",
        "b720f9d9340efc8bb07528b9743813c836e4b02f8693d90241f047998b4c53cf",
    ),
    (
        "s6-overlay-x86_64.tar.xz",
        "S6_OVERLAY_X86_64_SHA256",
        "a93f02882c6ed46b21e7adb5c0add86154f01236c93cd82c7d682722e8840563",
    ),
    (
        "s6-overlay-aarch64.tar.xz",
        "S6_OVERLAY_AARCH64_SHA256",
        "0952056ff913482163cc30e35b2e944b507ba1025d78f5becbb89367bf344581",
    ),
    (
        "s6-overlay-symlinks-noarch.tar.xz",
        "S6_OVERLAY_SYMLINKS_NOARCH_SHA256",
        "a60dc5235de3ecbcf874b9c1f18d73263ab99b289b9329aa950e8729c4789f0e",
    ),
];

/// The packages the image's builder stage must build, and nothing else.
pub const IMAGE_PACKAGES: [&str; 2] = ["svkit-cli", "svkit-demo-app"];

/// Dev-only packages no image may build.
pub const DEV_ONLY_PACKAGES: [&str; 3] = ["svkit-sandbox", "svkit-testkit", "svkit-image-tests"];

/// The exact ENTRYPOINT of an svkit image.
pub const ENTRYPOINT: [&str; 2] = ["svkit-init", "--"];

/// The repository root (this crate is `crates/image-tests`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/image-tests has a grandparent")
        .to_path_buf()
}

/// Read a file of the repository, with its path in the panic message.
pub fn read_repo_file(rel: &str) -> String {
    let p = repo_root().join(rel);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// One Dockerfile instruction, continuation lines joined.
#[derive(Debug, Clone)]
pub struct Instruction {
    /// 1-based line of the keyword.
    pub line: usize,
    /// Upper-cased keyword: `FROM`, `RUN`, ...
    pub keyword: String,
    /// Everything after the keyword, continuation backslashes and newlines
    /// removed (as Docker does), comment lines inside it dropped.
    pub args: String,
}

impl Instruction {
    /// `--name=value` flags at the start of the arguments (`COPY --from=x`).
    pub fn flag(&self, name: &str) -> Option<String> {
        let prefix = format!("--{name}=");
        self.args
            .split_whitespace()
            .take_while(|w| w.starts_with("--"))
            .find_map(|w| w.strip_prefix(&prefix).map(str::to_string))
    }

    /// The arguments after the leading `--flags`.
    pub fn rest(&self) -> Vec<String> {
        self.args
            .split_whitespace()
            .skip_while(|w| w.starts_with("--"))
            .map(str::to_string)
            .collect()
    }

    /// The JSON (exec) form of CMD/ENTRYPOINT/RUN, if that is the form used.
    pub fn exec_form(&self) -> Option<Vec<String>> {
        serde_json::from_str(self.args.trim()).ok()
    }
}

/// A build stage: `FROM image [AS alias]` and what follows it.
#[derive(Debug, Clone)]
pub struct Stage {
    pub from: String,
    pub alias: Option<String>,
    pub instructions: Vec<Instruction>,
}

impl Stage {
    pub fn all(&self, keyword: &str) -> impl Iterator<Item = &Instruction> {
        let k = keyword.to_ascii_uppercase();
        self.instructions.iter().filter(move |i| i.keyword == k)
    }

    pub fn last(&self, keyword: &str) -> Option<&Instruction> {
        self.all(keyword).last()
    }

    /// `ARG NAME[=default]` declared in this stage: name -> default ("" if none).
    pub fn args(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for i in self.all("ARG") {
            for w in i.args.split_whitespace() {
                let (k, v) = w.split_once('=').unwrap_or((w, ""));
                m.insert(k.to_string(), v.trim_matches('"').to_string());
            }
        }
        m
    }

    /// `ENV K=V ...` of this stage (the `K=V` form only).
    pub fn env(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for i in self.all("ENV") {
            for w in i.args.split_whitespace() {
                if let Some((k, v)) = w.split_once('=') {
                    m.insert(k.to_string(), v.trim_matches('"').to_string());
                }
            }
        }
        m
    }
}

/// A parsed Dockerfile.
#[derive(Debug, Clone)]
pub struct Dockerfile {
    /// Instructions before the first FROM (global ARGs).
    pub preamble: Vec<Instruction>,
    pub stages: Vec<Stage>,
    /// Every comment line, `(line, text after '#')`, parser directives included.
    pub comments: Vec<(usize, String)>,
}

impl Dockerfile {
    pub fn parse(text: &str) -> Dockerfile {
        let mut instructions: Vec<Instruction> = Vec::new();
        let mut comments = Vec::new();
        let mut current: Option<Instruction> = None;
        for (idx, raw) in text.lines().enumerate() {
            let line_no = idx + 1;
            let trimmed = raw.trim_start();
            if let Some(c) = trimmed.strip_prefix('#') {
                // A comment line, also inside a continued instruction
                // (Docker drops those).
                comments.push((line_no, c.trim().to_string()));
                continue;
            }
            if trimmed.is_empty() {
                continue;
            }
            let (body, continues) = match raw.trim_end().strip_suffix('\\') {
                Some(b) => (b, true),
                None => (raw.trim_end(), false),
            };
            match current.as_mut() {
                Some(ins) => ins.args.push_str(body),
                None => {
                    let body = body.trim_start();
                    let (kw, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                    current = Some(Instruction {
                        line: line_no,
                        keyword: kw.to_ascii_uppercase(),
                        args: rest.to_string(),
                    });
                }
            }
            if !continues {
                let mut ins = current.take().expect("an instruction is open");
                ins.args = ins.args.trim().to_string();
                instructions.push(ins);
            }
        }
        if let Some(mut ins) = current.take() {
            ins.args = ins.args.trim().to_string();
            instructions.push(ins);
        }
        let mut preamble = Vec::new();
        let mut stages: Vec<Stage> = Vec::new();
        for ins in instructions {
            if ins.keyword == "FROM" {
                let words = ins.rest();
                let from = words.first().cloned().unwrap_or_default();
                let alias = match words.as_slice() {
                    [_, as_kw, alias, ..] if as_kw.eq_ignore_ascii_case("as") => {
                        Some(alias.clone())
                    }
                    _ => None,
                };
                stages.push(Stage {
                    from,
                    alias,
                    instructions: Vec::new(),
                });
            } else if let Some(s) = stages.last_mut() {
                s.instructions.push(ins);
            } else {
                preamble.push(ins);
            }
        }
        Dockerfile {
            preamble,
            stages,
            comments,
        }
    }

    pub fn load(path: &Path) -> Dockerfile {
        let text =
            fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        Dockerfile::parse(&text)
    }

    /// The stage the image is made of (the last one).
    pub fn final_stage(&self) -> &Stage {
        self.stages.last().expect("a Dockerfile has a FROM")
    }

    pub fn stage(&self, alias: &str) -> Option<&Stage> {
        self.stages
            .iter()
            .find(|s| s.alias.as_deref() == Some(alias))
    }

    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.preamble
            .iter()
            .chain(self.stages.iter().flat_map(|s| s.instructions.iter()))
    }
}

/// The contents of every fenced code block of `lang` in Markdown text, with
/// the line of its opening fence.
pub fn fenced_blocks(markdown: &str, lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, bool)> = None;
    for (idx, line) in markdown.lines().enumerate() {
        let t = line.trim_start();
        match open.as_mut() {
            None => {
                if let Some(info) = t.strip_prefix("```") {
                    let want = info.split_whitespace().next().unwrap_or("") == lang;
                    open = Some((idx + 1, String::new(), want));
                }
            }
            Some((start, body, want)) => {
                if t.starts_with("```") {
                    if *want {
                        out.push((*start, std::mem::take(body)));
                    }
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    out
}

/// `name = "..."` of every workspace package, with its binary targets.
pub fn workspace_packages() -> BTreeMap<String, BTreeSet<String>> {
    let mut m = BTreeMap::new();
    let crates = repo_root().join("crates");
    for entry in fs::read_dir(&crates).expect("read crates/").flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = fs::read_to_string(&manifest) else {
            continue;
        };
        let mut package = None;
        let mut bins = BTreeSet::new();
        let mut section = String::new();
        for line in text.lines() {
            let l = line.trim();
            if l.starts_with('[') {
                section = l.to_string();
                continue;
            }
            let Some((k, v)) = l.split_once('=') else {
                continue;
            };
            if k.trim() != "name" {
                continue;
            }
            let v = v.trim().trim_matches('"').to_string();
            match section.as_str() {
                "[package]" => package = Some(v),
                "[[bin]]" => {
                    bins.insert(v);
                }
                _ => {}
            }
        }
        let Some(package) = package else { continue };
        if bins.is_empty() && entry.path().join("src/main.rs").exists() {
            bins.insert(package.clone());
        }
        m.insert(package, bins);
    }
    m
}

/// An executable `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// The checker `tool`, or None after skipping `test` (through the one skip
/// helper: a failure where nothing may skip, as in `make test`).
pub fn checker(test: &str, tool: &str, install: &str) -> Option<PathBuf> {
    let found = which(tool);
    if found.is_none() {
        svkit_testkit::skip(test, format!("{tool} not installed ({install})"));
    }
    found
}

/// The SHA256 values of the specification's pin table, when it is readable:
/// `$SVKIT_SPEC`, else `../shared/SPEC.md` beside the repository.
pub fn spec_pins() -> Option<(PathBuf, BTreeMap<String, String>)> {
    let path = std::env::var_os("SVKIT_SPEC")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/SPEC.md"));
    let text = fs::read_to_string(&path).ok()?;
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line
            .split('|')
            .map(|c| c.trim().trim_matches('`'))
            .collect();
        if let [_, tarball, hash, ..] = cells.as_slice() {
            if tarball.starts_with("s6-overlay-")
                && hash.len() == 64
                && hash.bytes().all(|b| b.is_ascii_hexdigit())
            {
                m.insert(tarball.to_string(), hash.to_string());
            }
        }
    }
    Some((path, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_continuations_comments_and_stages() {
        let d = Dockerfile::parse(
            "# syntax=docker/dockerfile:1\nARG G=1\nFROM a:1 AS b\nRUN x \\\n  # inner\n  && y\nFROM c\nCOPY --from=b /o/ /usr/local/bin/\nENTRYPOINT [\"/init\", \"x\"]\nENV A=1 \\\n    B=2\n",
        );
        assert_eq!(d.preamble.len(), 1);
        assert_eq!(d.stages.len(), 2);
        assert_eq!(d.stages[0].alias.as_deref(), Some("b"));
        let run = d.stages[0].last("RUN").expect("RUN");
        assert_eq!(run.args, "x   && y");
        assert_eq!(run.line, 4);
        let copy = d.final_stage().last("COPY").expect("COPY");
        assert_eq!(copy.flag("from").as_deref(), Some("b"));
        assert_eq!(copy.rest(), ["/o/", "/usr/local/bin/"]);
        assert_eq!(
            d.final_stage()
                .last("ENTRYPOINT")
                .and_then(|i| i.exec_form()),
            Some(vec!["/init".to_string(), "x".to_string()])
        );
        assert_eq!(
            d.final_stage().env().get("B").map(String::as_str),
            Some("2")
        );
        assert!(d.comments.iter().any(|(l, c)| *l == 5 && c == "inner"));
    }

    #[test]
    fn extracts_fenced_blocks_of_one_language() {
        let md =
            "x\n```dockerfile\nFROM a\n```\n```sh\necho\n```\n```dockerfile title\nFROM b\n```\n";
        let blocks = fenced_blocks(md, "dockerfile");
        assert_eq!(
            blocks,
            vec![(2, "FROM a\n".to_string()), (8, "FROM b\n".to_string())]
        );
    }
}
