//! `svctl top` in a real terminal: tmux runs it against the sandbox's
//! real /init, the test reads the screen (`capture-pane`) and presses keys
//! (`send-keys`), then checks the terminal is back to normal however the
//! view ended: `q`, SIGTERM, SIGHUP.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::process::{Command, Output};
use std::time::Duration;

use svctl_common::*;
use svkit_testkit::skip;

/// Up (`web`, which echoes what /tmp/webin gets, and `victim`), failed
/// (`bad`), waiting (`waiter`, on `gate`, which never starts), stopped
/// (`gate`), and a logger at fault (`lost`: its log dir is removed).
const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "web", "autostart": "always", "log": { "dir": "/data/logs/web" },
      "command": ["sh", "-c", "mkfifo /tmp/webin; echo web-started; while :; do read l < /tmp/webin && echo \"$l\"; done"] },
    { "name": "victim", "autostart": "always", "command": ["sleep", "100000"] },
    { "name": "bad", "autostart": "always", "command": ["sh", "-c", "exit 78"] },
    { "name": "gate", "autostart": "never", "command": ["sleep", "100000"] },
    { "name": "waiter", "autostart": "always", "depends_on": { "gate": "up" },
      "command": ["sleep", "100000"] },
    { "name": "lost", "autostart": "always", "log": { "dir": "/data/logs/lost" },
      "command": ["sleep", "100000"] }
  ]
}"#;

/// A tmux server of the test's own, killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(name: &str) -> Tmux {
        Tmux {
            socket: format!("svkit-top-{name}-{}", std::process::id()),
        }
    }

    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux")
    }

    /// A session `name` of `w`×`h` running `line`, then a shell's report
    /// of how the terminal was left, then idling.
    fn open(&self, name: &str, w: u16, h: u16, line: &str) {
        let script = format!(
            "{line}; echo \"top-exit=$?\"; echo \"stty: $(stty -a | tr '\\n' ' ')\"; exec sleep 100000"
        );
        let o = self.cmd(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            "sh",
            "-c",
            &script,
        ]);
        assert!(
            o.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    fn screen(&self, name: &str) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", name]).stdout).into_owned()
    }

    fn keys(&self, name: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", name];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    /// Polls the screen until `f` finds what it wants on it.
    fn wait<T>(&self, name: &str, what: &str, f: impl Fn(&str) -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen(name);
            if let Some(t) = f(&s) {
                return t;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out after 15s waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, name: &str, needle: &str) -> String {
        self.wait(name, &format!("{needle:?} on screen"), |s| {
            s.contains(needle).then(|| s.to_string())
        })
    }

    /// `alternate_on` and `cursor_flag` of the pane.
    fn modes(&self, name: &str) -> String {
        let o = self.cmd(&[
            "display-message",
            "-p",
            "-t",
            name,
            "#{alternate_on} #{cursor_flag}",
        ]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// The host pid of the `svctl` process under the pane.
    fn top_pid(&self, name: &str) -> i32 {
        let o = self.cmd(&["display-message", "-p", "-t", name, "#{pane_pid}"]);
        let pane: i32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        poll("svctl top under the pane", Duration::from_secs(10), || {
            let mut set = vec![pane];
            let procs: Vec<(i32, i32, String)> = std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| {
                    let pid: i32 = e.file_name().to_str()?.parse().ok()?;
                    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                    let (head, rest) = stat.rsplit_once(')')?;
                    let comm = head.split_once('(')?.1.to_string();
                    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
                    Some((pid, ppid, comm))
                })
                .collect();
            for _ in 0..8 {
                for (pid, ppid, _) in &procs {
                    if set.contains(ppid) && !set.contains(pid) {
                        set.push(*pid);
                    }
                }
            }
            procs
                .iter()
                .find(|(p, _, c)| set.contains(p) && c == "svctl")
                .map(|(p, _, _)| *p)
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The terminal after the view ended: its exit code on screen, echo and
/// canonical mode on, main screen, cursor shown.
fn assert_restored(t: &Tmux, name: &str, code: i32) {
    let s = t.wait_for(name, "stty: ");
    assert!(s.contains(&format!("top-exit={code}")), "{s}");
    let stty = s
        .split("stty: ")
        .nth(1)
        .unwrap_or_default()
        .replace('\n', "");
    for on in [" echo ", " icanon ", " isig "] {
        assert!(stty.contains(on), "{on} off after top ended: {stty}");
    }
    assert_eq!(t.modes(name), "0 1", "alternate screen, cursor: {s}");
}

fn tmux_or_skip(test: &str) -> bool {
    if Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    skip(test, "tmux missing (make deps installs it)");
    false
}

/// The screen's row of `slot` (the table's line that starts with it).
fn row<'a>(screen: &'a str, slot: &str) -> Option<&'a str> {
    screen.lines().find(|l| {
        l.get(2..)
            .is_some_and(|r| r.starts_with(&format!("{slot} ")))
    })
}

#[test]
fn top_shows_every_state_acts_follows_logs_and_restores_the_terminal() {
    let test = "top_shows_every_state_acts_follows_logs_and_restores_the_terminal";
    if !sandbox_or_skip(test) || !tmux_or_skip(test) {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["web", "victim", "bad", "gate", "waiter", "lost"]);
    wait_field(&sbx, "bad", "wantedup", "false");
    expect_code(&sbx.sh("rm -rf /data/logs/lost"), 0);
    let t = Tmux::new("main");
    let top = sbx.exec_line(
        &["TERM=xterm-256color"],
        &["svctl", "top", "--interval", "1s"],
    );
    t.open("v", 160, 40, &top);

    // Every state, with why.
    let s = t.wait("v", "every slot shown", |s| {
        ["web", "victim", "bad", "gate", "waiter", "lost"]
            .iter()
            .all(|n| row(s, n).is_some())
            .then(|| s.to_string())
    });
    let has = |slot: &str, words: &[&str]| {
        let s = t.wait("v", &format!("{slot} shows {words:?}"), |s| {
            let r = row(s, slot)?;
            words.iter().all(|w| r.contains(w)).then(|| r.to_string())
        });
        s
    };
    has("bad", &["!", "failed", "exit 78", "a permanent exit code"]);
    has("waiter", &["waiting", "waiting for gate (up)"]);
    has("gate", &["down"]);
    has("lost", &["!", "dir gone"]);
    has("web", &["up", "ok"]);
    assert!(
        s.lines().next().unwrap_or_default().contains("6 slots"),
        "{s}"
    );

    // The log pane follows a line printed after it opened.
    t.keys("v", &["/", "w", "e", "b", "Enter"]);
    t.wait_for("v", "filter \"web\"");
    t.keys("v", &["Enter"]);
    t.wait_for("v", "log: web");
    t.wait_for("v", "web-started");
    expect_code(&sbx.sh("echo line-after-open > /tmp/webin"), 0);
    t.wait_for("v", "line-after-open");
    t.keys("v", &["Enter", "Escape"]);

    // A crash shows within 2 refreshes: a death, and a new pid.
    let pid = svstat(&sbx, "victim", "pid");
    expect_code(&sbx.sh(&format!("kill -KILL {pid}")), 0);
    let killed = std::time::Instant::now();
    has("victim", &["up"]);
    t.wait("v", "victim's death counted", |s| {
        let cells: Vec<&str> = row(s, "victim")?.split_whitespace().collect();
        // mark-less row: NAME STATE READY WANT PID DEATHS ...
        (cells.get(5) == Some(&"1")).then_some(())
    });
    assert!(
        killed.elapsed() < Duration::from_secs(4),
        "{:?}",
        killed.elapsed()
    );

    // Asked first, naming what depends on the slot; Escape cancels.
    t.keys("v", &["/", "g", "a", "t", "e", "Enter"]);
    t.wait_for("v", "filter \"gate\"");
    t.keys("v", &["s"]);
    t.wait_for("v", "start gate (waiter depends on it)? y: yes");
    t.keys("v", &["Escape"]);
    t.wait_for("v", "start gate: cancelled");
    assert_eq!(
        svstat(&sbx, "gate", "up"),
        "false",
        "Escape must not start it"
    );

    // `x` then `y` stops the selected slot, as svctl stop does.
    t.keys("v", &["/", "v", "i", "c", "Enter"]);
    t.wait_for("v", "filter \"vic\"");
    t.keys("v", &["x"]);
    t.wait_for("v", "stop victim? y: yes");
    t.keys("v", &["n"]);
    t.wait_for("v", "stop victim: cancelled");
    assert_eq!(svstat(&sbx, "victim", "up"), "true", "n must not stop it");
    t.keys("v", &["x"]);
    t.wait_for("v", "stop victim? y: yes");
    t.keys("v", &["y"]);
    t.wait_for("v", "victim: stopped");
    let (_, doc) = status_json(&sbx, &["victim"]);
    assert_eq!(slot_json(&doc, "victim")["state"], "down", "{doc}");
    t.keys("v", &["Escape"]);
    t.wait("v", "the filter cleared", |s| row(s, "bad").map(|_| ()));

    // Help, then a terminal of 80x24: still every slot, and its state.
    t.keys("v", &["?"]);
    t.wait_for("v", "svctl top: keys");
    t.keys("v", &["Space"]);
    t.cmd(&["resize-window", "-t", "v", "-x", "80", "-y", "24"]);
    // Drawn again by the view itself (its narrow layout, without WANT)
    // before the next key.
    t.wait("v", "the view at 80 columns", |s| {
        let narrow =
            (s.lines()).any(|l| l.contains("NAME") && l.contains("CPU%") && !l.contains("WANT"));
        let fits = s.lines().all(|l| l.chars().count() <= 80);
        (narrow && fits && row(s, "bad").is_some_and(|r| r.contains("failed"))).then_some(())
    });

    // q: the terminal is back as it was.
    t.keys("v", &["q"]);
    assert_restored(&t, "v", 0);

    // SIGTERM and SIGHUP end it too, as cleanly.
    for (name, sig) in [("term", "TERM"), ("hup", "HUP")] {
        t.open(name, 100, 30, &top);
        t.wait_for(name, "victim");
        let pid = t.top_pid(name);
        let o = Command::new("kill")
            .args([&format!("-{sig}"), &pid.to_string()])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_restored(&t, name, 0);
    }

    // A terminal that cannot draw it: one line, exit 100, nothing changed.
    let dumb = sbx.exec_line(&["TERM=dumb"], &["svctl", "top"]);
    t.open("dumb", 120, 30, &dumb);
    let s = t.wait_for("dumb", "stty: ");
    assert!(
        s.contains("svctl: fatal: unable to show top: TERM=dumb cannot draw it"),
        "{s}"
    );
    assert_restored(&t, "dumb", 100);
    sbx.stop();
}

#[test]
fn top_refuses_a_pipe_and_a_dumb_terminal() {
    if !sandbox_or_skip("top_refuses_a_pipe_and_a_dumb_terminal") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    let o = sbx.exec(&["svctl", "top"]);
    expect_code(&o, 100);
    assert_eq!(stdout(&o), "");
    assert_eq!(
        err(&o),
        "svctl: fatal: unable to show top: not a terminal (svctl status prints the same table once)\n"
    );
    let o = sbx.exec(&["svctl", "top", "--interval", "0"]);
    expect_code(&o, 100);
    sbx.stop();
}
