//! Splitting independent work across the CPUs.
//!
//! Walking `/proc` or stat'ing every file of hundreds of slots is system
//! calls, and on a VM a system call costs microseconds: spread over the
//! CPUs, the wall time divides. Results come back in input order.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Workers at most, whatever the machine says: past a few, the kernel's
/// own locks, not the CPUs, set the pace.
const MAX_WORKERS: usize = 8;

/// How many workers `map_chunks` uses for `len` items when a worker is only
/// worth starting for at least `min_per_worker` of them.
pub fn workers(len: usize, min_per_worker: usize) -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_WORKERS);
    cpus.min(len / min_per_worker.max(1)).max(1)
}

/// `f` over `items`, in contiguous chunks on scoped threads; one result per
/// chunk, in order. Runs inline when one worker is enough.
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
    let chunk = items.len().div_ceil(n);
    let (first, rest) = items.split_at(chunk.min(items.len()));
    std::thread::scope(|sc| {
        let f = &f;
        let handles: Vec<_> = rest
            .chunks(chunk)
            .map(|c| (c, sc.spawn(move || f(c))))
            .collect();
        // The calling thread takes the first share itself.
        let mut out = Vec::with_capacity(n);
        out.push(f(first));
        // A worker that panicked is a bug; redoing its share here keeps the
        // answer whole instead of silently partial.
        out.extend(
            handles
                .into_iter()
                .map(|(c, h)| h.join().unwrap_or_else(|_| f(c))),
        );
        out
    })
}

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
/// that started late or had other work first still finish together; and
/// stopped for all at once when one of them finds the answer.
#[derive(Debug)]
pub struct Claims {
    len: usize,
    step: usize,
    next: AtomicUsize,
    stopped: AtomicBool,
}

impl Claims {
    pub fn new(len: usize, step: usize) -> Claims {
        Claims {
            len,
            step: step.max(1),
            next: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// The next unclaimed range, or `None` when all are claimed or stopped.
    #[allow(clippy::should_implement_trait)] // shared by threads: not an Iterator
    pub fn next(&self) -> Option<Range<usize>> {
        if self.stopped() {
            return None;
        }
        let start = self.next.fetch_add(self.step, Ordering::Relaxed);
        (start < self.len).then(|| start..(start + self.step).min(self.len))
    }

    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
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
    fn stopped_claims_hand_out_nothing() {
        let claims = Claims::new(100, 10);
        assert_eq!(claims.next(), Some(0..10));
        claims.stop();
        assert!(claims.stopped());
        assert_eq!(claims.next(), None);
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
