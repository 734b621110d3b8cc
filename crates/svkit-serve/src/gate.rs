//! The listener, and the one thread that reads every request head with
//! poll(2): an idle or slow client costs an fd and a buffer, never a
//! thread, so it cannot delay another's probe. Bounds: [`MAX_CONNS`]
//! heads being read (a new connection beyond it drops the oldest, so a
//! flood of idle connections cannot lock a probe out), [`MAX_HEAD`] bytes
//! of head (431) and [`HEAD_TIME`] to send it (408). Parsing is
//! `httparse`'s; a complete head goes to the workers, and every response
//! closes its connection.

use std::io::{self, ErrorKind, Read};
use std::net::TcpListener;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use svkit::config::Listen;

/// Request heads being read at once.
pub const MAX_CONNS: usize = 256;
/// A request line and headers: far more than a browser, a probe or a
/// scraper sends.
pub const MAX_HEAD: usize = 8 << 10;
/// Time to send a whole request head.
pub const HEAD_TIME: Duration = Duration::from_secs(5);
/// Time a response write may block (a client that stops reading).
pub const WRITE_TIME: Duration = Duration::from_secs(10);

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    pub fn bind(at: &Listen) -> io::Result<Listener> {
        let l = match at {
            Listen::Tcp(a) => Listener::Tcp(TcpListener::bind(a)?),
            Listen::Unix(p) => {
                // A socket left by an earlier run is replaced; anything
                // else at that path is not touched.
                if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()) {
                    std::fs::remove_file(p)?;
                }
                let u = UnixListener::bind(p)?;
                // Anyone in the container may connect, as to a TCP port:
                // what needs more (logs, control) asks for the token.
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666))?;
                Listener::Unix(u)
            }
        };
        rustix::io::ioctl_fionbio(l.fd(), true)?;
        Ok(l)
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Listener::Tcp(t) => t.as_fd(),
            Listener::Unix(u) => u.as_fd(),
        }
    }

    fn accept(&self) -> io::Result<(Conn, String)> {
        match self {
            Listener::Tcp(t) => t
                .accept()
                .map(|(s, a)| (Conn::from(OwnedFd::from(s)), a.to_string())),
            Listener::Unix(u) => u.accept().map(|(s, _)| (s, "unix".into())),
        }
    }
}

/// A connection, TCP or unix. Every use of it (read, write, shutdown(2),
/// `O_NONBLOCK`, `SO_SNDTIMEO`, dup) is the same socket call for both, so
/// a TCP socket is carried in std's unix stream type: one type, no
/// dispatch on the kind.
pub type Conn = UnixStream;

/// Blocking again, each write bounded by [`WRITE_TIME`].
fn blocking(c: &Conn) -> io::Result<()> {
    c.set_nonblocking(false)?;
    c.set_write_timeout(Some(WRITE_TIME))
}

/// A complete request head, and its connection.
pub struct Req {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    pub query: String,
    /// The `Authorization` header's bytes.
    pub auth: Option<Vec<u8>>,
    pub peer: String,
    pub conn: Conn,
}

struct Pending {
    conn: Conn,
    peer: String,
    buf: Vec<u8>,
    since: Instant,
}

/// Accepts and reads request heads until accepting fails (its error).
pub fn run(l: &Listener, tx: &SyncSender<Req>) -> io::Error {
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        let now = Instant::now();
        pending.retain_mut(|p| {
            let late = now.duration_since(p.since) >= HEAD_TIME;
            if late {
                crate::routes::refuse(&mut p.conn, &p.peer, 408, "request head not sent in 5 s");
            }
            !late
        });
        let wait = (pending.iter())
            .map(|p| HEAD_TIME.saturating_sub(now.duration_since(p.since)))
            .min()
            .map_or(PollTimeout::NONE, |d| {
                PollTimeout::try_from(d.as_millis() + 1).unwrap_or(PollTimeout::MAX)
            });
        let fds = std::iter::once(l.fd()).chain(pending.iter().map(|p| p.conn.as_fd()));
        let mut fds: Vec<PollFd> = fds.map(|fd| PollFd::new(fd, PollFlags::POLLIN)).collect();
        match poll(&mut fds, wait) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return io::Error::from(e),
        }
        let revents: Vec<bool> = (fds.iter())
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        // Heads first (indices of this poll), new connections after.
        for i in (0..pending.len()).rev() {
            let Some(req) = revents[i + 1].then(|| read_head(&mut pending, i)).flatten() else {
                continue;
            };
            if let Err(TrySendError::Full(mut r) | TrySendError::Disconnected(mut r)) =
                tx.try_send(req)
            {
                crate::routes::refuse(&mut r.conn, &r.peer, 503, "too busy");
            }
        }
        if revents[0] {
            loop {
                match l.accept() {
                    Ok((conn, peer)) => {
                        if conn.set_nonblocking(true).is_err() {
                            continue;
                        }
                        if pending.len() >= MAX_CONNS {
                            pending.remove(0);
                        }
                        pending.push(Pending {
                            conn,
                            peer,
                            buf: Vec::new(),
                            since: Instant::now(),
                        });
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // Out of fds, a connection reset before accept: the
                    // next one may do.
                    Err(e) if is_transient(&e) => break,
                    Err(e) => return e,
                }
            }
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    use nix::libc;
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ECONNABORTED | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Reads what `pending[i]` sent; a complete head is taken out as a
/// request, a bad or closed one dropped (answered when bad).
fn read_head(pending: &mut Vec<Pending>, i: usize) -> Option<Req> {
    let p = pending.get_mut(i)?;
    let mut chunk = [0u8; 2048];
    let room = (MAX_HEAD + 1).saturating_sub(p.buf.len()).min(chunk.len());
    let n = match p.conn.read(&mut chunk[..room]) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
            return None
        }
        Ok(0) | Err(_) => {
            pending.remove(i);
            return None;
        }
        Ok(n) => n,
    };
    p.buf.extend_from_slice(&chunk[..n]);
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut r = httparse::Request::new(&mut headers);
    let bad = match r.parse(&p.buf) {
        Ok(httparse::Status::Complete(_)) => {
            let target = r.path.unwrap_or("/");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let (path, query) = (path.to_string(), query.to_string());
            let method = r.method.unwrap_or("").to_string();
            let auth = (r.headers.iter())
                .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                .map(|h| h.value.to_vec());
            let p = pending.remove(i);
            return blocking(&p.conn).ok().map(|()| Req {
                method,
                path,
                query,
                auth,
                peer: p.peer,
                conn: p.conn,
            });
        }
        Ok(httparse::Status::Partial) if p.buf.len() > MAX_HEAD => {
            (431, format!("request head over {MAX_HEAD} bytes"))
        }
        Ok(httparse::Status::Partial) => return None,
        Err(httparse::Error::TooManyHeaders) => (431, "more than 32 headers".into()),
        Err(e) => (400, format!("malformed request: {e}")),
    };
    let mut p = pending.remove(i);
    crate::routes::refuse(&mut p.conn, &p.peer, bad.0, &bad.1);
    None
}
