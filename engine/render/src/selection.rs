//! Where the cut is selected: on the frame, or on a thread of its own.
//!
//! The key decision: with tile workers ([`Loading::Background`]) the frame
//! thread never selects. A selection thread selects for the newest view it
//! was sent, one selection at a time (views sent meanwhile replace each
//! other), and each frame draws the newest finished cut *followed* to its
//! own view ([`Cut::follow`]: culled again, errors projected again for the
//! move) unless its own comes within [`OWN_CUT_WAIT`], or, when the
//! followed cut would miss the target by more than [`LAG_TOLERANCE`],
//! within [`LAGGING_CUT_WAIT`]. Selection's cost thus stays off the frame
//! while the camera moves as frames do, and a jump or a fast descent trades
//! up to a frame's time for a cut on target. The cover never depends on the
//! view, so a cut some frames old still covers the body: where the camera
//! went faster than selection, resolution drops, never coverage. Only a
//! scene's first frame waits for a cut. Frames loading on the frame select
//! on the frame, by their contract: every frame's cut is `select`'s, so a
//! sequence of frames is the same on every run.
//!
//! [`Loading::Background`]: crate::scene::Loading::Background

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use planet_terrain::camera::View;
use planet_terrain::ground::{HeightSource, Reads, SourceError};
use planet_terrain::lod::{Cut, FrameSelector, SelectionSettings};

/// A cut for a frame.
pub(crate) struct Selected {
    pub(crate) cut: Cut,
    /// Bounds its selection asked of the source (not kept from before).
    pub(crate) bounds_from_source: usize,
    /// Selected for another view or other settings than the frame's, and
    /// followed to the frame's view.
    pub(crate) lagging: bool,
    /// Wall-clock milliseconds the frame waited for it.
    pub(crate) wait_ms: f64,
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) enum CutSelection {
    /// Tiles load on the frame: bounds are asked with reads allowed.
    OnFrame(FrameSelector),
    Thread(SelectionThread),
}

impl CutSelection {
    pub(crate) fn on_frame() -> CutSelection {
        CutSelection::OnFrame(FrameSelector::new(Reads::Allowed))
    }

    pub(crate) fn on_thread() -> CutSelection {
        CutSelection::Thread(SelectionThread::start())
    }

    /// The cut to draw `view` with. On the frame: selected now, with exact
    /// bounds. On the thread: the newest finished cut followed to `view`
    /// (waiting only when there is none yet), and `view` sent for the next.
    pub(crate) fn select(
        &mut self,
        source: &Arc<dyn HeightSource>,
        view: &View,
        settings: &SelectionSettings,
    ) -> Result<Selected, SourceError> {
        match self {
            CutSelection::OnFrame(selector) => {
                let cut = selector.select(source, view, settings)?;
                let bounds_from_source = selector.bounds_asked_of_ground();
                Ok(Selected { cut, bounds_from_source, lagging: false, wait_ms: 0.0 })
            }
            CutSelection::Thread(thread) => thread.select(source, view, settings),
        }
    }
}

/// How long a frame waits for the cut of its own view before it draws the
/// newest one followed to it: a warm selection near the ground takes about
/// half a millisecond, so most frames draw their own cut, and a slow one
/// (a jump, a fast descent's new splits) costs the frame no more than this.
const OWN_CUT_WAIT: Duration = Duration::from_micros(1500);

/// How far over the target (a multiple) a followed cut's error may be
/// before the frame waits longer for its own cut.
const LAG_TOLERANCE: f64 = 1.25;

/// How long, at most, a frame whose newest cut is that far behind waits for
/// its own (a frame at 60 fps): after a jump or on a fast descent.
const LAGGING_CUT_WAIT: Duration = Duration::from_millis(16);

/// What the frame asks of the selection thread.
struct Request {
    number: u64,
    source: Arc<dyn HeightSource>,
    view: View,
    settings: SelectionSettings,
}

/// A cut the thread finished, and what it was selected for.
struct Finished {
    number: u64,
    cut: Result<Cut, SourceError>,
    view: View,
    settings: SelectionSettings,
    bounds_from_source: usize,
}

#[derive(Default)]
struct State {
    request: Option<Request>,
    finished: Option<Finished>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the thread for a request, and a waiting frame for a cut.
    changed: Condvar,
}

impl Shared {
    /// The state, whoever panicked holding it (its fields stay whole).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits on `changed` (at most `timeout`), as [`Shared::lock`] does.
    fn wait<'a>(&self, state: MutexGuard<'a, State>, timeout: Duration) -> MutexGuard<'a, State> {
        self.changed.wait_timeout(state, timeout).unwrap_or_else(|poisoned| poisoned.into_inner()).0
    }
}

/// The newest cut a frame took, what it was selected for, and its request.
struct Newest {
    cut: Cut,
    view: View,
    settings: SelectionSettings,
    number: u64,
}

/// The thread, and the newest cut a frame took from it.
pub(crate) struct SelectionThread {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    newest: Option<Newest>,
    /// Requests sent so far.
    sent: u64,
}

impl std::fmt::Debug for SelectionThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectionThread").field("has_cut", &self.newest.is_some()).finish()
    }
}

impl SelectionThread {
    fn start() -> SelectionThread {
        let shared = Arc::new(Shared::default());
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("cut selection".into())
            .spawn(move || select_requests(&worker))
            .expect("a thread for cut selection");
        SelectionThread { shared, thread: Some(thread), newest: None, sent: 0 }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    fn select(
        &mut self,
        source: &Arc<dyn HeightSource>,
        view: &View,
        settings: &SelectionSettings,
    ) -> Result<Selected, SourceError> {
        self.sent += 1;
        let number = self.sent;
        self.lock().request = Some(Request { number, source: source.clone(), view: *view, settings: *settings });
        self.shared.changed.notify_all();
        let started = Instant::now();
        let mut fresh = self.wait_for(number, started + OWN_CUT_WAIT)?;
        let mut selected = self.followed(view, settings, source);
        if selected.lagging && selected.cut.effective_screen_error_px > LAG_TOLERANCE * settings.target_error_px {
            // The camera went too far for the newest cut: wait for its own
            // a while longer rather than draw a frame this far off target.
            fresh += self.wait_for(number, started + LAGGING_CUT_WAIT)?;
            selected = self.followed(view, settings, source);
        }
        selected.bounds_from_source = fresh;
        selected.wait_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(selected)
    }

    /// Waits until the cut of request `number` is finished or `deadline`
    /// passes (with no cut at all, until there is one), and takes the
    /// newest finished cut; returns the bounds its selection asked for.
    fn wait_for(&mut self, number: u64, deadline: Instant) -> Result<usize, SourceError> {
        let mut state = self.lock();
        loop {
            let own = state.finished.as_ref().is_some_and(|f| f.number == number)
                || self.newest.as_ref().is_some_and(|n| n.number == number);
            let has_any = self.newest.is_some() || state.finished.is_some();
            let now = Instant::now();
            if own || (has_any && now >= deadline) {
                break;
            }
            let wait = if has_any { deadline - now } else { Duration::from_secs(1) };
            state = self.shared.wait(state, wait);
        }
        let finished = state.finished.take();
        drop(state);
        let Some(finished) = finished else { return Ok(0) };
        let fresh = finished.bounds_from_source;
        let Finished { number, cut, view, settings, .. } = finished;
        self.newest = Some(Newest { cut: cut?, view, settings, number });
        Ok(fresh)
    }

    /// The newest cut, followed to `view` if it was selected for another.
    fn followed(&self, view: &View, settings: &SelectionSettings, source: &Arc<dyn HeightSource>) -> Selected {
        let newest = self.newest.as_ref().expect("waited for one");
        let mut cut = newest.cut.clone();
        let lagging = newest.view != *view || newest.settings != *settings;
        if lagging {
            cut.follow(&newest.view, view, source.body().ellipsoid(), settings.near_m);
        }
        Selected { cut, bounds_from_source: 0, lagging, wait_ms: 0.0 }
    }
}

impl Drop for SelectionThread {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // A selection that panicked has nothing left to release.
            let _ = thread.join();
        }
    }
}

/// The thread's loop: the newest request, selected with bounds taken
/// without a read (the tile workers read what they want), until stopped.
fn select_requests(shared: &Shared) {
    let mut selector = FrameSelector::new(Reads::Never);
    loop {
        let mut state = shared.lock();
        while state.request.is_none() && !state.stop {
            state = shared.wait(state, Duration::from_secs(1));
        }
        if state.stop {
            return;
        }
        let request = state.request.take().expect("waited for one");
        drop(state);
        let cut = selector.select(&request.source, &request.view, &request.settings);
        let finished = Finished {
            number: request.number,
            cut,
            view: request.view,
            settings: request.settings,
            bounds_from_source: selector.bounds_asked_of_ground(),
        };
        let mut state = shared.lock();
        state.finished = Some(finished);
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use planet_terrain::Geodetic;
    use planet_terrain::geo::address::TileAddress;
    use planet_terrain::geo::body::Body;
    use planet_terrain::ground::{ProceduralSource, SourceTile, TileBounds};
    use planet_terrain::lod::select;

    use super::*;

    fn view(height: f64, heading: f64) -> View {
        let at = Geodetic::from_degrees(46.5, 8.0, height);
        View::looking_from(&Body::earth(), at, heading, -20.0, 60f64.to_radians(), (640, 360))
    }

    fn tiles(cut: &Cut) -> Vec<TileAddress> {
        let mut tiles: Vec<TileAddress> = cut.nodes.iter().map(|n| n.tile).collect();
        tiles.sort_by_key(|t| t.key());
        tiles
    }

    /// The thread's cut for a view is `select`'s; a frame whose own cut is
    /// late draws the newest one's cover, followed to its view. Either way
    /// the cover is a finished selection's: never a partial one.
    #[test]
    fn a_frame_draws_its_own_cut_or_the_newest_cover_followed() {
        let source: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(Body::earth(), 3));
        let settings = SelectionSettings { target_error_px: 2.0, node_budget: 2048, near_m: 1.0 };
        let mut selection = CutSelection::on_thread();
        let first = view(5000.0, 0.0);
        let own = selection.select(&source, &first, &settings).expect("procedural ground");
        assert!(!own.lagging, "the first frame waits for its own cut");
        let want = select(&*source, &first, &settings).expect("procedural ground");
        assert_eq!(tiles(&own.cut), tiles(&want), "the thread's cut is select's");
        let again = selection.select(&source, &first, &settings).expect("the same view");
        assert_eq!(tiles(&again.cut), tiles(&want));
        let mut earlier = vec![tiles(&want)];
        for (k, next) in [view(3000.0, 120.0), view(800.0, 250.0), view(60_000.0, 10.0)].iter().enumerate() {
            let drawn = selection.select(&source, next, &settings).expect("procedural ground");
            let fresh = select(&*source, next, &settings).expect("procedural ground");
            if drawn.lagging {
                assert!(earlier.contains(&tiles(&drawn.cut)), "view {k}: a lagging cut is an earlier view's");
            } else {
                assert_eq!(tiles(&drawn.cut), tiles(&fresh), "view {k}: its own cut");
            }
            earlier.push(tiles(&fresh));
            assert!(drawn.cut.nodes.iter().any(|n| n.culled.is_none()), "view {k}: something drawn");
        }
    }

    /// Ground whose bounds cannot be read.
    #[derive(Debug)]
    struct NoBounds(Body);

    impl HeightSource for NoBounds {
        fn parts(&self) -> Vec<&dyn HeightSource> {
            Vec::new()
        }
        fn body(&self) -> &Body {
            &self.0
        }
        fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
            Err(SourceError::NoData { tile })
        }
        fn bounds(&self, tile: TileAddress, _reads: planet_terrain::ground::Reads) -> Result<TileBounds, SourceError> {
            Err(SourceError::NoData { tile })
        }
        fn data_depth(&self) -> Option<u8> {
            None
        }
        fn colour_data_depth(&self) -> Option<u8> {
            None
        }
    }

    /// A selection that fails on the thread fails the frame that takes it,
    /// and dropping the selection stops its thread.
    #[test]
    fn a_failed_selection_reaches_the_frame() {
        let source: Arc<dyn HeightSource> = Arc::new(NoBounds(Body::earth()));
        let settings = SelectionSettings { target_error_px: 2.0, node_budget: 256, near_m: 1.0 };
        let mut selection = CutSelection::on_thread();
        let failed = selection.select(&source, &view(5000.0, 0.0), &settings);
        assert!(matches!(failed, Err(SourceError::NoData { .. })), "the source's error");
        drop(selection);
    }
}
