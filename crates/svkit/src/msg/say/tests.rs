use std::io::{Read as _, Seek as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::*;

/// [`say`] with the log's fd and the fallback given (`None`: no fallback).
fn say_to(log: BorrowedFd<'_>, container: Option<&Path>, text: &str) -> Said {
    say_or(log, || container.map(Path::to_path_buf), text)
}

fn flags(fd: BorrowedFd<'_>) -> OFlag {
    OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL).expect("F_GETFL"))
}

/// A pipe whose write end (still blocking) has no room left.
fn full_pipe() -> (io::PipeReader, OwnedFd) {
    let (r, w) = io::pipe().expect("pipe");
    let w = OwnedFd::from(w);
    let fl = flags(w.as_fd());
    fcntl(w.as_raw_fd(), FcntlArg::F_SETFL(fl | OFlag::O_NONBLOCK)).expect("F_SETFL");
    let mut f = File::from(w.try_clone().expect("dup"));
    let chunk = [b'x'; 4096];
    while f.write(&chunk).is_ok() {}
    // The last bytes a page could not take.
    while f.write(b"y").is_ok() {}
    fcntl(w.as_raw_fd(), FcntlArg::F_SETFL(fl)).expect("F_SETFL");
    (r, w)
}

#[test]
fn a_line_goes_whole_to_a_pipe_with_room() {
    let (mut r, w) = io::pipe().expect("pipe");
    let w = OwnedFd::from(w);
    assert_eq!(
        say_to(w.as_fd(), None, "svkit: hello\nworld\x1b[2J\x07"),
        Said::Log
    );
    drop(w);
    let mut got = String::new();
    r.read_to_string(&mut got).expect("read");
    assert_eq!(got, "svkit: hello\\nworld\\e[2J\\x07\n");
}

#[test]
fn a_full_pipe_sends_the_line_to_the_container_at_once_and_stays_blocking() {
    let (_r, w) = full_pipe();
    let t = tempfile::tempdir().expect("tempdir");
    let container = t.path().join("container");
    std::fs::write(&container, "before\n").expect("write");
    let start = Instant::now();
    assert_eq!(
        say_to(w.as_fd(), Some(&container), "svkit: restarting it"),
        Said::Container
    );
    assert_eq!(
        std::fs::read_to_string(&container).expect("read"),
        "before\nsvkit: restarting it\n",
        "appended, never over what is there"
    );
    // No fallback that takes it: dropped, as quickly.
    assert_eq!(say_to(w.as_fd(), None, "lost"), Said::Dropped);
    assert_eq!(
        say_to(w.as_fd(), Some(&t.path().join("missing/x")), "lost"),
        Said::Dropped
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // The shared description is as the program had it: blocking.
    assert!(!flags(w.as_fd()).contains(OFlag::O_NONBLOCK));
}

#[test]
fn a_pipe_nobody_reads_is_unusable() {
    let (r, w) = io::pipe().expect("pipe");
    drop(r);
    let w = OwnedFd::from(w);
    let t = tempfile::tempdir().expect("tempdir");
    let container = t.path().join("container");
    std::fs::write(&container, "").expect("write");
    assert_eq!(say_to(w.as_fd(), Some(&container), "x"), Said::Container);
}

#[test]
fn a_line_is_cut_to_one_atomic_pipe_write_on_a_char_boundary() {
    let (mut r, w) = io::pipe().expect("pipe");
    let w = OwnedFd::from(w);
    let long = "é".repeat(3000);
    assert_eq!(say_to(w.as_fd(), None, &long), Said::Log);
    drop(w);
    let mut got = Vec::new();
    r.read_to_end(&mut got).expect("read");
    // 4095 bytes hold 2047 two-byte chars and a half: the half is cut.
    assert_eq!(got.len(), 2047 * 2 + 1);
    assert!(got.ends_with(b"\xc3\xa9\n"));
    assert!(std::str::from_utf8(&got).is_ok());
}

/// A regular file is written through the fd itself, at its offset: a
/// description of its own would write over what comes next.
#[test]
fn a_regular_file_is_written_at_the_fds_own_offset() {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("log");
    let mut f = File::create(&p).expect("create");
    f.write_all(b"one\n").expect("write");
    assert_eq!(say_to(f.as_fd(), None, "two"), Said::Log);
    f.write_all(b"three\n").expect("write");
    f.rewind().expect("rewind");
    assert_eq!(
        std::fs::read_to_string(&p).expect("read"),
        "one\ntwo\nthree\n"
    );
}
