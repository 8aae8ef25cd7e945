//! What changed between two layer stacks, as the journal would say it.
//!
//! The key decision: a consumer that holds only the layer stack as it was
//! (the viewer's physics, which sees the scene after each edit, when the
//! renderer has already drained the journal) recovers the same footprints
//! the journal recorded: every layer whose record differs by order, before
//! and after, contributes its footprint. A test holds this to the journal
//! itself for every kind of mutation.

use planet_terrain::geo::body::Ellipsoid;
use planet_terrain::layers::{Footprint, LayerStack};

/// Footprints of every layer inserted, removed or rewritten between
/// `before` and `after` (both footprints of a rewritten one).
pub fn changed_footprints(ellipsoid: &Ellipsoid, before: &LayerStack, after: &LayerStack) -> Vec<Footprint> {
    let mut footprints = Vec::new();
    for layer in before.layers() {
        if after.get(layer.order) != Some(layer) {
            footprints.push(layer.footprint(ellipsoid));
        }
    }
    for layer in after.layers() {
        if before.get(layer.order) != Some(layer) {
            footprints.push(layer.footprint(ellipsoid));
        }
    }
    footprints
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::geo::body::Body;
    use planet_terrain::layers::{Layer, LayerKind};

    fn crater(order: u32, lon: f64) -> Layer {
        Layer { order, kind: LayerKind::Crater { lat: 10.0, lon, radius_m: 50.0, depth_m: 5.0, rim_m: 1.0 } }
    }

    /// Each mutation's journal and the stacks' difference name the same
    /// regions (as sets: the journal may list a footprint twice).
    #[test]
    fn the_difference_of_two_stacks_is_what_the_journal_recorded() {
        let body = Body::earth();
        let e = body.ellipsoid();
        let mut stack = LayerStack::new();
        stack.insert(e, crater(1, 20.0)).expect("insert");
        stack.insert(e, crater(2, 21.0)).expect("insert");
        stack.drain_journal();
        type Mutation<'a> = Box<dyn Fn(&mut LayerStack) + 'a>;
        let mutations: Vec<Mutation> = vec![
            Box::new(|s| s.insert(e, crater(3, 22.0)).map(|_| ()).expect("insert")),
            Box::new(|s| s.rewrite(e, crater(1, 20.5)).map(|_| ()).expect("rewrite")),
            Box::new(|s| s.remove(e, 2).map(|_| ()).expect("remove")),
            Box::new(|s| s.reorder(e, 3, 7).expect("reorder")),
        ];
        let key = |f: &Footprint| (f.centre.to_array().map(f64::to_bits), f.radius.to_bits());
        for mutate in mutations {
            let before = stack.clone();
            mutate(&mut stack);
            let mut journal: Vec<_> = stack.drain_journal().iter().map(key).collect();
            let mut diff: Vec<_> = changed_footprints(e, &before, &stack).iter().map(key).collect();
            journal.sort();
            journal.dedup();
            diff.sort();
            diff.dedup();
            assert_eq!(diff, journal);
        }
    }
}
