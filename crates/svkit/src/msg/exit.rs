//! Exit codes of every svkit binary, named once. Each binary's `--help` and
//! its docs list its [`CODES`](svctl::CODES); a test in `svkit-docgen`
//! checks that they do.
//!
//! s6's convention: 0 ok, 100 bad usage, 111 system error; 126 and 127 as
//! a shell gives them; 128+N for a process ended by signal N.

/// Success.
pub const OK: u8 = 0;
/// The thing asked about is not ok: an invalid config (nothing written),
/// a wait that timed out, a slot without a log dir, ...
pub const NOT_OK: u8 = 1;
/// Bad usage: unknown option or verb, a bad value.
pub const USAGE: u8 = 100;
/// A system error: a failed system call, s6 not answering, not root.
pub const SYSTEM: u8 = 111;
/// A slot's start refused for a file it needs (an env file, a secret,
/// its `cwd`): EX_CONFIG, permanent in every restart policy's defaults
/// (`svkit slot-env`, `svctl exec`, a redirect's opt-out).
pub const START_FAILED: u8 = 78;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// The command was not found.
pub const NOT_FOUND: u8 = 127;

/// 128+N: the code of a process ended by signal N.
pub fn signaled(signal: i32) -> i32 {
    128 + signal
}

/// `svctl`: each verb's `--help` says which of these it returns.
pub mod svctl {
    /// A wait (`wait`, `--wait`) ended because a slot failed permanently or
    /// is gone (no such slot, no supervisor).
    pub const GONE_OR_FAILED: u8 = 2;
    /// `plan`: applying would change something.
    pub const CHANGES: u8 = 2;
    /// `status`: some slot is not in its wanted state (LSB "not running").
    pub const NOT_IN_STATE: u8 = 3;
    /// A slot name that is not in the scandir.
    pub const UNKNOWN_SLOT: u8 = 4;
    /// `start`, `restart`: the slot's program runs in the foreground (a
    /// redirect's opt-out), and a second copy must never run beside it.
    /// `svkit slot-claim` refuses a slot's `run` with it too.
    pub const IN_FOREGROUND: u8 = 5;
    pub const CODES: &[u8] = &[
        super::OK,
        super::NOT_OK,
        GONE_OR_FAILED,
        NOT_IN_STATE,
        UNKNOWN_SLOT,
        IN_FOREGROUND,
        super::USAGE,
        super::SYSTEM,
    ];
}

/// `svkit-reconcile`: 1 is an invalid config (nothing written). A slot
/// it could not make is said and the boot goes on: 0, the others made
/// (`svctl status` counts it missing).
pub mod reconcile {
    pub const CODES: &[u8] = &[super::OK, super::NOT_OK, super::USAGE, super::SYSTEM];
}

/// `svkit-wrap`: besides these, the foreground command's own code, or
/// 128+N when its keep-alive ends on signal N. 1 is an invalid config,
/// 100 nothing to run (no command and no `default_program`).
pub mod wrap {
    pub const CODES: &[u8] = &[
        super::NOT_OK,
        super::USAGE,
        super::SYSTEM,
        super::CANNOT_EXECUTE,
        super::NOT_FOUND,
    ];
}

/// `svkit-lifeline`: its own failures (only before the child is ready);
/// afterwards the child's code, 128+N if it died of signal N.
pub mod lifeline {
    /// `--which-port`: nothing listens on the port.
    pub const PORT_FREE: u8 = 1;
    /// The port is held by a process that is not provably a stale instance
    /// (or by a socket no visible process owns); nothing was killed.
    pub const PORT_HELD: u8 = 101;
    /// A stale instance was signalled but the port did not become free.
    pub const PORT_STILL_BUSY: u8 = 102;
    /// The child did not become ready before `--ready-timeout`; it was stopped.
    pub const READY_TIMEOUT: u8 = 103;
    /// The child exited before it became ready.
    pub const EXITED_BEFORE_READY: u8 = 104;
    /// The state file was refused (symlink, foreign owner, not a regular
    /// file, malformed JSON).
    pub const STATE_REFUSED: u8 = 105;
    pub const CODES: &[u8] = &[
        super::OK,
        PORT_FREE,
        super::USAGE,
        PORT_HELD,
        PORT_STILL_BUSY,
        READY_TIMEOUT,
        EXITED_BEFORE_READY,
        STATE_REFUSED,
        super::SYSTEM,
        super::CANNOT_EXECUTE,
        super::NOT_FOUND,
    ];
}
