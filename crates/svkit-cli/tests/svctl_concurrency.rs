//! `apply`, `register` and `unregister` at the same time, on the real
//! /init: each reads the config and the registrations under the scandir
//! lock, so none undoes what another just reported done.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"] },
      "command": ["sleep", "1000"], "autostart": "always" }
  ]
}"#;

const WORKERS: usize = 20;
/// How long the workers run: long enough for hundreds of verbs on two
/// shared cores, short enough for the whole test to stay under a minute.
const RUN_FOR: Duration = Duration::from_secs(20);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Apply,
    Register,
    Unregister,
}

/// A small deterministic sequence per worker (no rand crate needed): each
/// worker mixes the three verbs differently.
fn next(seed: &mut u64) -> Op {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    match (*seed >> 33) % 5 {
        0 => Op::Apply,
        1 | 2 => Op::Register,
        _ => Op::Unregister,
    }
}

/// Worker `i` alone registers and unregisters `w{i}`, so the last of its
/// own successful verbs says what must be there at the end; `apply` and
/// the other workers' verbs are what races it.
fn worker(sbx: &Sandbox, i: usize, until: Instant) -> (Option<Op>, Vec<(Op, i32)>) {
    let name = format!("w{i}");
    let mut seed = i as u64 + 1;
    let mut last = None;
    let mut ran = Vec::new();
    while Instant::now() < until {
        let op = next(&mut seed);
        let o = match op {
            Op::Apply => sbx.exec(&["svctl", "apply"]),
            Op::Register => sbx.exec(&["svctl", "register", &name]),
            Op::Unregister => sbx.exec(&["svctl", "unregister", &name]),
        };
        let rc = code(&o).unwrap_or(-1);
        if rc == 0 && op != Op::Apply {
            last = Some(op);
        }
        // Unregistering what is not registered is refused (1); anything
        // else that fails is a finding of its own.
        let expected = rc == 0 || (op == Op::Unregister && rc == 1);
        assert!(
            expected,
            "{op:?} {name}: exit {rc}\nstdout: {}\nstderr: {}",
            stdout(&o),
            err(&o)
        );
        ran.push((op, rc));
    }
    (last, ran)
}

#[test]
fn concurrent_verbs_keep_every_reported_registration() {
    if !sandbox_or_skip("concurrent_verbs_keep_every_reported_registration") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = Arc::new(fx.boot());
    wait_supervised(&sbx, &["gw-default"]);
    let until = Instant::now() + RUN_FOR;
    let handles: Vec<_> = (0..WORKERS)
        .map(|i| {
            let sbx = Arc::clone(&sbx);
            thread::spawn(move || worker(&sbx, i, until))
        })
        .collect();
    let mut want = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (i, h) in handles.into_iter().enumerate() {
        let (last, ran) = h.join().expect("worker");
        for (op, rc) in ran {
            *counts.entry(format!("{op:?}={rc}")).or_default() += 1;
        }
        want.insert(format!("gw-w{i}"), last == Some(Op::Register));
    }
    eprintln!("verbs run: {counts:?}");
    let mut wrong = Vec::new();
    for (slot, present) in &want {
        let there = sbx.root().join("run/service").join(slot).is_dir();
        let recorded = fx
            .data
            .path()
            .join(".svkit/instances/gw-{instance}")
            .join(&slot["gw-".len()..])
            .is_file();
        if there != *present || recorded != *present {
            wrong.push(format!(
                "{slot}: last reported {}, slot there: {there}, registered: {recorded}",
                if *present { "register" } else { "unregister" }
            ));
        }
        if *present && !supervised(&sbx, slot) {
            wrong.push(format!("{slot}: registered but not supervised"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The registrations agree with the scandir: nothing left to apply.
    sbx.run(&["svctl", "plan"], 0);
    Arc::try_unwrap(sbx).ok().expect("one owner").stop();
}
