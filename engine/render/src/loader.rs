//! Tiles produced off the frame.
//!
//! The key decision: the frame thread never waits for a tile. Each frame it
//! replaces the workers' queue with the misses residency still wants (most
//! wanted first), so a request the camera has flown past is dropped rather
//! than served late, and it takes whatever the workers finished since.
//! Workers read, decode, apply layers and encode a tile into its upload
//! bytes, so the frame only copies them into staging; they also compute
//! the exact bounds selection took loose ones for rather than read a tile
//! (`planet_terrain::ground::warm_bounds`), and free the tiles a frame dropped. A
//! tile is uploaded only once produced (`Residency::plan_streaming`); until
//! then its node draws its nearest resident ancestor, as it does while an
//! upload budget is spent. Every result carries the generation of the
//! ground it was produced from: an edit starts a new generation, and tiles
//! of the old ground are thrown away wherever they are. The tiles a frame
//! took go back to the workers to be freed too: they were allocated on a
//! worker's heap, and handing 32 of them back to the allocator from the
//! frame thread cost it a millisecond of page unmapping. Selection's bounds
//! are kept across frames by the selector (`planet_lod::FrameSelector`).

use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use planet_terrain::geo::address::{TileAddress, TileHasher, TileMap};
use planet_terrain::ground::{HeightSource, SourceError};

use crate::conv::{DataDepths, EncodedUpload, encode_upload};

/// A tile produced and laid out for upload on a worker thread: the frame
/// only copies its bytes into staging.
pub(crate) type Produced = Result<EncodedUpload, SourceError>;

/// Tiles by [`TileAddress::identity`]: a set the frame fills with its
/// requests every frame, hashed as cheaply as [`TileMap`].
type TileSet = HashSet<u64, BuildHasherDefault<TileHasher>>;

/// Produced tiles kept for a plan that has not taken them yet. A tile no
/// longer wanted is dropped at the next request; this bounds the rest
/// (each tile is about 150 KB).
const READY_CAPACITY: usize = 512;

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<TileAddress>,
    source: Option<Arc<dyn HeightSource>>,
    generation: u64,
    working: TileSet,
    finished: Vec<(u64, TileAddress, Produced)>,
    /// Selection gave bounds without reading: a worker reads what they
    /// wanted ([`planet_terrain::ground::warm_bounds`]) before its next tiles.
    warm_bounds: bool,
    /// Produced tiles no longer wanted, for a worker to free: a hundred
    /// 120 KB buffers handed back to the allocator cost a frame a
    /// millisecond.
    discarded: Vec<Produced>,
    shutdown: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Workers wait here for requests.
    work: Condvar,
    /// The frame thread waits here for a finished tile.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked inside a source poisons the lock; the state
        // it guards (queues and finished results) is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A pool of tile-producing threads and the tiles they finished.
#[derive(Debug)]
pub(crate) struct TileLoader {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    generation: u64,
    /// Produced tiles by [`TileAddress::identity`].
    ready: TileMap<u64, Produced>,
}

impl TileLoader {
    /// Starts `threads` workers producing tiles of `source`.
    pub(crate) fn new(source: Option<Arc<dyn HeightSource>>, threads: usize) -> TileLoader {
        let shared = Arc::new(Shared::default());
        shared.lock().source = source;
        let workers = (0..threads.max(1))
            .map(|k| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("planet-tiles-{k}"))
                    .spawn(move || work(&shared))
                    .expect("the OS starts a tile thread")
            })
            .collect();
        TileLoader { shared, workers, generation: 0, ready: TileMap::default() }
    }

    /// The ground changed (an edit): what was produced or queued is stale.
    pub(crate) fn reset(&mut self, source: Option<Arc<dyn HeightSource>>) {
        self.generation += 1;
        self.ready.clear();
        let mut state = self.shared.lock();
        state.source = source;
        state.generation = self.generation;
        state.queue.clear();
        state.finished.clear();
    }

    /// Takes what the workers finished for the current ground.
    pub(crate) fn collect(&mut self) {
        let finished = std::mem::take(&mut self.shared.lock().finished);
        for (generation, tile, produced) in finished {
            if generation == self.generation {
                self.ready.insert(tile.identity(), produced);
            }
        }
    }

    pub(crate) fn is_ready(&self, tile: TileAddress) -> bool {
        self.ready.contains_key(&tile.identity())
    }

    /// The produced tile, taken out of the loader.
    pub(crate) fn take(&mut self, tile: TileAddress) -> Option<Produced> {
        self.ready.remove(&tile.identity())
    }

    /// Gives back a tile taken this frame but not staged (the frame's time
    /// ran out): the next frame plans it again.
    pub(crate) fn put_back(&mut self, tile: TileAddress, produced: Produced) {
        self.ready.insert(tile.identity(), produced);
    }

    /// Hands tiles the frame took and staged back to a worker to free
    /// (see the module documentation).
    pub(crate) fn free(&self, taken: Vec<Produced>) {
        if taken.is_empty() {
            return;
        }
        self.shared.lock().discarded.extend(taken);
        self.shared.work.notify_one();
    }

    /// Replaces the queue with `wanted` (most wanted first), leaving out
    /// what is produced or being produced, and drops produced tiles no
    /// longer wanted.
    pub(crate) fn request(&mut self, wanted: &[TileAddress]) {
        let keys: TileSet = wanted.iter().map(|t| t.identity()).collect();
        let mut discarded: Vec<Produced> = Vec::new();
        let mut discard = |ready: &mut TileMap<u64, Produced>, keep: &dyn Fn(&u64) -> bool| {
            let gone: Vec<u64> = ready.keys().filter(|k| !keep(k)).copied().collect();
            discarded.extend(gone.iter().filter_map(|k| ready.remove(k)));
        };
        discard(&mut self.ready, &|key| keys.contains(key));
        if self.ready.len() > READY_CAPACITY {
            // Keep the most wanted.
            let keep: TileSet = wanted
                .iter()
                .map(|t| t.identity())
                .filter(|k| self.ready.contains_key(k))
                .take(READY_CAPACITY)
                .collect();
            discard(&mut self.ready, &|key| keep.contains(key));
        }
        let mut state = self.shared.lock();
        let freeing = !discarded.is_empty();
        state.discarded.append(&mut discarded);
        // No more than the ready map keeps: past it the workers would make
        // tiles the next request drops, forever, while slots are short.
        let room = READY_CAPACITY.saturating_sub(self.ready.len() + state.working.len());
        let queue: VecDeque<TileAddress> = wanted
            .iter()
            .copied()
            .filter(|t| !self.ready.contains_key(&t.identity()) && !state.working.contains(&t.identity()))
            .take(room)
            .collect();
        let any = !queue.is_empty();
        state.queue = queue;
        drop(state);
        if any {
            self.shared.work.notify_all();
        } else if freeing {
            self.shared.work.notify_one();
        }
    }

    /// Has a worker read what this frame's bounds wanted (before any more
    /// tiles: the bounds decide which tiles are wanted).
    pub(crate) fn warm_bounds(&self) {
        self.shared.lock().warm_bounds = true;
        self.shared.work.notify_one();
    }

    /// Tiles queued or being produced.
    pub(crate) fn in_flight(&self) -> usize {
        let state = self.shared.lock();
        state.queue.len() + state.working.len()
    }

    /// Whether tiles are queued or being produced.
    #[cfg(test)]
    pub(crate) fn busy(&self) -> bool {
        let state = self.shared.lock();
        !state.queue.is_empty() || !state.working.is_empty() || !state.finished.is_empty()
    }

    /// Blocks until a worker finishes a tile (or `timeout` passes): for
    /// callers with nothing to draw until it does.
    pub(crate) fn wait(&self, timeout: Duration) {
        let state = self.shared.lock();
        if state.finished.is_empty() && (!state.queue.is_empty() || !state.working.is_empty()) {
            let _ = self.shared.done.wait_timeout(state, timeout);
        }
    }
}

impl Drop for TileLoader {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            state.queue.clear();
        }
        self.shared.work.notify_all();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// Tiles a worker takes at once: announced together to the source, so a
/// remote pack fetches their adjacent payloads in one request.
const BATCH: usize = 8;

fn work(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.shutdown {
            return;
        }
        if !state.discarded.is_empty() {
            let discarded = std::mem::take(&mut state.discarded);
            drop(state);
            drop(discarded);
            state = shared.lock();
            continue;
        }
        if std::mem::take(&mut state.warm_bounds)
            && let Some(source) = state.source.clone()
        {
            drop(state);
            planet_terrain::ground::warm_bounds(&*source);
            state = shared.lock();
            continue;
        }
        if state.queue.is_empty() {
            state = shared.work.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
            continue;
        }
        let Some(source) = state.source.clone() else {
            state.queue.clear();
            continue;
        };
        let take = state.queue.len().min(BATCH);
        let batch: Vec<TileAddress> = state.queue.drain(..take).collect();
        let generation = state.generation;
        state.working.extend(batch.iter().map(|t| t.identity()));
        drop(state);
        planet_terrain::ground::prefetch(&*source, &batch);
        let depths = DataDepths::of(&*source);
        for (k, &tile) in batch.iter().enumerate() {
            let produced = source.tile(tile).map(|t| encode_upload(&t, depths));
            let mut state = shared.lock();
            state.working.remove(&tile.identity());
            if generation != state.generation {
                // The ground changed: the rest of the batch is stale too.
                for rest in &batch[k + 1..] {
                    state.working.remove(&rest.identity());
                }
                break;
            }
            state.finished.push((generation, tile, produced));
            shared.done.notify_all();
        }
        state = shared.lock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::geo::body::Body;
    use planet_terrain::ground::ProceduralSource;

    fn wait_until(loader: &mut TileLoader, tile: TileAddress) {
        let start = std::time::Instant::now();
        while !loader.is_ready(tile) {
            assert!(start.elapsed() < Duration::from_secs(60), "{tile} was never produced");
            loader.wait(Duration::from_millis(100));
            loader.collect();
        }
    }

    #[test]
    fn requested_tiles_arrive_equal_to_the_source_and_an_edit_discards_the_old_ground() {
        let body = Body::earth();
        let source: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(body.clone(), 7));
        let mut loader = TileLoader::new(Some(source.clone()), 2);
        let roots = TileAddress::roots();
        loader.request(&roots);
        for &root in &roots {
            wait_until(&mut loader, root);
        }
        let produced = loader.take(roots[2]).expect("ready").expect("produced");
        let direct = encode_upload(&source.tile(roots[2]).expect("direct"), DataDepths::of(&*source));
        assert_eq!(produced, direct, "the same bytes as encoded on the frame");
        assert!(!loader.is_ready(roots[2]), "taken once");

        // Not wanted any more: dropped.
        loader.request(&roots[..1]);
        assert!(loader.is_ready(roots[0]) && !loader.is_ready(roots[1]));

        // A new ground: nothing of the old one survives.
        let other: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(body, 8));
        loader.reset(Some(other.clone()));
        assert!(!loader.is_ready(roots[0]));
        loader.request(&roots[..1]);
        wait_until(&mut loader, roots[0]);
        let produced = loader.take(roots[0]).expect("ready").expect("produced");
        assert_eq!(produced, encode_upload(&other.tile(roots[0]).expect("direct"), DataDepths::of(&*other)));
        assert!(!loader.busy());
    }
}
