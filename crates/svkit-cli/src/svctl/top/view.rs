//! How `svctl top` looks: a header, the slots' table, the selected slot's
//! log, a footer with the keys and what happened, and the help and
//! details overlays. Cells come from `svkit::slot::status_fmt`, the same
//! words as `svctl status`.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line as Text, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Row as TRow, Table, TableState, Wrap};
use ratatui::Frame;
use svkit::slot::status_fmt::{human_bytes, info, ready_cell, row_json, tone, updown, Tone};

use super::app::{App, Line, Mode};

/// What the header says of the container.
#[derive(Default)]
pub struct Host {
    pub uptime: Option<u64>,
    pub load: Option<String>,
    pub mem: Option<(u64, u64)>,
}

/// The keys, as the footer and `?` list them.
const KEYS: &str = "up/down j/k move  / filter  Enter log  s start  x stop  r restart  o sort  i details  ? help  q quit";

const HELP: &[(&str, &str)] = &[
    (
        "up, down, j, k",
        "move the selection (PgUp, PgDn, Home, End too)",
    ),
    ("/", "filter by name: type, Enter applies, Escape clears"),
    ("Escape", "clear the filter"),
    (
        "Enter",
        "open or close the selected slot's log, followed live",
    ),
    (
        "s, x, r",
        "start, stop, restart the selected slot (y confirms)",
    ),
    ("o", "sort by name, CPU, memory, deaths, state"),
    ("i", "the selected slot's details (svctl status --json)"),
    ("?", "this help"),
    ("q, Ctrl-C", "quit"),
];

fn tone_style(t: Tone, colour: bool) -> Style {
    if !colour {
        return Style::new();
    }
    match t {
        Tone::Good => Style::new().fg(Color::Green),
        Tone::Quiet => Style::new().add_modifier(Modifier::DIM),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Bad => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
    }
}

/// The mark column: what colour says, for NO_COLOR too.
fn mark(t: Tone) -> &'static str {
    match t {
        Tone::Bad => "!",
        Tone::Warn => "~",
        Tone::Good | Tone::Quiet => " ",
    }
}

pub fn draw(f: &mut Frame, app: &App, host: &Host, log: &[String], colour: bool) {
    let area = f.area();
    let log_h = if app.log_open {
        area.height.saturating_sub(6) / 2
    } else {
        0
    };
    let [head, table, pane, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(log_h),
        Constraint::Length(2),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(header(app, host)), head);
    draw_table(f, app, table, colour);
    if app.log_open {
        draw_log(f, app, log, pane);
    }
    let prompt = match &app.mode {
        Mode::Filter(typed) => format!("filter: {typed}_  (Enter applies, Escape clears)"),
        _ => app.said.clone(),
    };
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let footer = vec![Text::from(Span::styled(prompt, bold)), Text::from(KEYS)];
    f.render_widget(Paragraph::new(footer), foot);
    match app.mode {
        Mode::Help => {
            let keys = HELP
                .iter()
                .map(|(k, what)| Text::from(format!("{k:<16} {what}")));
            overlay(f, " svctl top: keys (any key closes) ", keys.collect());
        }
        Mode::Details => {
            let text = app.selected_line().map_or_else(
                || "no slot selected".to_string(),
                |l| {
                    let j = row_json(&l.row, SystemTime::now());
                    serde_json::to_string_pretty(&j).unwrap_or_default()
                },
            );
            let lines = text.lines().map(|l| Text::from(l.to_string()));
            overlay(f, " details (any key closes) ", lines.collect());
        }
        _ => {}
    }
}

fn header(app: &App, host: &Host) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for l in &app.lines {
        let s = l.row.state().as_str();
        match counts.iter_mut().find(|(n, _)| *n == s) {
            Some((_, c)) => *c += 1,
            None => counts.push((s, 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(s, c)| format!("{c} {s}")).collect();
    let mut h = format!("{} slots: {}", app.lines.len(), counts.join(", "));
    if let Some(u) = host.uptime {
        h.push_str(&format!("  up {}", svkit::slot::status_fmt::human_secs(u)));
    }
    if let Some(l) = &host.load {
        h.push_str(&format!("  load {l}"));
    }
    if let Some((used, total)) = host.mem {
        let (used, total) = (human_bytes(used), human_bytes(total));
        h.push_str(&format!("  mem {used}/{total}"));
    }
    h.push_str(&format!("  sort {}", app.sort.name()));
    if !app.filter.is_empty() {
        h.push_str(&format!("  filter \"{}\"", app.filter));
    }
    h
}

fn draw_table(f: &mut Frame, app: &App, area: Rect, colour: bool) {
    let now = SystemTime::now();
    let wide = area.width >= 120;
    let lines = app.visible();
    let name_w = lines
        .iter()
        .map(|l| l.row.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 32);
    // Heading, width, and whether only a wide terminal shows it.
    let columns = [
        ("", Constraint::Length(1), false),
        ("NAME", Constraint::Length(name_w as u16), false),
        ("STATE", Constraint::Length(12), false),
        ("READY", Constraint::Length(9), false),
        ("WANT", Constraint::Length(4), true),
        ("PID", Constraint::Length(7), true),
        ("DEATHS", Constraint::Length(6), true),
        ("CPU%", Constraint::Length(6), false),
        ("MEM", Constraint::Length(5), false),
        ("LOG", Constraint::Length(16), true),
        ("UPTIME/EXIT", Constraint::Fill(1), false),
    ];
    let (head, widths): (Vec<&str>, Vec<Constraint>) = (columns.into_iter())
        .filter(|c| wide || !c.2)
        .map(|(h, w, _)| (h, w))
        .unzip();
    let rows = lines.iter().map(|l| {
        cells(l, wide, now)
            .into_iter()
            .collect::<TRow>()
            .style(tone_style(tone(&l.row), colour))
    });
    let header = TRow::new(head).style(Style::new().add_modifier(Modifier::BOLD));
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(app.selected_index());
    f.render_stateful_widget(table, area, &mut state);
}

/// One row's cells, `wide` with every column.
fn cells(l: &Line, wide: bool, now: SystemTime) -> Vec<String> {
    let r = &l.row;
    let none = if r.unreadable.is_some() { "?" } else { "-" };
    let st = r.st.as_ref();
    let mut c = vec![
        mark(tone(r)).to_string(),
        r.name.clone(),
        r.state().as_str().to_string(),
        ready_cell(r, none).to_string(),
    ];
    let or = |v: Option<String>| v.unwrap_or_else(|| none.to_string());
    if wide {
        c.extend([
            or(st.map(|s| updown(s.want_up).to_string())),
            or(st.and_then(|s| s.pid).map(|p| p.to_string())),
            or(st.map(|_| r.v.deaths.to_string())),
        ]);
    }
    c.push(or(l.cpu.map(|p| format!("{p:.1}"))));
    c.push(or(r.usage.map(|u| human_bytes(u.rss_bytes))));
    let mut why = info(r, now);
    if wide {
        c.push(match &r.v.log {
            Some(f) => format!("! {}", f.words()),
            None if r.log_dir.is_some() => "ok".into(),
            None => "-".into(),
        });
    } else if let Some(f) = &r.v.log {
        why = format!("log {}: {why}", f.words());
    }
    c.push(why);
    c
}

fn draw_log(f: &mut Frame, app: &App, log: &[String], area: Rect) {
    let name = app.selected.as_deref().unwrap_or("-");
    let inner = area.height.saturating_sub(2) as usize;
    let from = log.len().saturating_sub(inner);
    let text: Vec<Text> = log[from..].iter().map(|l| Text::from(l.as_str())).collect();
    let block = Block::bordered().title(format!(" log: {name} "));
    f.render_widget(Paragraph::new(text).block(block), area);
}

fn overlay(f: &mut Frame, title: &str, text: Vec<Text>) {
    let a = f.area();
    let w = a.width.saturating_sub(4).min(90);
    let h = (text.len() as u16 + 2).min(a.height.saturating_sub(2));
    let r = Rect::new(
        a.x + (a.width - w) / 2,
        a.y + (a.height.saturating_sub(h)) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title.to_string())),
        r,
    );
}
