//! The follower against a log dir rotated step by step the way s6-log does
//! it (rename, new `current`, processor, link, unlink, trim), looking
//! between any two of those steps.

use super::*;
use std::fs::{self, OpenOptions};

/// One step of a rotation.
type Stage = Box<dyn FnOnce(&Sim)>;

/// An s6-log stand-in: numbered lines, rotations in s6-log's order.
struct Sim {
    dir: tempfile::TempDir,
    line: usize,
    stamp: u64,
    keep: usize,
    processor: bool,
}

impl Sim {
    fn new(keep: usize, processor: bool) -> Sim {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("current"), "").expect("write");
        Sim {
            dir,
            line: 0,
            stamp: 0x4000_0000_6b0d_1053,
            keep,
            processor,
        }
    }

    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&mut self, n: usize) {
        let mut f = OpenOptions::new()
            .append(true)
            .open(self.p("current"))
            .expect("open");
        for _ in 0..n {
            writeln!(f, "{}", self.line).expect("write");
            self.line += 1;
        }
    }

    /// The steps of one rotation, in s6-log's order.
    fn rotation(&mut self) -> Vec<Stage> {
        self.stamp += 1;
        let archive = format!("@{:016x}00000000.s", self.stamp);
        let mut s: Vec<Stage> = vec![
            Box::new(|s| fs::rename(s.p("current"), s.p("previous")).expect("rename")),
            Box::new(|s| fs::write(s.p("current"), "").expect("create")),
        ];
        let last = if self.processor {
            s.push(Box::new(|s| {
                fs::copy(s.p("previous"), s.p("processed")).expect("process");
            }));
            s.push(Box::new(|s| {
                fs::remove_file(s.p("previous")).expect("unlink")
            }));
            "processed"
        } else {
            "previous"
        };
        let a = archive.clone();
        s.push(Box::new(move |s| {
            if fs::metadata(s.p(last)).expect("meta").len() > 0 {
                fs::hard_link(s.p(last), s.p(&a)).expect("link");
            }
        }));
        s.push(Box::new(move |s| {
            fs::remove_file(s.p(last)).expect("unlink")
        }));
        s.push(Box::new(|s| {
            let names = archive_names(s.dir.path(), None).expect("list");
            for n in &names[..names.len().saturating_sub(s.keep)] {
                fs::remove_file(s.p(n)).expect("trim");
            }
        }));
        s
    }
}

fn numbers(out: &[u8]) -> Vec<usize> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect()
}

/// A tiny deterministic generator: which steps the follower looks after.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Rotates `rotations` times with lines written before, during and after
/// each, the follower looking after each step with probability 1/`every`.
fn run(
    keep: usize,
    processor: bool,
    seed: u64,
    every: u64,
    rotations: usize,
) -> (Vec<u8>, bool, usize) {
    let mut sim = Sim::new(keep, processor);
    let (_, pos) = crate::logs::tail(sim.dir.path(), 0).expect("tail");
    let mut f = Follower::new(sim.dir.path(), pos);
    let mut out = Vec::new();
    let mut gap = false;
    let mut rng = Lcg(seed);
    for _ in 0..rotations {
        sim.write(1 + rng.next(5) as usize);
        for stage in sim.rotation() {
            stage(&sim);
            if rng.next(every) == 0 {
                gap |= f.step(&mut out).expect("step").gap;
            }
            if rng.next(3) == 0 {
                // s6-log writes into the new `current` only.
                if fs::metadata(sim.p("current")).is_ok() {
                    sim.write(1);
                }
            }
        }
    }
    sim.write(1);
    gap |= f.step(&mut out).expect("step").gap;
    (out, gap, sim.line)
}

#[test]
fn every_line_once_in_order_whenever_it_looks() {
    // With a processor, the follower has to see `processed` once to know
    // that archives are copies with inodes of their own: looking after
    // every step of a rotation (svkit itself never sets a processor).
    for (processor, everies) in [(false, &[1, 2, 4, 16][..]), (true, &[1][..])] {
        for seed in 0..40 {
            for &every in everies {
                let (out, gap, lines) = run(1000, processor, seed, every, 30);
                assert_eq!(
                    numbers(&out),
                    (0..lines).collect::<Vec<_>>(),
                    "processor={processor} seed={seed} every={every}"
                );
                assert!(!gap, "processor={processor} seed={seed} every={every}");
            }
        }
    }
}

#[test]
fn as_many_rotations_as_keep_between_looks_lose_nothing() {
    // The held file's archive is the oldest still kept: nothing after it
    // was deleted.
    let mut sim = Sim::new(3, false);
    let (_, pos) = crate::logs::tail(sim.dir.path(), 0).expect("tail");
    let mut f = Follower::new(sim.dir.path(), pos);
    let mut out = Vec::new();
    assert_eq!(f.step(&mut out).expect("step"), Step::default());
    for _ in 0..3 {
        sim.write(2);
        for stage in sim.rotation() {
            stage(&sim);
        }
    }
    sim.write(1);
    let s = f.step(&mut out).expect("step");
    assert!(!s.gap);
    assert_eq!(numbers(&out), (0..7).collect::<Vec<_>>());
}

#[test]
fn archives_deleted_unread_are_a_gap_and_the_rest_follows_in_order() {
    let mut sim = Sim::new(2, false);
    let (_, pos) = crate::logs::tail(sim.dir.path(), 0).expect("tail");
    let mut f = Follower::new(sim.dir.path(), pos);
    let mut out = Vec::new();
    sim.write(2);
    f.step(&mut out).expect("step");
    // Six rotations while the follower does not look: files 1..3 are
    // archived and deleted before it can read them.
    for _ in 0..6 {
        sim.write(2);
        for stage in sim.rotation() {
            stage(&sim);
        }
    }
    sim.write(1);
    let s = f.step(&mut out).expect("step");
    assert!(s.gap);
    // The two kept archives and `current`, once each, after the held file.
    let mut want: Vec<usize> = (0..4).collect();
    want.extend(10..15);
    assert_eq!(numbers(&out), want);
    // Nothing more is lost: no second report.
    sim.write(1);
    assert!(!f.step(&mut out).expect("step").gap);
}

#[test]
fn every_line_once_in_order_while_rotations_race_the_looks() {
    // s6-log links and unlinks `previous` right after it creates the new
    // `current`, when a follower woken by that creation is looking: the
    // look must not miss the file in between. (Without a processor: a
    // follower must see `processed` once to know archives are copies,
    // which racing looks may never do; svkit never sets one.)
    let sim = Sim::new(100_000, false);
    let dir = sim.dir.path().to_path_buf();
    let (_, pos) = crate::logs::tail(&dir, 0).expect("tail");
    let mut f = Follower::new(&dir, pos);
    let mut out = Vec::new();
    let done = std::sync::atomic::AtomicBool::new(false);
    let sim = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut sim = sim;
            for _ in 0..1000 {
                sim.write(2);
                for stage in sim.rotation() {
                    stage(&sim);
                }
            }
            sim.write(1);
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            sim
        });
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            f.step(&mut out).expect("step");
        }
        writer.join().expect("writer")
    });
    f.step(&mut out).expect("step");
    let got = numbers(&out);
    let at = got.iter().enumerate().position(|(i, &n)| n != i);
    let around = at.map(|i| &got[i.saturating_sub(2)..(i + 3).min(got.len())]);
    assert_eq!(at, None, "out of order or repeated: {around:?}");
    assert_eq!(got.len(), sim.line);
}
