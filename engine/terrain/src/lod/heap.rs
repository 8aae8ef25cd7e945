//! The refinement's priority queue.
//!
//! The key decision: keys are plain integers. A node's projected error and
//! its creation index pack into one `u128` that orders as `(error, -index)`,
//! so the heap compares integers (no float comparisons, no NaN cases) and
//! ties always go to the node made first, which keeps the cut deterministic.

/// The nodes waiting to split, largest projected error first, ties to the
/// earliest made: a 4-ary max-heap of keys that order as `(error, -index)`
/// when compared as plain integers. Popping is most of what refinement does
/// besides geometry; a shallow heap of integers spends a fraction of the
/// branches and float comparisons of a binary heap of structs.
pub(super) struct ErrorHeap {
    pub(super) keys: Vec<u128>,
}

impl ErrorHeap {
    /// `f64::total_cmp`'s order in the high bits, the reverse of creation
    /// order in the low ones.
    fn key(error: f64, index: u32) -> u128 {
        let bits = error.to_bits();
        let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
        (u128::from(ordered) << 32) | u128::from(u32::MAX - index)
    }

    fn entry(key: u128) -> (f64, u32) {
        let ordered = (key >> 32) as u64;
        let bits = if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered };
        (f64::from_bits(bits), u32::MAX - key as u32)
    }

    pub(super) fn push(&mut self, error: f64, index: u32) {
        let key = ErrorHeap::key(error, index);
        let mut at = self.keys.len();
        self.keys.push(key);
        while at > 0 {
            let parent = (at - 1) / 4;
            if self.keys[parent] >= key {
                break;
            }
            self.keys[at] = self.keys[parent];
            at = parent;
        }
        self.keys[at] = key;
    }

    pub(super) fn peek(&self) -> Option<(f64, u32)> {
        self.keys.first().map(|&key| ErrorHeap::entry(key))
    }

    pub(super) fn pop(&mut self) {
        let Some(last) = self.keys.pop() else { return };
        let len = self.keys.len();
        if len == 0 {
            return;
        }
        let mut at = 0;
        loop {
            let first = 4 * at + 1;
            if first >= len {
                break;
            }
            let mut largest = first;
            for child in first + 1..(first + 4).min(len) {
                if self.keys[child] > self.keys[largest] {
                    largest = child;
                }
            }
            if self.keys[largest] <= last {
                break;
            }
            self.keys[at] = self.keys[largest];
            at = largest;
        }
        self.keys[at] = last;
    }
}
