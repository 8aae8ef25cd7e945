//! Which tiles live in which GPU slots, decided on the host.
//!
//! The key decision: slots are anonymous storage under an LRU, and a node
//! whose own tile is missing binds its nearest resident ancestor through a
//! scaled UV rectangle, so it draws correct, coarser ground instead of
//! nothing. The six roots are pinned once resident, so after the first
//! frames a fallback always exists. A slot bound within the frames-in-flight
//! window is never evicted: the GPU may still be reading it from a frame
//! already submitted. Uploads share a per-frame byte budget; re-staging of
//! tiles already resident (edits) is served before streaming misses, coarse
//! misses before fine ones, larger projected error first within a depth.
//! A tile its source could not produce (a corrupt payload) is marked failed:
//! it is never asked for again, and its nodes keep their ancestor.
//!
//! The plan runs every frame over a thousand nodes near the ground, each
//! walking its ancestors, so its maps are keyed by
//! [`TileAddress::identity`] (packed bits) rather than
//! [`TileAddress::key`] (a Hilbert walk per lookup), and the key that
//! orders the wanted tiles is computed once per tile, not per comparison.

use planet_geo::address::{TileAddress, TileKey, TileMap};

/// The six cube faces' root tiles, pinned once resident.
pub const ROOTS: usize = 6;

/// The fewest slots a renderer with `frames_in_flight` frames should have:
/// the six pinned roots, plus one split's four children per frame in
/// flight. Slots bound by a frame still in flight are never evicted, so
/// with fewer a split's children may find no slot until those frames
/// retire, and nothing below the roots ever becomes resident.
pub fn min_slots(frames_in_flight: u64) -> usize {
    ROOTS + 4 * frames_in_flight as usize
}

/// Sizes and budgets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidencySettings {
    pub slots: usize,
    /// Frames the GPU may still be reading after they are recorded.
    pub frames_in_flight: u64,
    pub upload_budget_bytes: usize,
    /// Bytes one tile upload costs.
    pub tile_bytes: usize,
}

/// Where in its bound tile a node reads: texel coordinates of the node's
/// core span are `offset + uv * scale`, with uv in [0, 1] over the node and
/// the result in [0, 1] over the bound tile's core samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UvRect {
    pub offset: [f64; 2],
    pub scale: f64,
}

impl UvRect {
    pub const FULL: UvRect = UvRect { offset: [0.0, 0.0], scale: 1.0 };

    /// The rectangle of `tile` inside its ancestor `ancestor`.
    pub fn within(tile: TileAddress, ancestor: TileAddress) -> UvRect {
        let k = tile.depth() - ancestor.depth();
        let scale = 1.0 / f64::from(1u32 << k);
        let dx = f64::from(tile.x() - (ancestor.x() << k));
        let dy = f64::from(tile.y() - (ancestor.y() << k));
        UvRect { offset: [dx * scale, dy * scale], scale }
    }
}

/// What a selected node draws from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binding {
    pub tile: TileAddress,
    /// The tile whose slot is bound (the node's own, or an ancestor).
    pub source: TileAddress,
    pub slot: usize,
    pub uv: UvRect,
}

/// One upload to perform this frame: write `tile` into `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upload {
    pub tile: TileAddress,
    pub slot: usize,
    /// True for re-staging an edited tile into the slot it already holds.
    pub restage: bool,
}

/// The outcome of a frame's residency pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FramePlan {
    /// One per node that could bind something, in the order given.
    pub bindings: Vec<Binding>,
    /// Nodes with neither their own tile nor any ancestor resident.
    pub dropped: Vec<TileAddress>,
    pub uploads: Vec<Upload>,
    pub upload_bytes: usize,
    /// Misses still waiting after this frame's uploads.
    pub pending: usize,
    /// Misses not uploaded this frame, most wanted first: what a loader
    /// should produce next or keep (`plan_streaming`). One whose tile is
    /// not produced yet takes neither budget nor a slot.
    pub requests: Vec<TileAddress>,
    /// True only when every node drew real data for its own level or an
    /// ancestor and nothing was dropped.
    pub covers_body: bool,
    pub resident: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    tile: Option<TileAddress>,
    last_bound: Option<u64>,
    /// The frame whose plan last scheduled a write into this slot: a slot
    /// is written at most once per frame, so it is not handed out again
    /// by the same plan (the first write would be wasted, and two writes
    /// to one layer in one command buffer race).
    written: Option<u64>,
    pinned: bool,
}

/// The slot table.
#[derive(Debug)]
pub struct Residency {
    settings: ResidencySettings,
    slots: Vec<Slot>,
    /// Slot per resident tile, by [`TileAddress::identity`].
    lookup: TileMap<u64, usize>,
    frame: u64,
    restage: Vec<TileAddress>,
    /// Tiles the source failed to produce: never requested again (`None`),
    /// or not before the frame given (a transient failure, retried); by
    /// [`TileAddress::identity`].
    failed: TileMap<u64, Option<u64>>,
}

impl Residency {
    pub fn new(settings: ResidencySettings) -> Residency {
        assert!(settings.slots >= ROOTS, "six slots at least: the roots are pinned");
        Residency {
            settings,
            slots: vec![Slot::default(); settings.slots],
            lookup: TileMap::default(),
            frame: 0,
            restage: Vec::new(),
            failed: TileMap::default(),
        }
    }

    /// A new byte budget for the next plans' uploads (a frame that spent
    /// its time selecting takes fewer tiles).
    pub fn set_upload_budget_bytes(&mut self, bytes: usize) {
        self.settings.upload_budget_bytes = bytes;
    }

    pub fn settings(&self) -> &ResidencySettings {
        &self.settings
    }

    /// The slot holding `tile`, if resident.
    pub fn slot_of(&self, tile: TileAddress) -> Option<usize> {
        self.lookup.get(&tile.identity()).copied()
    }

    /// Every resident tile (in slot order).
    pub fn resident_tiles(&self) -> impl Iterator<Item = TileAddress> + '_ {
        self.slots.iter().filter_map(|s| s.tile)
    }

    pub fn resident(&self) -> usize {
        self.lookup.len()
    }

    /// The edit hook: `tile`, if resident, is re-uploaded into its own slot
    /// ahead of streaming misses.
    pub fn request_restage(&mut self, tile: TileAddress) {
        if self.slot_of(tile).is_some() && !self.restage.contains(&tile) {
            self.restage.push(tile);
        }
    }

    /// The source could not produce `tile` (planned for upload this frame,
    /// or resident and re-staged): it leaves its slot and is never requested
    /// again, so its nodes bind their nearest resident ancestor. The slot
    /// is not handed out again within this frame or while a frame in
    /// flight may read it.
    pub fn mark_failed(&mut self, tile: TileAddress) {
        self.leave(tile);
        self.failed.insert(tile.identity(), None);
    }

    /// The source could not produce `tile` for now (a network error): as
    /// [`Residency::mark_failed`], but it is wanted again from frame
    /// `retry_at` on.
    pub fn mark_unavailable(&mut self, tile: TileAddress, retry_at: u64) {
        self.leave(tile);
        self.failed.insert(tile.identity(), Some(retry_at));
    }

    fn leave(&mut self, tile: TileAddress) {
        if let Some(slot) = self.lookup.remove(&tile.identity()) {
            self.slots[slot].tile = None;
            self.slots[slot].pinned = false;
        }
        self.restage.retain(|&t| t != tile);
    }

    /// This frame's plan scheduled `tile` for upload, but the frame did
    /// not write it after all (its time ran out): it leaves the slot (not
    /// handed out again this frame) and is a miss again, planned anew by
    /// the next frame. Its nodes were bound to an ancestor this frame.
    pub fn withdraw_upload(&mut self, tile: TileAddress) {
        self.leave(tile);
    }

    /// Whether `tile` failed and is not (yet) to be requested again.
    pub fn is_failed(&self, tile: TileAddress) -> bool {
        // Asked for every ancestor of every miss, and almost always empty.
        if self.failed.is_empty() {
            return false;
        }
        match self.failed.get(&tile.identity()) {
            Some(None) => true,
            Some(Some(retry_at)) => self.frame < *retry_at,
            None => false,
        }
    }

    /// How many tiles failed for good.
    pub fn failed(&self) -> usize {
        self.failed.values().filter(|f| f.is_none()).count()
    }

    /// How many tiles failed for now and wait to be retried.
    /// Whether `tile` was given up for good ([`Residency::mark_failed`]),
    /// not only for now.
    pub fn is_given_up(&self, tile: TileAddress) -> bool {
        !self.failed.is_empty() && matches!(self.failed.get(&tile.identity()), Some(None))
    }

    pub fn retrying(&self) -> usize {
        self.failed.values().filter(|f| f.is_some_and(|at| self.frame < at)).count()
    }

    fn evictable(&self, slot: &Slot) -> bool {
        !slot.pinned && slot.last_bound.is_none_or(|f| f + self.settings.frames_in_flight <= self.frame)
    }

    /// Plans frame `frame` for the nodes of a cut (with their projected
    /// errors): binds, then schedules uploads within the budget. Tiles
    /// uploaded now are bindable from the next frame on.
    pub fn plan(&mut self, frame: u64, nodes: &[(TileAddress, f64)]) -> FramePlan {
        self.plan_streaming(frame, nodes, &|_| true)
    }

    /// [`Residency::plan`] for tiles produced off the frame: a miss is
    /// scheduled for upload only once `ready` says its tile is produced;
    /// until then it is listed in `requests` (and counted as pending).
    #[expect(
        clippy::too_many_lines,
        reason = "one frame's residency plan: binds, ancestor stand-ins and budgeted uploads must see one slot table in one pass"
    )]
    pub fn plan_streaming(
        &mut self,
        frame: u64,
        nodes: &[(TileAddress, f64)],
        ready: &dyn Fn(TileAddress) -> bool,
    ) -> FramePlan {
        assert!(frame >= self.frame, "frames advance");
        self.frame = frame;
        let mut plan = FramePlan::default();
        let mut misses: Vec<(TileAddress, f64)> = Vec::new();
        for &(tile, error) in nodes {
            let bound = (0..=tile.depth()).rev().find_map(|d| {
                let ancestor = tile.ancestor_at(d)?;
                self.slot_of(ancestor).map(|slot| (ancestor, slot))
            });
            match bound {
                Some((source, slot)) => {
                    self.slots[slot].last_bound = Some(frame);
                    plan.bindings.push(Binding { tile, source, slot, uv: UvRect::within(tile, source) });
                    if source != tile {
                        misses.push((tile, error));
                    }
                }
                None => {
                    plan.dropped.push(tile);
                    misses.push((tile, error));
                }
            }
        }
        // A node missing its tile also wants the ancestors that would stand
        // in for it, coarse first: the roots before anything else.
        let mut wanted: Vec<(TileAddress, f64)> = Vec::new();
        // Where each wanted tile is in `wanted`: hundreds of misses, each
        // with its ancestors, would make a scan of the list quadratic.
        let mut wanted_at: TileMap<u64, usize> = TileMap::default();
        for &(tile, error) in &misses {
            // Finest first: an ancestor already wanted at least this much
            // had its own ancestors visited with at least that error (the
            // order of `wanted` is decided by the sort below).
            for d in (0..=tile.depth()).rev() {
                let a = tile.ancestor_at(d).expect("d <= depth");
                if self.is_failed(a) {
                    continue;
                }
                match wanted_at.get(&a.identity()) {
                    Some(&k) if wanted[k].1 >= error => break,
                    Some(&k) => wanted[k].1 = error,
                    None if self.slot_of(a).is_none() => {
                        wanted_at.insert(a.identity(), wanted.len());
                        wanted.push((a, error));
                    }
                    None => {}
                }
            }
        }
        // The roots first (coverage: pinned once resident, every node has an
        // ancestor from then on), then larger error first (the nearest
        // ground after a jump), coarse first among equals, then file order
        // (the order `TileAddress` has, its key computed once per tile). An
        // ancestor is wanted with the largest error of the misses under it,
        // so it still comes before each of them: coverage before
        // resolution, chain by chain. (Coarse first across the whole cut
        // loaded every ancestor level of the view before the tiles the
        // nearest ground wanted.)
        let mut wanted: Vec<(TileAddress, f64, TileKey)> = wanted.into_iter().map(|(t, e)| (t, e, t.key())).collect();
        wanted.sort_by(|a, b| {
            (a.0.depth() > 0)
                .cmp(&(b.0.depth() > 0))
                .then(b.1.total_cmp(&a.1))
                .then(a.0.depth().cmp(&b.0.depth()))
                .then(a.2.cmp(&b.2))
        });

        let budget = self.settings.upload_budget_bytes;
        let cost = self.settings.tile_bytes;
        for tile in std::mem::take(&mut self.restage) {
            if plan.upload_bytes + cost > budget {
                self.restage.push(tile);
                continue;
            }
            if let Some(slot) = self.slot_of(tile) {
                self.slots[slot].written = Some(frame);
                plan.uploads.push(Upload { tile, slot, restage: true });
                plan.upload_bytes += cost;
            }
        }
        let mut waiting = 0;
        for (tile, _, _) in wanted {
            if !ready(tile) {
                plan.requests.push(tile);
                waiting += 1;
                continue;
            }
            if plan.upload_bytes + cost > budget {
                plan.requests.push(tile);
                waiting += 1;
                continue;
            }
            let Some(slot) = self.allocate(frame) else {
                plan.requests.push(tile);
                waiting += 1;
                continue;
            };
            if let Some(old) = self.slots[slot].tile.take() {
                self.lookup.remove(&old.identity());
            }
            self.slots[slot] =
                Slot { tile: Some(tile), last_bound: None, written: Some(frame), pinned: tile.depth() == 0 };
            self.lookup.insert(tile.identity(), slot);
            // A retried tile that arrived is not failed any more (a failure
            // of this upload marks it again).
            self.failed.remove(&tile.identity());
            plan.uploads.push(Upload { tile, slot, restage: false });
            plan.upload_bytes += cost;
        }
        plan.pending = waiting + self.restage.len();
        plan.covers_body = plan.dropped.is_empty();
        plan.resident = self.lookup.len();
        plan
    }

    /// A free slot, or the least recently bound evictable one; never one
    /// this frame already writes.
    fn allocate(&self, frame: u64) -> Option<usize> {
        // A slot a failed tile left is free, but may still be read by a
        // frame in flight or written by this one.
        let usable = |s: &Slot| self.evictable(s) && s.written != Some(frame);
        if let Some(free) = self.slots.iter().position(|s| s.tile.is_none() && usable(s)) {
            return Some(free);
        }
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| usable(s))
            .min_by_key(|(k, s)| (s.last_bound.map_or(0, |f| f + 1), *k))
            .map(|(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_not_yet_produced_is_requested_and_takes_no_slot_until_ready() {
        let settings =
            ResidencySettings { slots: min_slots(2), frames_in_flight: 2, upload_budget_bytes: 64, tile_bytes: 1 };
        let mut residency = Residency::new(settings);
        let roots = TileAddress::roots();
        let nodes: Vec<(TileAddress, f64)> = roots.iter().map(|&r| (r, 1.0)).collect();
        let only_first = |t: TileAddress| t == roots[0];
        let plan = residency.plan_streaming(0, &nodes, &only_first);
        assert_eq!(plan.uploads.iter().map(|u| u.tile).collect::<Vec<_>>(), vec![roots[0]]);
        assert_eq!(plan.requests, roots[1..].to_vec(), "the rest are asked for, in order");
        assert_eq!((plan.pending, residency.resident()), (5, 1));
        let plan = residency.plan_streaming(1, &nodes, &|_| true);
        assert_eq!((plan.uploads.len(), plan.requests.len(), plan.pending), (5, 0, 0));
        let plan = residency.plan_streaming(2, &nodes, &|_| false);
        assert!(plan.covers_body && plan.requests.is_empty() && plan.pending == 0, "all resident: {plan:?}");
    }

    #[test]
    fn a_withdrawn_upload_leaves_its_slot_and_is_planned_again_next_frame() {
        let settings =
            ResidencySettings { slots: min_slots(2), frames_in_flight: 2, upload_budget_bytes: 64, tile_bytes: 1 };
        let mut residency = Residency::new(settings);
        let roots = TileAddress::roots();
        let tile = roots[0].children().expect("a root has children")[3];
        let nodes: Vec<(TileAddress, f64)> = roots[1..].iter().map(|&r| (r, 1.0)).chain([(tile, 5.0)]).collect();
        let first = residency.plan(0, &nodes);
        let slot = first.uploads.iter().find(|u| u.tile == tile).expect("planned").slot;
        residency.withdraw_upload(tile);
        assert_eq!((residency.slot_of(tile), residency.is_failed(tile)), (None, false));
        let next = residency.plan(1, &nodes);
        assert!(next.uploads.iter().any(|u| u.tile == tile), "planned again: {:?}", next.uploads);
        let binding = next.bindings.iter().find(|b| b.tile == tile).expect("the node draws");
        assert_eq!(binding.source, roots[0], "on its ancestor meanwhile, never its unwritten slot {slot}");
    }

    #[test]
    fn an_unavailable_tile_is_requested_again_once_its_backoff_has_passed() {
        let settings =
            ResidencySettings { slots: min_slots(2), frames_in_flight: 2, upload_budget_bytes: 64, tile_bytes: 1 };
        let mut residency = Residency::new(settings);
        let tile = TileAddress::roots()[0].children().expect("a root has children")[1];
        let nodes: Vec<(TileAddress, f64)> =
            TileAddress::roots()[1..].iter().map(|&r| (r, 1.0)).chain([(tile, 10.0)]).collect();
        let first = residency.plan(0, &nodes);
        assert!(first.uploads.iter().any(|u| u.tile == tile));
        residency.mark_unavailable(tile, 5);
        assert_eq!((residency.retrying(), residency.failed()), (1, 0));
        for frame in 1..5 {
            let plan = residency.plan(frame, &nodes);
            assert!(!plan.uploads.iter().any(|u| u.tile == tile), "frame {frame}: still backing off");
        }
        let plan = residency.plan(5, &nodes);
        assert!(plan.uploads.iter().any(|u| u.tile == tile), "retried at frame 5");
        assert_eq!(residency.retrying(), 0);
    }

    #[test]
    fn a_failed_tile_is_never_requested_again_and_its_node_keeps_the_ancestor() {
        let settings =
            ResidencySettings { slots: min_slots(2), frames_in_flight: 2, upload_budget_bytes: 64, tile_bytes: 1 };
        let mut residency = Residency::new(settings);
        let root = TileAddress::roots()[0];
        let bad = root.children().expect("a root has children")[2];
        let nodes: Vec<(TileAddress, f64)> =
            TileAddress::roots()[1..].iter().map(|&r| (r, 1.0)).chain([(bad, 9.0)]).collect();
        let first = residency.plan(0, &nodes);
        assert!(first.uploads.iter().any(|u| u.tile == bad), "asked for once: {:?}", first.uploads);
        residency.mark_failed(bad);
        assert_eq!((residency.failed(), residency.is_failed(bad), residency.slot_of(bad)), (1, true, None));
        for frame in 1..6 {
            let plan = residency.plan(frame, &nodes);
            assert!(plan.uploads.iter().all(|u| u.tile != bad), "frame {frame}: asked again");
            let binding = plan.bindings.iter().find(|b| b.tile == bad).expect("the node still draws");
            assert_eq!((binding.source, binding.uv), (root, UvRect::within(bad, root)), "frame {frame}");
            assert_eq!((plan.pending, plan.covers_body), (0, true), "frame {frame}: nothing waits for it");
        }
    }
}
