//! `svctl top`: `svctl status` live, in the terminal, with keys to act.
//! Each refresh takes the library's snapshot of the slots (one status
//! read each) and one reading of `/proc`; actions go through the same
//! control code as `svctl start|stop|restart`, off the screen's thread so
//! that a slow stop never freezes the view. The terminal is restored
//! however it ends: `q`, Ctrl-C, SIGTERM, SIGHUP (the `docker exec`
//! session gone), SIGINT, a panic.

mod app;
mod view;

use std::collections::VecDeque;
use std::io::{self, IsTerminal as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{cursor, execute};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use svkit::control::{self, Op, Request, Waited};
use svkit::logs::{tail, Follower};
use svkit::msg::exit::OK;
use svkit::msg::Fatal;

use super::verbs::ctx::Ctx;
use crate::svctl::args::TopArgs;
use app::{App, Effect};
use view::Host;

/// How long an action from the view waits for its outcome.
const ACTION_WAIT: Duration = Duration::from_secs(10);

/// How often keys and signals are looked at between refreshes.
const TICK: Duration = Duration::from_millis(200);

/// Lines of the log pane kept in memory.
const LOG_KEEP: usize = 1000;

pub fn run(args: &TopArgs) -> Result<u8, Fatal> {
    let no_tty = !io::stdout().is_terminal() || !io::stdin().is_terminal();
    if no_tty || std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        let why = if no_tty {
            "not a terminal"
        } else {
            "TERM=dumb cannot draw it"
        };
        let why = format!("{why} (svctl status prints the same table once)");
        return Err(Fatal::usage("unable to show top", why));
    }
    let ctx = Ctx::load(&args.at)?;
    ctx.resolve(&args.slots, false)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGTERM, SIGHUP, SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| Fatal::io("unable to catch signals", &e))?;
    }
    // On a terminal (checked above): NO_COLOR alone decides.
    let colour = super::verbs::status::want_colour();
    // Sets raw mode and the alternate screen, and a panic hook that
    // restores them before the panic is reported.
    let mut term = ratatui::try_init().map_err(|e| {
        // Raw mode may be on already when the alternate screen fails.
        ratatui::restore();
        Fatal::io("unable to set up the terminal", &e)
    })?;
    let result = std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<String>();
        let mut app = App::default();
        let mut pane = Pane::default();
        let mut next = Instant::now();
        let mut dirty = true;
        let mut host = Host::default();
        while !stop.load(Ordering::Relaxed) {
            if Instant::now() >= next {
                let mut snap = ctx.slots().snapshot(&args.slots, args.all)?;
                snap.measure();
                app.update(snap, Instant::now());
                host = host_facts();
                pane.follow(&ctx, &app);
                next = Instant::now() + args.interval;
                dirty = true;
            }
            while let Ok(said) = rx.try_recv() {
                app.said = said;
                dirty = true;
            }
            if dirty {
                term.draw(|f| view::draw(f, &app, &host, pane.lines.make_contiguous(), colour))
                    .map_err(|e| Fatal::io("unable to draw", &e))?;
                dirty = false;
            }
            let wait = next.saturating_duration_since(Instant::now()).min(TICK);
            if !event::poll(wait).map_err(|e| Fatal::io("unable to read the terminal", &e))? {
                continue;
            }
            dirty = true;
            let ev = event::read().map_err(|e| Fatal::io("unable to read the terminal", &e))?;
            let Event::Key(key) = ev else {
                continue; // a resize: drawn again
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            let depends = |name: &str| dependents(&ctx, name);
            match app.key(key, &depends) {
                Effect::None => {}
                Effect::Quit => break,
                Effect::Control(op, slot) => {
                    let (tx, ctx) = (tx.clone(), &ctx);
                    s.spawn(move || {
                        let _ = tx.send(act(ctx, op, &slot));
                    });
                }
            }
            // The pane follows the selection at once, not at the next refresh.
            if pane.slot.as_deref() != app.selected.as_deref().filter(|_| app.log_open) {
                pane.follow(&ctx, &app);
            }
        }
        Ok(OK)
    });
    ratatui::restore();
    let _ = execute!(io::stdout(), cursor::Show);
    result
}

/// The slots whose `depends_on` names `name`.
fn dependents(ctx: &Ctx, name: &str) -> Vec<String> {
    (ctx.model.iter().flat_map(|m| &m.slots))
        .filter(|s| s.depends_on.iter().any(|d| d.on == name))
        .map(|s| s.name.clone())
        .collect()
}

/// Carries out `op` on `slot` as the verb does; what came of it, in a line.
fn act(ctx: &Ctx, op: Op, slot: &str) -> String {
    let req = Request {
        op,
        all: false,
        wait: true,
        timeout: ACTION_WAIT,
    };
    let done = match op {
        Op::Start => "started",
        Op::Stop => "stopped",
        Op::Restart => "restarted",
    };
    match control::run(&ctx.slots(), &[slot.to_string()], &req) {
        Ok(Waited::Met) => format!("{slot}: {done}"),
        Ok(other) => other.lines().join("; "),
        Err(e) => format!("unable to {} {slot}: {e}", op.verb()),
    }
}

/// The log pane: the selected slot's log, followed across rotations.
#[derive(Default)]
struct Pane {
    slot: Option<String>,
    follower: Option<Follower>,
    lines: VecDeque<String>,
}

impl Pane {
    /// Brings the pane up to date with the selection and the log.
    fn follow(&mut self, ctx: &Ctx, app: &App) {
        let want = app.selected.clone().filter(|_| app.log_open);
        if want != self.slot {
            *self = Pane {
                slot: want.clone(),
                ..Pane::default()
            };
            let Some(name) = want else { return };
            let Some(dir) = svkit::logs::dir_of(&ctx.slots(), &name) else {
                self.push(b"(no log dir: its output goes to docker logs)\n");
                return;
            };
            match tail(&dir, LOG_KEEP) {
                Ok((head, pos)) => {
                    self.push(&head);
                    self.follower = Some(Follower::new(&dir, pos));
                }
                Err(e) => {
                    let why = svkit::msg::strerror(&e);
                    self.push(format!("(unable to read {}: {why})\n", dir.display()).as_bytes())
                }
            }
        }
        let mut new = Vec::new();
        if let Some(f) = self.follower.as_mut() {
            if let Err(e) = f.step(&mut new) {
                let why = svkit::msg::strerror(&e);
                new.extend_from_slice(format!("(unable to follow the log: {why})\n").as_bytes());
            }
        }
        self.push(&new);
    }

    fn push(&mut self, bytes: &[u8]) {
        for l in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            // Escaped: a log line must not drive the terminal.
            self.lines.push_back(svkit::msg::bytes(l));
        }
        while self.lines.len() > LOG_KEEP {
            self.lines.pop_front();
        }
    }
}

/// The container's uptime (its PID 1's), load and memory, for the header.
fn host_facts() -> Host {
    let uptime = (|| {
        let up: f64 = std::fs::read_to_string("/proc/uptime")
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let init = svkit::lifeline::identity::read_stat(1).ok()??;
        let ticks = svkit::slot::usage::ticks_per_second();
        Some((up - init.start_time as f64 / ticks).max(0.0) as u64)
    })();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let mem = (|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kb = |key: &str| -> Option<u64> {
            let l = info.lines().find(|l| l.starts_with(key))?;
            l.split_whitespace().nth(1)?.parse().ok()
        };
        let (total, avail) = (kb("MemTotal:")?, kb("MemAvailable:")?);
        Some((total.saturating_sub(avail) * 1024, total * 1024))
    })();
    Host { uptime, load, mem }
}
