//! The refinement's priority queue.
//!
//! The key decision: keys are plain integers. A node's projected error and
//! its creation index pack into one `u128` that orders as `(error, -index)`,
//! so the heap compares integers (no float comparisons, no NaN cases) and
//! ties always go to the node made first, which keeps the cut deterministic.
//!
//! The second decision: only keys that can still be popped are ordered.
//! When a budget binds, most nodes pushed are never popped (a 4k-node cut
//! pops about a third of what it pushes). Keys under a threshold (a guess:
//! a [`Selector`](super::Selector) passes the error last frame's budget
//! stopped at) wait unordered in a side list; only if the heap runs dry
//! are they ordered too. Every key in the heap is above every waiting one,
//! so the pops, and so the cut, are exactly those of one heap.

/// The nodes waiting to split, largest projected error first, ties to the
/// earliest made: a 4-ary max-heap of keys that order as `(error, -index)`
/// when compared as plain integers, and the keys under `threshold`,
/// unordered. Popping is most of what refinement does besides geometry; a
/// shallow heap of integers spends a fraction of the branches and float
/// comparisons of a binary heap of structs.
#[derive(Default)]
pub(super) struct ErrorHeap {
    keys: Vec<u128>,
    /// Keys under `threshold`: none is popped before every key in `keys`.
    waiting: Vec<u128>,
    threshold: u128,
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

    /// Empties the queue; keys of errors under `threshold_error` will wait
    /// unordered until the ordered ones are all popped.
    pub(super) fn reset(&mut self, threshold_error: f64, capacity: usize) {
        self.keys.clear();
        self.waiting.clear();
        self.keys.reserve(capacity);
        self.waiting.reserve(capacity);
        self.threshold = ErrorHeap::key(threshold_error, u32::MAX);
    }

    pub(super) fn push(&mut self, error: f64, index: u32) {
        let key = ErrorHeap::key(error, index);
        if key < self.threshold {
            self.waiting.push(key);
            return;
        }
        self.sift_up(key);
    }

    fn sift_up(&mut self, key: u128) {
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

    pub(super) fn peek(&mut self) -> Option<(f64, u32)> {
        if self.keys.is_empty() && !self.waiting.is_empty() {
            // The guess was too high: order the rest too.
            self.threshold = 0;
            for key in std::mem::take(&mut self.waiting) {
                self.sift_up(key);
            }
        }
        self.keys.first().map(|&key| ErrorHeap::entry(key))
    }

    pub(super) fn pop(&mut self) {
        let Some(last) = self.keys.pop() else { return };
        let keys = &mut self.keys[..];
        let len = keys.len();
        if len == 0 {
            return;
        }
        let mut at = 0;
        loop {
            let first = 4 * at + 1;
            if first >= len {
                break;
            }
            // The largest child without a branch per comparison (which of
            // four keys wins is a coin toss to a predictor).
            let children = &keys[first..(first + 4).min(len)];
            let mut largest = 0;
            let mut largest_key = children[0];
            for (k, &key) in children.iter().enumerate().skip(1) {
                let larger = key > largest_key;
                largest = if larger { k } else { largest };
                largest_key = if larger { key } else { largest_key };
            }
            if largest_key <= last {
                break;
            }
            keys[at] = largest_key;
            at = first + largest;
        }
        keys[at] = last;
    }
}
