//! The hash of the importers' maps.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map with [`Mix`].
pub(crate) type Map<K, V> = HashMap<K, V, BuildHasherDefault<Mix>>;

/// A multiply-rotate hash of 8 bytes at a time: std's SipHash of a
/// report's notes (a few hundred bytes each) cost more than all the rest
/// of the report, and of a big config's section and slot names a tenth of
/// reading it. The keys are the user's own files' names and notes: there
/// is no one to resist a flood of colliding keys from.
#[derive(Default)]
pub(crate) struct Mix(u64);

impl Mix {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        for &b in words.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The table's place comes from the low bits, which a product
        // mixes least.
        self.0.rotate_left(26)
    }
}
