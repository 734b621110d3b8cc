//! The lifeline sequence off the caller's thread, for callers with an event
//! loop (spawning and probing never stall it): the call returns at once
//! with a handle to poll (`try_result`) or to block on later (`wait`).
//!
//! A started child is supervised by its own worker thread for its whole
//! life. That is not only convenience: `PR_SET_PDEATHSIG` fires when the
//! thread that forked the child exits, so the forking thread must be the
//! one that lives as long as the child.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;

use super::error::{Error, Result};
use super::run::{self, Launched, Spec};
use super::spawn::{exit_code, Wake};

/// The future result of the worker's work (`None` once taken).
#[derive(Debug)]
pub struct Pending<T>(Option<Receiver<Result<T>>>);

fn worker_gone() -> Error {
    Error::io(
        "lifeline worker thread",
        io::Error::other("ended without a result"),
    )
}

impl<T> Pending<T> {
    /// The result if the work finished (taken: later calls return `None`).
    /// Never blocks.
    pub fn try_result(&mut self) -> Option<Result<T>> {
        let r = match self.0.as_ref()?.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => Err(worker_gone()),
        };
        self.0 = None;
        Some(r)
    }

    /// Blocks until the work finishes.
    pub fn wait(self) -> Result<T> {
        (self.0.and_then(|rx| rx.recv().ok())).unwrap_or_else(|| Err(worker_gone()))
    }
}

/// A running child, supervised by its worker thread.
///
/// Dropping the handle stops the child (same as [`Sidecar::stop`]).
#[derive(Debug)]
pub struct Sidecar {
    pid: i32,
    start_time: u64,
    /// Closing this pipe end is the stop request: the worker sees POLLHUP.
    stop_writer: Option<OwnedFd>,
    exit: Pending<i32>,
}

impl Sidecar {
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Field 22 of `/proc/PID/stat`: with the pid, the child's identity.
    pub fn start_time(&self) -> u64 {
        self.start_time
    }

    /// Asks the worker to stop the child (stdin closed, TERM to the group,
    /// grace, KILL). Returns at once; see [`Sidecar::try_exit`].
    pub fn stop(&mut self) {
        self.stop_writer = None;
    }

    /// The child's exit code (128+N for signal N) once it has ended and the
    /// worker has cleaned up. Never blocks.
    pub fn try_exit(&mut self) -> Option<Result<i32>> {
        self.exit.try_result()
    }

    /// Blocks until the child ends (by itself or after [`Sidecar::stop`]).
    pub fn wait(self) -> Result<i32> {
        // Keep the stop pipe open while waiting: closing it would stop the
        // child instead of waiting for it.
        let _keep = self.stop_writer;
        self.exit.wait()
    }
}

/// Runs the whole lifeline sequence off-thread. The handle resolves once
/// the child is ready (and recorded), or with the error that prevented it;
/// on error nothing is left running. Dropping the unresolved handle stops
/// the child as soon as it has started.
pub fn start_in_background(spec: Spec) -> Pending<Sidecar> {
    let (tx, rx) = mpsc::channel();
    let failed = tx.clone();
    if let Err(e) = thread::Builder::new()
        .name("lifeline-sidecar".into())
        .spawn(move || supervise(spec, tx))
    {
        let _ = failed.send(Err(Error::io("unable to start a worker thread", e)));
    }
    Pending(Some(rx))
}

fn supervise(spec: Spec, tx: mpsc::Sender<Result<Sidecar>>) {
    // CLOEXEC: a child inheriting the write end would keep the pipe from
    // ever hanging up, and the stop request would never arrive.
    // CLOEXEC: a child inheriting the write end would keep the pipe from
    // ever hanging up, and the stop request would never arrive.
    let started = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| Error::nix("unable to create a pipe", e))
        .and_then(|pipe| Ok((pipe, run::launch(&spec, &mut || false)?.0)));
    let ((stop_reader, stop_writer), launched) = match started {
        Ok(x) => x,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    let (Launched::Ready(mut running) | Launched::StopRequested(mut running)) = launched;
    let (exit_tx, exit_rx) = mpsc::channel();
    let sidecar = Sidecar {
        pid: running.pid,
        start_time: running.start_time,
        stop_writer: Some(stop_writer),
        exit: Pending(Some(exit_rx)),
    };
    // If the caller is gone, the returned Sidecar is dropped right here,
    // which closes the stop pipe: the wait below then stops the child.
    drop(tx.send(Ok(sidecar)));
    let exit = match running.wait_event(&[stop_reader.as_fd()]) {
        Ok(wake) => run::finish(&spec, &mut running, matches!(wake, Wake::Fd(_))).map(exit_code),
        Err(e) => {
            let _ = run::finish(&spec, &mut running, true);
            Err(e)
        }
    };
    let _ = exit_tx.send(exit);
}
