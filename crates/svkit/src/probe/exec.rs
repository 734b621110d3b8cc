//! An `exec` probe: the command passes by exiting 0 within the timeout.

use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `argv` with its output discarded; passes on exit 0 within `timeout`,
/// else it is killed.
pub(super) fn run(argv: &[String], timeout: Duration) -> Result<(), String> {
    let Some((prog, args)) = argv.split_first() else {
        return Err("empty command".into());
    };
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    let fd = crate::sys::pidfd_open(i32::try_from(child.id()).unwrap_or(0))
        .map_err(|e| format!("pidfd: {e}"))?;
    let done = crate::sys::pidfd_wait(&fd, timeout).map_err(|e| e.to_string())?;
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("timed out after {} ms", timeout.as_millis()));
    }
    match child.wait() {
        Ok(s) if s.success() => Ok(()),
        // "exited 1", not ExitStatus's own "exited exit status: 1".
        Ok(s) => Err(
            match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => format!("exited {c}"),
                (None, Some(n)) => format!("killed by signal {n}"),
                (None, None) => format!("ended: {s}"),
            },
        ),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_passes_fails_and_times_out() {
        let argv = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(run(&argv(&["true"]), Duration::from_secs(5)), Ok(()));
        assert_eq!(
            run(&argv(&["false"]), Duration::from_secs(5)),
            Err("exited 1".into())
        );
        let e = run(&argv(&["sleep", "5"]), Duration::from_millis(50)).unwrap_err();
        assert_eq!(e, "timed out after 50 ms");
        assert!(run(&argv(&["/nonexistent"]), Duration::from_secs(1)).is_err());
    }
}
