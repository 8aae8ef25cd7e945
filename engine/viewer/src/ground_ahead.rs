//! The ground under where the camera is going, read before it gets there.
//!
//! The key decision: the camera's clearance needs the ground under it this
//! frame, at 1 m, and a tile of that ground past the data depth is
//! synthesized (tens of milliseconds) the first time it is read. Read on
//! the frame, every tile crossing was a frame spike. A worker thread reads
//! the tiles under the camera's extrapolated positions over the next
//! second, so by the time the camera arrives its tile is usually in the
//! session's ground cache; the frame reads it on the spot only when the
//! camera jumped (a go-to, the first frame). Results carry the edit count
//! they were read at and are dropped if the ground changed since. Tiles the
//! session's cache lets go come back here to be freed, on the thread that
//! allocated them, rather than a hundred at once on the frame.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use planet_terrain::geo::address::TileAddress;
use planet_terrain::ground::{HeightSource, SourceTile};

/// What the worker is asked to do.
enum Request {
    /// Read a tile of the ground of one edit count.
    Read { generation: usize, source: Arc<dyn HeightSource>, tile: TileAddress },
    /// Free tiles the cache let go.
    Free(Vec<SourceTile>),
}

/// A background reader of ground tiles.
#[derive(Debug)]
pub struct GroundAhead {
    requests: Option<Sender<Request>>,
    results: Receiver<(usize, SourceTile)>,
    asked: HashSet<(usize, TileAddress)>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Request::Read { generation, tile, .. } => write!(f, "Read({generation}, {tile})"),
            Request::Free(tiles) => write!(f, "Free({} tiles)", tiles.len()),
        }
    }
}

impl Default for GroundAhead {
    fn default() -> GroundAhead {
        let (requests, inbox) = channel::<Request>();
        let (outbox, results) = channel();
        let worker = std::thread::Builder::new()
            .name("planet-ground-ahead".into())
            .spawn(move || {
                for request in inbox {
                    let Request::Read { generation, source, tile } = request else { continue };
                    // A tile that cannot be read is read again on the frame,
                    // which reports it; here it is simply not delivered.
                    if let Ok(tile) = source.tile(tile)
                        && outbox.send((generation, tile)).is_err()
                    {
                        return;
                    }
                }
            })
            .expect("the OS starts a thread");
        GroundAhead { requests: Some(requests), results, asked: HashSet::new(), worker: Some(worker) }
    }
}

impl GroundAhead {
    /// Asks for `tile` of the ground at `generation`, once.
    pub fn ask(&mut self, generation: usize, source: &Arc<dyn HeightSource>, tile: TileAddress) {
        if self.asked.len() > 4096 {
            self.asked.clear();
        }
        if self.asked.insert((generation, tile))
            && let Some(requests) = &self.requests
        {
            let _ = requests.send(Request::Read { generation, source: Arc::clone(source), tile });
        }
    }

    /// Frees `tiles` on the worker (see the module documentation).
    pub fn free(&self, tiles: Vec<SourceTile>) {
        if let (false, Some(requests)) = (tiles.is_empty(), &self.requests) {
            let _ = requests.send(Request::Free(tiles));
        }
    }

    /// Lets `tile` be asked for again (its reading was dropped).
    pub fn forget(&mut self, generation: usize, tile: TileAddress) {
        self.asked.remove(&(generation, tile));
    }

    /// Tiles read since the last call, of the ground at `generation`.
    pub fn take(&mut self, generation: usize) -> Vec<SourceTile> {
        self.results.try_iter().filter(|(g, _)| *g == generation).map(|(_, t)| t).collect()
    }
}

impl Drop for GroundAhead {
    fn drop(&mut self) {
        // Closing the channel ends the worker after its current tile.
        self.requests = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
