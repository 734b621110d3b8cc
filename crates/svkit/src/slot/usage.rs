//! What a slot costs: the CPU time, resident memory, processes and threads
//! of its program's whole tree (the program and every descendant, found
//! from `/proc` by parent pid), and the same for its logger. One reading
//! of `/proc` serves every slot of a view ([`Table::now`]). A process that
//! ends between two reads is simply not counted.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::lifeline::identity::{processes, with_descendants, Stat};

/// One process tree's usage at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Usage {
    /// User plus system CPU time, including the children it waited for:
    /// a counter for as long as the program runs.
    pub cpu_seconds: f64,
    pub rss_bytes: u64,
    pub processes: u64,
    pub threads: u64,
}

/// The processes of the machine (of the container's PID namespace) at one
/// moment, and the units to read them in.
pub struct Table {
    procs: Vec<Stat>,
    ticks_per_s: f64,
    page_bytes: u64,
}

impl Table {
    /// Reads `/proc` once.
    pub fn now() -> Table {
        Table {
            procs: processes(),
            ticks_per_s: ticks_per_second(),
            page_bytes: rustix::param::page_size() as u64,
        }
    }

    /// The tree under `pid` (itself included); `None` when it is gone.
    pub fn tree(&self, pid: u32) -> Option<Usage> {
        let pid = i32::try_from(pid).ok()?;
        if !self.procs.iter().any(|p| p.pid == pid) {
            return None;
        }
        let set = with_descendants(&self.procs, BTreeSet::from([pid]));
        let mut u = Usage::default();
        for p in self.procs.iter().filter(|p| set.contains(&p.pid)) {
            u.cpu_seconds += p.cpu_ticks as f64 / self.ticks_per_s;
            u.rss_bytes += p.rss_pages * self.page_bytes;
            u.processes += 1;
            u.threads += p.threads;
        }
        Some(u)
    }
}

/// The unit of CPU times and start times in `/proc`.
pub fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second().max(1) as f64
}

/// Percent of one CPU used between two readings of the same program's
/// CPU seconds `secs` apart (`None` when it restarted in between: its
/// counter went back).
pub fn cpu_percent(before: f64, after: f64, secs: f64) -> Option<f64> {
    let used = after - before;
    (secs > 0.0 && used >= 0.0).then(|| used / secs * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, ticks: u64, pages: u64) -> Stat {
        Stat {
            pid,
            comm: "x".into(),
            state: 'S',
            ppid,
            pgrp: pid,
            session: pid,
            start_time: 1,
            cpu_ticks: ticks,
            threads: 2,
            rss_pages: pages,
        }
    }

    #[test]
    fn a_tree_adds_up_its_descendants_only() {
        let t = Table {
            procs: vec![
                p(10, 1, 100, 1),
                p(11, 10, 50, 2),
                p(12, 11, 50, 3),
                p(20, 1, 999, 9),
            ],
            ticks_per_s: 100.0,
            page_bytes: 4096,
        };
        let u = t.tree(10).unwrap_or_default();
        assert_eq!(u.cpu_seconds, 2.0);
        assert_eq!(u.rss_bytes, 6 * 4096);
        assert_eq!((u.processes, u.threads), (3, 6));
        assert_eq!(t.tree(12).map(|u| u.processes), Some(1));
        assert_eq!(t.tree(99), None);
    }

    #[test]
    fn cpu_percent_of_one_cpu() {
        assert_eq!(cpu_percent(1.0, 1.5, 1.0), Some(50.0));
        assert_eq!(cpu_percent(1.5, 1.0, 1.0), None);
        assert_eq!(cpu_percent(1.0, 1.5, 0.0), None);
    }
}
