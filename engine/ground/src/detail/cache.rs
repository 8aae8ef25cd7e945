//! What detail keeps between calls, in one component: the data tiles'
//! amplitude fields and block peaks, the bounds computed and the loose
//! bounds a frame took from the index, in one least-recently-used store
//! weighed in bytes; beside it, the ranges of tiles produced and the two
//! queues the streaming protocol drains (tiles whose loose bounds want
//! warming, tiles whose bounds narrowed).
//!
//! The key decision: one lock and one budget. Every cache used to be a map
//! of its own, emptied whole when it reached its count, so a long flight
//! dropped every kept bound at once (and the selection after it read the
//! index for all of them) and a map's cap said nothing of its bytes. Here
//! what was used least recently goes first, whatever its kind, until the
//! store fits its budget; what a frame asks for every frame (the bounds of
//! its cut) stays. A produced tile's range is kept apart, outside the
//! store's eviction: it cannot be computed again without producing the
//! tile, and a resident tile is asked for its bounds only when its kept
//! ones are recomputed, so how recently it was used says nothing of its
//! worth (without it, bounds would go loose again under a camera standing
//! on that tile). Each method takes the lock, does one thing and lets it
//! go, so no caller ever holds it while calling another.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::TileBounds;
use planet_geo::address::TileAddress;

use super::DataField;
use super::bounds::Peaks;

/// Bytes the store may hold: the 256 amplitude fields, 4,096 peak blocks
/// and 2^16 to 2^18 bounds the separate maps held at most, about 50 MB.
const BUDGET_BYTES: usize = 50 << 20;

/// The queues' length past which their tiles are let go (nobody drains
/// them: a source no frame asks).
const QUEUE_TILES: usize = 1 << 16;

/// Produced tiles' ranges kept at most (16 bytes each), as before the
/// store: past it they are all let go.
const RANGE_TILES: usize = 1 << 18;

/// What is kept of a tile, by kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    /// A data tile's amplitude field (and heights).
    Field,
    /// A data tile's block peaks.
    Peaks,
    /// A synthesized tile's exact bounds, as computed.
    Exact,
    /// A synthesized tile's bounds from the index alone.
    Loose,
}

enum Entry {
    Field(Arc<DataField>),
    Peaks(Arc<Peaks>),
    Bounds(TileBounds),
}

impl Entry {
    fn bounds(&self) -> Option<TileBounds> {
        if let Entry::Bounds(b) = self { Some(*b) } else { None }
    }

    fn bytes(&self) -> usize {
        // Each entry also costs its slot, key and order in two maps.
        const SLOT: usize = 96;
        SLOT + match self {
            Entry::Field(f) => 4 * (f.cells.len() + f.heights.len() + 3 * f.contours.len()),
            Entry::Peaks(_) => std::mem::size_of::<Peaks>() + 4 * super::bounds::PEAK_COUNT,
            Entry::Bounds(_) => 0,
        }
    }
}

struct Slot {
    entry: Entry,
    used: u64,
}

#[derive(Default)]
struct Store {
    slots: HashMap<(Kind, TileAddress), Slot>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, (Kind, TileAddress)>,
    clock: u64,
    bytes: usize,
    /// Produced tiles' exact ranges, outside the eviction order.
    ranges: HashMap<TileAddress, (f64, f64)>,
    /// Tiles whose loose bounds were taken since the last warm.
    wanted: HashSet<TileAddress>,
    /// Tiles whose bounds narrowed since the journal was last taken.
    narrowed: Vec<TileAddress>,
    /// Narrowed tiles were let go unnoted: the taker forgets everything.
    narrowed_overflowed: bool,
}

impl Store {
    fn get(&mut self, key: (Kind, TileAddress)) -> Option<&Entry> {
        self.clock += 1;
        let slot = self.slots.get_mut(&key)?;
        self.order.remove(&slot.used);
        slot.used = self.clock;
        self.order.insert(self.clock, key);
        Some(&slot.entry)
    }

    fn put(&mut self, key: (Kind, TileAddress), entry: Entry) {
        self.clock += 1;
        self.bytes += entry.bytes();
        if let Some(old) = self.slots.insert(key, Slot { entry, used: self.clock }) {
            self.order.remove(&old.used);
            self.bytes -= old.entry.bytes();
        }
        self.order.insert(self.clock, key);
        while self.bytes > BUDGET_BYTES {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            if let Some(gone) = self.slots.remove(&oldest) {
                self.bytes -= gone.entry.bytes();
            }
        }
    }

    fn remove(&mut self, key: (Kind, TileAddress)) {
        if let Some(gone) = self.slots.remove(&key) {
            self.order.remove(&gone.used);
            self.bytes -= gone.entry.bytes();
        }
    }
}

/// Detail's kept state, shared by the clones of one source.
#[derive(Clone, Default)]
pub(super) struct DetailCaches(Arc<Mutex<Store>>);

impl DetailCaches {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.0.lock().expect("detail cache lock")
    }

    /// What is kept of `tile` as `kind`, read by `pick`; a use.
    fn get<T>(&self, kind: Kind, tile: TileAddress, pick: impl FnOnce(&Entry) -> Option<T>) -> Option<T> {
        self.store().get((kind, tile)).and_then(pick)
    }

    pub(super) fn field(&self, tile: TileAddress) -> Option<Arc<DataField>> {
        self.get(Kind::Field, tile, |e| if let Entry::Field(f) = e { Some(f.clone()) } else { None })
    }

    /// Whether `tile`'s field is kept, without counting as a use.
    pub(super) fn has_field(&self, tile: TileAddress) -> bool {
        self.store().slots.contains_key(&(Kind::Field, tile))
    }

    pub(super) fn keep_field(&self, tile: TileAddress, field: Arc<DataField>) {
        self.store().put((Kind::Field, tile), Entry::Field(field));
    }

    pub(super) fn peaks(&self, tile: TileAddress) -> Option<Arc<Peaks>> {
        self.get(Kind::Peaks, tile, |e| if let Entry::Peaks(p) = e { Some(p.clone()) } else { None })
    }

    /// Whether `tile`'s peaks are kept, without counting as a use.
    pub(super) fn has_peaks(&self, tile: TileAddress) -> bool {
        self.store().slots.contains_key(&(Kind::Peaks, tile))
    }

    pub(super) fn keep_peaks(&self, tile: TileAddress, peaks: Peaks) {
        self.store().put((Kind::Peaks, tile), Entry::Peaks(Arc::new(peaks)));
    }

    pub(super) fn exact(&self, tile: TileAddress) -> Option<TileBounds> {
        self.get(Kind::Exact, tile, Entry::bounds)
    }

    /// Keeps `tile`'s exact bounds and notes that they narrowed.
    pub(super) fn keep_exact(&self, tile: TileAddress, bounds: TileBounds) {
        let mut store = self.store();
        store.put((Kind::Exact, tile), Entry::Bounds(bounds));
        note_narrowed(&mut store, tile);
    }

    pub(super) fn range(&self, tile: TileAddress) -> Option<(f64, f64)> {
        self.store().ranges.get(&tile).copied()
    }

    /// Keeps a produced tile's range and notes that its bounds narrowed.
    pub(super) fn keep_range(&self, tile: TileAddress, range: (f64, f64)) {
        let mut store = self.store();
        if store.ranges.len() >= RANGE_TILES {
            store.ranges.clear();
        }
        store.ranges.insert(tile, range);
        note_narrowed(&mut store, tile);
    }

    pub(super) fn loose(&self, tile: TileAddress) -> Option<TileBounds> {
        self.get(Kind::Loose, tile, Entry::bounds)
    }

    /// Keeps loose bounds a frame took from the index, and queues the tile
    /// for warming. A tile let go from a full queue loses its loose bounds
    /// too, so asking for it again queues it again (a kept loose bound is
    /// returned without queueing).
    pub(super) fn keep_loose(&self, tile: TileAddress, bounds: TileBounds) {
        let mut store = self.store();
        store.put((Kind::Loose, tile), Entry::Bounds(bounds));
        if store.wanted.len() >= QUEUE_TILES {
            let dropped: Vec<TileAddress> = store.wanted.drain().collect();
            for t in dropped {
                store.remove((Kind::Loose, t));
            }
        }
        store.wanted.insert(tile);
    }

    /// The tiles queued for warming, the queue emptied.
    pub(super) fn take_wanted(&self) -> Vec<TileAddress> {
        self.store().wanted.drain().collect()
    }

    /// Forgets the loose bounds of `tiles` (their exact ones are kept).
    pub(super) fn forget_loose(&self, tiles: &[TileAddress]) {
        let mut store = self.store();
        for &tile in tiles {
            store.remove((Kind::Loose, tile));
        }
    }

    /// The narrowed journal's tiles, appended to `into`; false if some were
    /// let go.
    pub(super) fn take_narrowed(&self, into: &mut Vec<TileAddress>) -> bool {
        let mut store = self.store();
        into.append(&mut store.narrowed);
        !std::mem::take(&mut store.narrowed_overflowed)
    }
}

fn note_narrowed(store: &mut Store, tile: TileAddress) {
    if store.narrowed.len() >= QUEUE_TILES {
        store.narrowed.clear();
        store.narrowed_overflowed = true;
    }
    store.narrowed.push(tile);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(k: u32) -> TileAddress {
        TileAddress::new(0, 12, k, 7).unwrap()
    }

    fn field() -> Arc<DataField> {
        Arc::new(DataField {
            cells: vec![0.0; 130 * 130],
            heights: vec![0.0; 131 * 131],
            contours: vec![crate::detail::gullies::Contour::default(); 130 * 130],
        })
    }

    #[test]
    fn what_was_used_least_recently_goes_first_whatever_its_kind_and_the_budget_holds() {
        let caches = DetailCaches::default();
        let per_field = Entry::Field(field()).bytes();
        // One more field than fits beside nothing else.
        let fields = (BUDGET_BYTES / per_field + 1) as u32;
        caches.keep_exact(tile(0), TileBounds::invented(1.0, 2.0, 0.5));
        for k in 0..fields {
            caches.keep_field(tile(k), field());
            // The bound a frame asks for every frame stays.
            assert!(caches.exact(tile(0)).is_some(), "after {k} fields");
        }
        assert!(caches.store().bytes <= BUDGET_BYTES);
        assert!(caches.field(tile(0)).is_none(), "the oldest field went first");
        assert!(caches.field(tile(1)).is_some() && caches.field(tile(fields - 1)).is_some());
        let mut narrowed = Vec::new();
        assert!(caches.take_narrowed(&mut narrowed));
        assert_eq!(narrowed, [tile(0)]);
    }

    /// Regression (review of #30): a full queue let its tiles go but kept
    /// their loose bounds, which are returned without queueing, so those
    /// tiles were never warmed again.
    #[test]
    fn a_tile_let_go_from_a_full_queue_loses_its_loose_bounds_so_asking_again_queues_it() {
        let caches = DetailCaches::default();
        let b = TileBounds::invented(-1.0, 1.0, 0.0);
        let tiles: Vec<TileAddress> =
            (0..=QUEUE_TILES as u32).map(|k| TileAddress::new(1, 12, k % 4096, k / 4096).unwrap()).collect();
        for &t in &tiles {
            caches.keep_loose(t, b);
        }
        assert_eq!(caches.loose(tiles[0]), None, "let go with the queue");
        assert_eq!(caches.take_wanted(), [tiles[QUEUE_TILES]]);
    }

    /// Produced ranges stay whatever the fields do: they cannot be
    /// recomputed without producing the tile again.
    #[test]
    fn produced_ranges_outlive_any_churn_of_the_store() {
        let caches = DetailCaches::default();
        caches.keep_range(tile(9), (10.0, 12.0));
        for k in 0..(BUDGET_BYTES / Entry::Field(field()).bytes() + 10) as u32 {
            caches.keep_field(tile(k), field());
        }
        assert_eq!(caches.range(tile(9)), Some((10.0, 12.0)));
    }

    #[test]
    fn loose_bounds_queue_their_tile_once_and_are_forgotten_when_warmed() {
        let caches = DetailCaches::default();
        let b = TileBounds::invented(-1.0, 1.0, 0.0);
        caches.keep_loose(tile(3), b);
        caches.keep_loose(tile(3), b);
        assert_eq!(caches.loose(tile(3)), Some(b));
        let wanted = caches.take_wanted();
        assert_eq!(wanted, [tile(3)]);
        assert!(caches.take_wanted().is_empty());
        caches.forget_loose(&wanted);
        assert_eq!(caches.loose(tile(3)), None);
        assert_eq!(caches.store().bytes, 0);
    }
}
