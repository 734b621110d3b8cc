//! Splitting independent work across the CPUs.
//!
//! Walking `/proc` or stat'ing every file of hundreds of slots is system
//! calls, and on a VM a system call costs microseconds: spread over the
//! CPUs, the wall time divides. Results come back in input order.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Workers at most, whatever the machine says (the caller works beside
/// them): past a few, the kernel's own locks, not the CPUs, set the pace.
const MAX_WORKERS: usize = 8;

/// How many threads to start for `len` items when a thread is only worth
/// starting for at least `min_per_worker` of them: one a CPU, at least
/// one. `map_chunks` runs inline when this is one, and otherwise starts
/// this many beside the caller.
fn workers(len: usize, min_per_worker: usize) -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_WORKERS);
    cpus.min(len / min_per_worker.max(1)).max(1)
}

/// `f` over `items`, in contiguous chunks on scoped threads; one result per
/// chunk, in order. Runs inline when one worker is enough.
///
/// The calling thread and one thread per worker claim chunks as they get
/// free, several chunks a thread: a thread the scheduler starts beside its
/// parent can share that CPU for a while, and with a fixed share each the
/// whole run would wait for it (measured on the no-op apply's stat walk:
/// a quarter of runs took half as long again).
pub fn map_chunks<T, R, F>(items: &[T], min_per_worker: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&[T]) -> R + Sync,
{
    let n = workers(items.len(), min_per_worker);
    if n <= 1 {
        return vec![f(items)];
    }
    let claims = Claims::new(items.len(), items.len().div_ceil(n * CLAIMS_PER_WORKER));
    let run = || {
        let mut out = Vec::new();
        while let Some(r) = claims.next() {
            let start = r.start;
            if let Some(chunk) = items.get(r) {
                out.push((start, f(chunk)));
            }
        }
        out
    };
    let mut parts: Vec<(usize, R)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n).map(|_| sc.spawn(run)).collect();
        let mut parts = run();
        // A worker that panicked is a bug; its claims are lost, so the
        // answer would be partial: better to fail loudly here.
        for h in handles {
            match h.join() {
                Ok(p) => parts.extend(p),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        parts
    });
    parts.sort_unstable_by_key(|(start, _)| *start);
    parts.into_iter().map(|(_, r)| r).collect()
}

/// Chunks a worker claims, one after the other, over a run.
const CLAIMS_PER_WORKER: usize = 4;

/// As [`map_chunks`], one result per item.
pub fn map<T, R, F>(items: &[T], min_per_worker: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    map_chunks(items, min_per_worker, |c| {
        c.iter().map(&f).collect::<Vec<R>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Work handed out in ranges to whichever thread asks next, so threads
/// that started late or had other work first still finish together.
#[derive(Debug)]
struct Claims {
    len: usize,
    step: usize,
    next: AtomicUsize,
}

impl Claims {
    fn new(len: usize, step: usize) -> Claims {
        Claims {
            len,
            step: step.max(1),
            next: AtomicUsize::new(0),
        }
    }

    /// The next unclaimed range, or `None` when all are claimed.
    #[allow(clippy::should_implement_trait)] // shared by threads: not an Iterator
    fn next(&self) -> Option<Range<usize>> {
        let start = self.next.fetch_add(self.step, Ordering::Relaxed);
        (start < self.len).then(|| start..(start + self.step).min(self.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_covers_everything() {
        let items: Vec<u32> = (0..1000).collect();
        let out = map(&items, 10, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(map(&[] as &[u32], 10, |x| *x), Vec::<u32>::new());
        assert_eq!(map(&[7u32], 10, |x| *x + 1), vec![8]);
    }

    #[test]
    fn claims_cover_everything_once_across_threads() {
        let claims = Claims::new(1000, 7);
        let taken: Vec<Vec<usize>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    sc.spawn(|| {
                        let mut mine = Vec::new();
                        while let Some(r) = claims.next() {
                            mine.extend(r);
                        }
                        mine
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("no panic"))
                .collect()
        });
        let mut all: Vec<usize> = taken.into_iter().flatten().collect();
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn claims_of_nothing_and_a_zero_step() {
        assert_eq!(Claims::new(0, 10).next(), None);
        assert_eq!(Claims::new(5, 0).next(), Some(0..1), "a zero step is one");
    }

    #[test]
    fn small_inputs_stay_on_one_worker() {
        assert_eq!(workers(5, 100), 1);
        assert_eq!(workers(0, 0), 1);
        assert!(workers(10_000, 1) >= 1);
    }
}
