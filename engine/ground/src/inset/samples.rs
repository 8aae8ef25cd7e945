//! One sample of the inset taken over the ground below, and what it is then.
//!
//! The key decision: measured ground is never "no data", and a mix of
//! ground is as measured as its least measured part.

use crate::{Provenance, SourceTile};

/// Stored sample `k` of `from` into `into`: its height, colour and class
/// (where both have them) and whether it was a void.
pub(super) fn take_sample(into: &mut SourceTile, from: &SourceTile, k: usize) {
    into.heights[k] = from.heights[k];
    let void = from.voids.as_ref().is_some_and(|v| v.samples[k]);
    if let Some(voids) = into.voids.as_mut() {
        voids.samples[k] = void;
    } else if let Some(v) = from.voids.as_ref().filter(|_| void) {
        let mut samples = vec![false; into.heights.len()];
        samples[k] = true;
        into.voids = Some(planet_packfile::codec::Voids { fill: v.fill, samples });
    }
    if let (Some(dst), Some(src)) = (into.colour.as_mut(), from.colour.as_ref()) {
        dst[k] = src[k];
    }
    if let Some(dst) = into.classes.as_mut() {
        // Measured ground is never "no data": without classes of its own it
        // keeps the ground below's, or none.
        dst[k] = from.classes.as_ref().map_or(dst[k], |src| src[k]);
        if dst[k] == crate::NO_DATA_CLASS {
            dst[k] = 0;
        }
    }
}

/// The ground below's classes under measured samples: its own, but "no
/// data" turned unknown (0); `None` where nothing is left to say.
pub(super) fn measured_classes(classes: Option<Vec<u8>>) -> Option<Vec<u8>> {
    let mut classes = classes?;
    for class in classes.iter_mut().filter(|c| **c == crate::NO_DATA_CLASS) {
        *class = 0;
    }
    classes.iter().any(|&c| c != 0).then_some(classes)
}

/// The provenance of ground where both `below` and `above` show: the
/// above's where it is measured (a tile holding measured ground counts
/// as measured ground), else the less measured of the two.
pub(crate) fn mixed_provenance(below: Provenance, above: Provenance) -> Provenance {
    if above.is_measured() { above } else { least_measured(below, above) }
}

pub(super) fn least_measured(a: Provenance, b: Provenance) -> Provenance {
    match (a, b) {
        (Provenance::Invented, _) | (_, Provenance::Invented) => Provenance::Invented,
        (Provenance::Resampled { from_depth: x }, Provenance::Resampled { from_depth: y }) => {
            Provenance::Resampled { from_depth: x.min(y) }
        }
        (r @ Provenance::Resampled { .. }, _) | (_, r @ Provenance::Resampled { .. }) => r,
        _ => Provenance::Measured,
    }
}
