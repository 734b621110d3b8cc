//! `svkit serve`: the container's slots over HTTP, for probes (`/livez`,
//! `/readyz`, `/healthz`), Prometheus (`/metrics`), automation (`/v1/`)
//! and people (the dashboard at `/`). Run by the slot `svkit-serve`, which
//! boot renders when the config has a top-level `http` key.
//!
//! What it owns: the HTTP side only. The listener and its bounds
//! ([`gate`]: connections, head size and time, so no client delays
//! another's probe), the routes and their status codes, the token, and
//! the page ([`routes`]). What every body says is the one slot model's:
//! `Slots::snapshot` + `Snapshot::measure`, rendered by the same functions
//! as `svctl status --json`, `svctl metrics` and `svctl events --json`;
//! start, stop, restart and signal go through `svkit::control` as the
//! svctl verbs do. The config is loaded by the CLI's loader ([`Hooks`]),
//! kept, and loaded again whenever a layer changes.
#![forbid(unsafe_code)]

mod gate;
mod routes;

use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicUsize;
use std::sync::{mpsc, Arc, Mutex, RwLock};

use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
use svkit::config::{Listen, Model};
use svkit::msg::{self, exit, strerror};

/// What the CLI lends the server, so there is one home for each.
pub struct Hooks {
    /// The config as the svctl verbs load it (None: it did not load; the
    /// loader said why).
    pub load: fn(&Path) -> Option<Model>,
}

/// Requests answered at once (probes, status, metrics) share this many
/// threads; streams and control get their own, up to [`MAX_LONG`].
const WORKERS: usize = 4;
/// Complete requests waiting for a worker; beyond, 503.
const QUEUE: usize = 64;
/// Event streams, log follows and control requests at once; beyond, 503.
pub(crate) const MAX_LONG: usize = 16;

pub(crate) struct Shared {
    config_dir: PathBuf,
    scandir: PathBuf,
    hooks: Hooks,
    /// The config as last loaded; a request holds its own reference.
    model: RwLock<Option<Arc<Model>>>,
    /// Long requests running.
    long: AtomicUsize,
}

impl Shared {
    fn model(&self) -> Option<Arc<Model>> {
        self.model.read().ok().and_then(|m| m.clone())
    }
}

pub fn main(mut args: std::env::ArgsOs, hooks: Hooks) -> ExitCode {
    if args.next().is_some() {
        let usage = "usage: svkit serve (takes no arguments; the config's `http` says where)";
        msg::die(exit::USAGE, usage);
    }
    let config_dir = svkit::config::config_dir_from_env();
    let model = (hooks.load)(&config_dir);
    let Some(http) = model.as_ref().and_then(|m| m.http.clone()) else {
        let dir = config_dir.display();
        // EX_CONFIG: s6 does not start it again until the config changes.
        msg::die(
            exit::START_FAILED,
            format_args!("no `http` in the config in {dir}: nothing to serve"),
        );
    };
    let at = shown(&http.listen);
    let listener = gate::Listener::bind(&http.listen).unwrap_or_else(|e| {
        let why = strerror(&e);
        msg::die(
            exit::SYSTEM,
            format_args!("unable to listen on {at}: {why}"),
        )
    });
    msg::info(format_args!("listening on {at}"));
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        config_dir,
        scandir: svkit::container::scandir(),
        hooks,
        model: RwLock::new(model.map(Arc::new)),
        long: AtomicUsize::new(0),
    }));
    std::thread::spawn(move || watch_config(shared, http.listen));
    let (tx, rx) = mpsc::sync_channel::<gate::Req>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..WORKERS {
        let rx = Arc::clone(&rx);
        // The queue's lock is held while waiting, never while answering.
        std::thread::spawn(move || {
            while let Some(req) = rx.lock().ok().and_then(|r| r.recv().ok()) {
                routes::answer(shared, req);
            }
        });
    }
    let why = strerror(&gate::run(&listener, &tx));
    msg::die(
        exit::SYSTEM,
        format_args!("unable to accept connections: {why}"),
    )
}

/// `http.listen` as written in the config.
fn shown(l: &Listen) -> String {
    match l {
        Listen::Tcp(a) => a.to_string(),
        Listen::Unix(p) => format!("unix:{p}"),
    }
}

/// Loads the config again whenever a layer in its dir is written, renamed
/// or removed. A changed (or removed) `http.listen` ends the server: s6
/// starts it again on the new address, or apply removes its slot.
fn watch_config(sh: &'static Shared, listen: Listen) {
    let mask = WatchFlags::CLOSE_WRITE
        | WatchFlags::MOVED_TO
        | WatchFlags::MOVED_FROM
        | WatchFlags::DELETE
        | WatchFlags::CREATE;
    let fd = inotify::init(CreateFlags::CLOEXEC)
        .and_then(|fd| inotify::add_watch(&fd, &sh.config_dir, mask).map(|_| fd));
    let fd = match fd {
        Ok(fd) => fd,
        Err(e) => {
            msg::warn(format_args!(
                "unable to watch {} ({}): a config change is seen only after a restart",
                sh.config_dir.display(),
                strerror(&e.into())
            ));
            return;
        }
    };
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    loop {
        let mut reader = inotify::Reader::new(&fd, &mut buf);
        match reader.next() {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
        let model = (sh.hooks.load)(&sh.config_dir);
        // An invalid config keeps the last good one (the loader said why).
        let Some(model) = model else { continue };
        if model.http.as_ref().map(|h| &h.listen) != Some(&listen) {
            msg::info("`http.listen` changed in the config: ending, to listen where it says");
            std::process::exit(0);
        }
        if let Ok(mut m) = sh.model.write() {
            *m = Some(Arc::new(model));
        }
    }
}
