//! Shared by the lifeline tests of both crates: a Python helper server,
//! process probes, and deadline polls (never sleeps as synchronisation).
#![allow(dead_code)]

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A configurable loopback server. Arguments are `key=value`:
/// port, host, delay (s before binding), exit (code instead of serving),
/// ignore_term, http (status to answer), watch_stdin (exit on stdin EOF),
/// info (path: JSON with pid, stdin link, LIFELINE_WATCH_STDIN), tag (ignored).
pub const SERVER_PY: &str = r#"
import json, os, select, signal, socket, sys, time
a = dict(x.split("=", 1) for x in sys.argv[1:])
if a.get("ignore_term"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
info = a.get("info")
if info:
    tmp = info + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "stdin": os.readlink("/proc/self/fd/0"),
                   "watch": os.environ.get("LIFELINE_WATCH_STDIN")}, f)
    os.rename(tmp, info)
time.sleep(float(a.get("delay", "0")))
if "exit" in a:
    sys.exit(int(a["exit"]))
host = a.get("host", "127.0.0.1")
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, int(a["port"])))
s.listen(16)
watch = [sys.stdin] if a.get("watch_stdin") else []
while True:
    r, _, _ = select.select([s] + watch, [], [])
    if sys.stdin in r and not os.read(0, 4096):
        sys.exit(0)
    if s in r:
        c, _ = s.accept()
        if a.get("http"):
            c.settimeout(2)
            try:
                c.recv(4096)
                c.sendall(("HTTP/1.0 %s X\r\nContent-Length: 0\r\n\r\n" % a["http"]).encode())
            except OSError:
                pass
        c.close()
"#;

pub fn python() -> PathBuf {
    let sys = PathBuf::from("/usr/bin/python3");
    if sys.exists() {
        sys
    } else {
        PathBuf::from("python3")
    }
}

/// Writes the helper into `dir` and returns the argv prefix to run it.
pub fn server_argv(dir: &Path) -> Vec<String> {
    let script = dir.join("server.py");
    fs::write(&script, SERVER_PY).unwrap();
    vec![python().display().to_string(), script.display().to_string()]
}

/// A port that was free a moment ago on `host`.
/// A port free on `host` that no other test of this process is handed:
/// drawn from one counter, below the kernel's ephemeral range (where
/// `bind(0)` and outgoing connections take theirs), so a port picked here
/// and bound later by a child cannot be given to a test running beside.
pub fn free_port(host: &str) -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    const LOW: u16 = 20000;
    const SPAN: u16 = 10000;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // Another test binary running at the same time starts elsewhere.
    let start = (std::process::id() % u32::from(SPAN)) as u16;
    for _ in 0..SPAN {
        let n = NEXT.fetch_add(1, Ordering::Relaxed) % SPAN;
        let port = LOW + (start + n) % SPAN;
        if TcpListener::bind((host, port)).is_ok() {
            return port;
        }
    }
    panic!("no free port on {host} in {LOW}..{}", LOW + SPAN);
}

pub fn ipv6_available() -> bool {
    TcpListener::bind("[::1]:0").is_ok()
}

/// Polls `f` until it returns true or `limit` passes.
pub fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Process state letter from /proc/PID/stat, None if gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s[s.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Gone or a zombie (a zombie holds nothing; its parent may be dead too).
pub fn is_gone(pid: i32) -> bool {
    matches!(proc_state(pid), None | Some('Z') | Some('X'))
}

pub fn read_info(path: &Path, limit: Duration) -> serde_json::Value {
    assert!(
        wait_for(limit, || path.exists()),
        "helper never wrote {}",
        path.display()
    );
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

pub fn info_pid(path: &Path) -> i32 {
    read_info(path, Duration::from_secs(10))["pid"]
        .as_i64()
        .unwrap() as i32
}

/// Is something listening on host:port (per /proc/net/tcp{,6})?
pub fn listening(host: &str, port: u16) -> bool {
    std::net::TcpStream::connect_timeout(
        &format!(
            "{}:{port}",
            if host.contains(':') {
                format!("[{host}]")
            } else {
                host.to_string()
            }
        )
        .parse()
        .unwrap(),
        Duration::from_millis(200),
    )
    .is_ok()
}

pub fn kill(pid: i32, sig: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::try_from(sig).unwrap(),
    );
}

/// Kills a leftover by pid at the end of a test, whatever happened.
pub struct Reaper(pub Vec<i32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if !is_gone(pid) {
                kill(pid, 9);
            }
        }
    }
}

/// Starts the helper directly (a "stranger" or a pre-existing instance).
pub fn start_server(argv: &[String], args: &[String]) -> Child {
    Command::new(&argv[0])
        .args(&argv[1..])
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}
