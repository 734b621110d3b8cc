use super::*;

#[test]
fn strerror_drops_the_os_error_suffix() {
    let e = io::Error::from_raw_os_error(nix::libc::ENOENT);
    assert_eq!(strerror(&e), "No such file or directory");
    let e = io::Error::other("not an OS error");
    assert_eq!(strerror(&e), "not an OS error");
}

#[test]
fn fatal_reads_what_colon_why() {
    let f = Fatal::io(
        "unable to read scandir /x",
        &io::Error::from_raw_os_error(nix::libc::EACCES),
    );
    assert_eq!(f.code, exit::SYSTEM);
    assert_eq!(
        f.to_string(),
        "unable to read scandir /x: Permission denied"
    );
    let f = Fatal::new(4, "unknown slot x", "not in the scandir");
    assert_eq!(f.to_string(), "unknown slot x: not in the scandir");
    // A `why` already inside `what`.
    let f = Fatal::usage("unable to control x: supervisor not running", "");
    assert_eq!(f.code, exit::USAGE);
    assert_eq!(f.to_string(), "unable to control x: supervisor not running");
}

#[test]
fn only_a_broken_pipe_is_quiet() {
    assert!(out_error(io::Error::from(io::ErrorKind::BrokenPipe)).is_ok());
    let f = out_error(io::Error::from_raw_os_error(nix::libc::ENOSPC));
    assert_eq!(
        f.map_err(|f| f.to_string()),
        Err("unable to write to stdout: No space left on device".to_owned())
    );
}

/// Records each `write` call apart, as the kernel would see them.
#[derive(Default)]
struct Writes(Vec<Vec<u8>>);

impl io::Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_message_line_is_one_write_and_printable() {
    let mut w = Writes::default();
    let line = compose(
        "fatal",
        &format_args!("bad `{}`", "x\nt.json:1:1: y\x1b]0;z\x07"),
    );
    write_lines(&mut w, [line]).expect("write");
    assert_eq!(w.0.len(), 1, "{:?}", w.0);
    assert_eq!(
        String::from_utf8_lossy(&w.0[0]),
        format!("{}: fatal: bad `x\\nt.json:1:1: y\\e]0;z\\x07`\n", prog())
    );
}

#[test]
fn many_lines_share_writes_of_whole_lines_within_pipe_buf() {
    let mut w = Writes::default();
    let lines: Vec<String> = (0..1000).map(|i| format!("t.json:{i}:1: bad\n")).collect();
    write_lines(&mut w, lines.clone()).expect("write");
    assert!(w.0.len() < 20, "{} writes", w.0.len());
    for chunk in &w.0 {
        assert!(
            chunk.len() <= PIPE_BUF && chunk.ends_with(b"\n"),
            "{chunk:?}"
        );
    }
    assert_eq!(w.0.concat(), lines.concat().into_bytes());
    // A line longer than PIPE_BUF still goes in one call.
    let mut w = Writes::default();
    write_lines(&mut w, ["a".repeat(3 * PIPE_BUF), "b\n".into()]).expect("write");
    assert_eq!(w.0.len(), 2);
}
