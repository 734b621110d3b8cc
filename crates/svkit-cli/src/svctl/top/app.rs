//! What `svctl top` shows and what a key does to it: pure state, no
//! terminal. The rows are `svkit::slot`'s (the same snapshot as `svctl
//! status`); this adds the selection, the order, the filter, the pane
//! open, and what the operator is asked.

use std::collections::HashMap;
use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use svkit::control::Op;
use svkit::slot::snapshot::{Row, Snapshot};
use svkit::slot::status_fmt::{tone, Tone};
use svkit::slot::usage::cpu_percent;

/// The orders `o` cycles through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sort {
    #[default]
    Name,
    Cpu,
    Mem,
    Deaths,
    State,
}

/// Each order and its name, in the cycle `o` goes through.
const SORTS: [(Sort, &str); 5] = [
    (Sort::Name, "name"),
    (Sort::Cpu, "CPU"),
    (Sort::Mem, "memory"),
    (Sort::Deaths, "deaths"),
    (Sort::State, "state"),
];

impl Sort {
    fn at(self) -> usize {
        SORTS.iter().position(|(s, _)| *s == self).unwrap_or(0)
    }

    pub fn name(self) -> &'static str {
        SORTS[self.at()].1
    }

    fn next(self) -> Sort {
        SORTS[(self.at() + 1) % SORTS.len()].0
    }
}

/// What the keys mean right now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a filter (applied on Enter).
    Filter(String),
    /// Asked: `y` does it, any other key does not.
    Confirm {
        op: Op,
        slot: String,
    },
    Help,
    Details,
}

/// What a key asks of the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
    Control(Op, String),
}

/// A row as shown: the snapshot's, and its CPU since the last refresh.
pub struct Line {
    pub row: Row,
    /// Percent of one CPU (None: first look, or not running).
    pub cpu: Option<f64>,
}

#[derive(Default)]
pub struct App {
    pub lines: Vec<Line>,
    pub sort: Sort,
    /// Applied: a part of the name, any case.
    pub filter: String,
    pub mode: Mode,
    /// Selected slot, by name (it keeps its place across refreshes and
    /// re-sorts).
    pub selected: Option<String>,
    pub log_open: bool,
    /// The status line: the outcome of the last action, or a hint.
    pub said: String,
    /// Earlier readings, for CPU percent: slot → (pid, CPU seconds, when).
    seen: HashMap<String, (Option<u32>, f64, Instant)>,
}

impl App {
    /// Takes a new snapshot (measured), read at `at`.
    pub fn update(&mut self, snap: Snapshot, at: Instant) {
        let mut seen = HashMap::new();
        self.lines = (snap.rows.into_iter())
            .map(|row| {
                let pid = row.st.as_ref().and_then(|s| s.pid);
                let cpu = row.usage.and_then(|u| {
                    seen.insert(row.name.clone(), (pid, u.cpu_seconds, at));
                    let (p0, c0, t0) = self.seen.get(&row.name)?;
                    let secs = at.duration_since(*t0).as_secs_f64();
                    (*p0 == pid)
                        .then(|| cpu_percent(*c0, u.cpu_seconds, secs))
                        .flatten()
                });
                Line { row, cpu }
            })
            .collect();
        self.seen = seen;
        if self.selected.is_none() {
            self.selected = self.visible().first().map(|l| l.row.name.clone());
        }
    }

    /// The rows shown, filtered and in order.
    pub fn visible(&self) -> Vec<&Line> {
        let f = self.filter.to_lowercase();
        let mut v: Vec<&Line> = (self.lines.iter())
            .filter(|l| l.row.name.to_lowercase().contains(&f))
            .collect();
        let rss = |l: &Line| l.row.usage.map_or(0, |u| u.rss_bytes);
        let severity = |l: &Line| match tone(&l.row) {
            Tone::Bad => 0,
            Tone::Warn => 1,
            Tone::Good => 2,
            Tone::Quiet => 3,
        };
        match self.sort {
            Sort::Name => {}
            Sort::Cpu => v.sort_by(|a, b| b.cpu.unwrap_or(0.0).total_cmp(&a.cpu.unwrap_or(0.0))),
            Sort::Mem => v.sort_by_key(|l| std::cmp::Reverse(rss(l))),
            Sort::Deaths => v.sort_by_key(|l| std::cmp::Reverse(l.row.v.deaths)),
            Sort::State => v.sort_by_key(|l| severity(l)),
        }
        v
    }

    /// Index of the selected row among the visible ones.
    pub fn selected_index(&self) -> Option<usize> {
        let v = self.visible();
        let name = self.selected.as_deref()?;
        v.iter().position(|l| l.row.name == name)
    }

    pub fn selected_line(&self) -> Option<&Line> {
        let name = self.selected.as_deref()?;
        self.lines.iter().find(|l| l.row.name == name)
    }

    fn step(&mut self, by: isize) {
        let v = self.visible();
        if v.is_empty() {
            return;
        }
        let at = self.selected_index().map_or(0, |i| {
            (i as isize + by).clamp(0, v.len() as isize - 1) as usize
        });
        self.selected = Some(v[at].row.name.clone());
    }

    /// What `key` does; `depends` names the slots that depend on one.
    pub fn key(&mut self, key: KeyEvent, depends: &dyn Fn(&str) -> Vec<String>) -> Effect {
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if ctrl_c {
            return Effect::Quit;
        }
        // A terminal sends Escape as one byte: followed at once by another
        // key (a quick hand, a slow link), both arrive as Alt+key. No key
        // here is bound with Alt: it is Escape, then the key.
        if key.modifiers.contains(KeyModifiers::ALT) {
            self.key(KeyEvent::from(KeyCode::Esc), depends);
            let plain = KeyEvent::new(key.code, key.modifiers - KeyModifiers::ALT);
            return self.key(plain, depends);
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Filter(mut typed) => {
                match key.code {
                    KeyCode::Enter => {
                        self.filter = typed;
                        self.selected = self.visible().first().map(|l| l.row.name.clone());
                    }
                    KeyCode::Esc => self.filter.clear(),
                    KeyCode::Backspace => {
                        typed.pop();
                        self.mode = Mode::Filter(typed);
                    }
                    KeyCode::Char(c) if !c.is_control() && typed.len() < 64 => {
                        typed.push(c);
                        self.mode = Mode::Filter(typed);
                    }
                    _ => self.mode = Mode::Filter(typed),
                }
                Effect::None
            }
            Mode::Confirm { op, slot } => {
                if key.code == KeyCode::Char('y') {
                    let doing = match op {
                        Op::Start => "starting",
                        Op::Stop => "stopping",
                        Op::Restart => "restarting",
                    };
                    self.said = format!("{doing} {slot}…");
                    return Effect::Control(op, slot);
                }
                self.said = format!("{} {slot}: cancelled", op.verb());
                Effect::None
            }
            Mode::Help | Mode::Details => Effect::None,
            Mode::Normal => self.normal(key, depends),
        }
    }

    fn normal(&mut self, key: KeyEvent, depends: &dyn Fn(&str) -> Vec<String>) -> Effect {
        let op = match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('s') => Op::Start,
            KeyCode::Char('x') => Op::Stop,
            KeyCode::Char('r') => Op::Restart,
            code => {
                match code {
                    KeyCode::Up | KeyCode::Char('k') => self.step(-1),
                    KeyCode::Down | KeyCode::Char('j') => self.step(1),
                    KeyCode::PageUp => self.step(-10),
                    KeyCode::PageDown => self.step(10),
                    KeyCode::Home => self.step(isize::MIN / 2),
                    KeyCode::End => self.step(isize::MAX / 2),
                    KeyCode::Char('/') => self.mode = Mode::Filter(String::new()),
                    KeyCode::Esc => self.filter.clear(),
                    KeyCode::Enter => self.log_open = !self.log_open,
                    KeyCode::Char('o') => self.sort = self.sort.next(),
                    KeyCode::Char('?') => self.mode = Mode::Help,
                    KeyCode::Char('i') => self.mode = Mode::Details,
                    _ => {}
                }
                return Effect::None;
            }
        };
        if let Some(slot) = self.selected.clone() {
            let deps = depends(&slot);
            let also = if deps.is_empty() {
                String::new()
            } else {
                let verb = if deps.len() == 1 { "depends" } else { "depend" };
                format!(" ({} {verb} on it)", deps.join(", "))
            };
            self.said = format!("{} {slot}{also}? y: yes, any other key: no", op.verb());
            self.mode = Mode::Confirm { op, slot };
        }
        Effect::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEvent;
    use svkit::slot::health::Verdict;

    fn app(names: &[&str]) -> App {
        let lines = (names.iter())
            .map(|n| Line {
                row: Row {
                    name: n.to_string(),
                    ours: true,
                    st: None,
                    v: Verdict::default(),
                    log_dir: None,
                    unreadable: None,
                    missing: false,
                    usage: None,
                    log_usage: None,
                },
                cpu: None,
            })
            .collect();
        let selected = Some(names[0].to_string());
        App {
            lines,
            selected,
            ..App::default()
        }
    }

    fn press(a: &mut App, code: KeyCode) -> Effect {
        a.key(KeyEvent::from(code), &|n| {
            if n == "db" {
                vec!["api".into()]
            } else {
                vec![]
            }
        })
    }

    fn chars(a: &mut App, s: &str) {
        for c in s.chars() {
            press(a, KeyCode::Char(c));
        }
    }

    #[test]
    fn moving_stops_at_both_ends() {
        let mut a = app(&["api", "db", "web"]);
        press(&mut a, KeyCode::Up);
        assert_eq!(a.selected.as_deref(), Some("api"));
        for _ in 0..5 {
            press(&mut a, KeyCode::Char('j'));
        }
        assert_eq!(a.selected.as_deref(), Some("web"));
        press(&mut a, KeyCode::Home);
        assert_eq!(a.selected.as_deref(), Some("api"));
    }

    #[test]
    fn a_filter_applies_on_enter_and_escape_clears_it() {
        let mut a = app(&["api", "db", "web"]);
        chars(&mut a, "/WE");
        assert_eq!(a.mode, Mode::Filter("WE".into()));
        assert_eq!(a.visible().len(), 3, "not applied while typed");
        press(&mut a, KeyCode::Enter);
        assert_eq!(a.filter, "WE");
        let shown: Vec<&str> = a.visible().iter().map(|l| l.row.name.as_str()).collect();
        assert_eq!(shown, ["web"], "any case");
        assert_eq!(
            a.selected.as_deref(),
            Some("web"),
            "moved to the first match"
        );
        // A new filter starts empty; a control character is not typed.
        chars(&mut a, "/d");
        press(&mut a, KeyCode::Char('\u{1b}'));
        press(&mut a, KeyCode::Enter);
        assert_eq!(a.filter, "d");
        press(&mut a, KeyCode::Esc);
        assert_eq!((a.filter.as_str(), a.visible().len()), ("", 3));
        // Escape and `?` read as one Alt+? clear the filter, then help.
        chars(&mut a, "/d");
        press(&mut a, KeyCode::Enter);
        let alt = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::ALT);
        assert_eq!(a.key(alt, &|_| Vec::new()), Effect::None);
        assert_eq!((a.filter.as_str(), &a.mode), ("", &Mode::Help));
    }

    #[test]
    fn an_action_is_asked_first_and_only_y_does_it() {
        let mut a = app(&["api", "db"]);
        press(&mut a, KeyCode::Down);
        assert_eq!(press(&mut a, KeyCode::Char('x')), Effect::None);
        assert_eq!(
            a.said,
            "stop db (api depends on it)? y: yes, any other key: no"
        );
        assert_eq!(press(&mut a, KeyCode::Char('Y')), Effect::None);
        assert_eq!(a.said, "stop db: cancelled");
        press(&mut a, KeyCode::Char('r'));
        assert_eq!(
            press(&mut a, KeyCode::Char('y')),
            Effect::Control(Op::Restart, "db".into())
        );
        assert_eq!(a.mode, Mode::Normal);
    }

    #[test]
    fn q_and_ctrl_c_quit_but_not_while_typing_a_filter() {
        let mut a = app(&["api"]);
        assert_eq!(press(&mut a, KeyCode::Char('q')), Effect::Quit);
        chars(&mut a, "/");
        assert_eq!(press(&mut a, KeyCode::Char('q')), Effect::None);
        assert_eq!(a.mode, Mode::Filter("q".into()));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(a.key(ctrl_c, &|_| vec![]), Effect::Quit);
    }

    #[test]
    fn o_cycles_every_order_and_help_closes_on_any_key() {
        let mut a = app(&["api"]);
        let mut seen = vec![a.sort];
        for _ in 0..5 {
            press(&mut a, KeyCode::Char('o'));
            seen.push(a.sort);
        }
        assert_eq!(seen.first(), seen.last());
        assert_eq!(seen.len(), 6);
        press(&mut a, KeyCode::Char('?'));
        assert_eq!(a.mode, Mode::Help);
        assert_eq!(
            press(&mut a, KeyCode::Char('q')),
            Effect::None,
            "closes help only"
        );
        assert_eq!(a.mode, Mode::Normal);
    }
}
