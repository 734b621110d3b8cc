//! Gives the library a build id: a digest of its own sources. The memo of a
//! no-op apply (`reconcile::inputs`) depends on the code that rendered, and
//! every binary linking the same library must agree on it, whichever of
//! them wrote the memo.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    let mut all = Vec::new();
    files(Path::new("src"), &mut all);
    all.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for path in &all {
        path.hash(&mut h);
        std::fs::read(path).unwrap_or_default().hash(&mut h);
    }
    println!("cargo:rustc-env=SVKIT_BUILD_ID={:016x}", h.finish());
}
