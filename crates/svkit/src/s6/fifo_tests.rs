use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use super::*;

/// What s6's `ftrigw_notifyb_nosig` does: `byte` to every FIFO whose name
/// starts `ftrig1:@` and is 39 bytes long.
fn notify(fifodir: &std::path::Path, byte: u8) -> usize {
    let mut n = 0;
    for e in fs::read_dir(fifodir).expect("readdir") {
        let e = e.expect("entry");
        let name = e.file_name().into_string().expect("utf-8");
        if !name.starts_with(FIFO_PREFIX) || name.len() != 39 {
            continue;
        }
        let mut f = fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(e.path())
            .expect("open_write");
        f.write_all(&[byte]).expect("write");
        n += 1;
    }
    n
}

#[test]
fn a_subscription_is_a_fifo_s6_writes_to_and_is_removed_on_drop() {
    let t = tempfile::tempdir().expect("tempdir");
    fs::create_dir(t.path().join("event")).expect("mkdir");
    let mut a = Subscription::new(t.path()).expect("subscribe");
    let mut b = Subscription::new(t.path()).expect("subscribe again");
    assert_ne!(a.path(), b.path());
    let meta = fs::metadata(a.path()).expect("stat");
    assert!(meta.file_type().is_fifo());
    // Nothing half-made is left: only the two renamed FIFOs.
    assert_eq!(fs::read_dir(t.path().join("event")).expect("ls").count(), 2);
    assert_eq!(notify(&t.path().join("event"), b'd'), 2);
    assert_eq!(notify(&t.path().join("event"), b'D'), 2);
    let mut got = Vec::new();
    a.read(&mut got).expect("read");
    assert_eq!(got, b"dD");
    // Nothing waiting: returns at once.
    got.clear();
    a.read(&mut got).expect("read");
    assert!(got.is_empty());
    b.read(&mut got).expect("read");
    assert_eq!(got, b"dD");
    let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
    drop(a);
    assert!(!pa.exists());
    // Removed from where it was made, even after the slot dir moved.
    let moved = t.path().with_extension("moved");
    fs::rename(t.path(), &moved).expect("mv");
    drop(b);
    assert!(!pb.exists());
    assert_eq!(fs::read_dir(moved.join("event")).expect("ls").count(), 0);
    fs::rename(&moved, t.path()).expect("mv back");
}

#[test]
fn no_fifodir_is_an_error() {
    let t = tempfile::tempdir().expect("tempdir");
    let e = Subscription::new(t.path()).expect_err("no event/");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}
