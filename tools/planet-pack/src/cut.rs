//! `planet-pack cut`: the cut a camera would draw, and with
//! `--drawn-slopes` the slopes of what it draws.

use std::io::Write;

use anyhow::{Result, bail};
use planet_terrain::Geodetic;
use planet_terrain::camera::View;
use planet_terrain::ground::HeightSource;
use planet_terrain::lod::{SelectionSettings, select};
use planet_terrain::pack::Coverage;

use crate::{CameraArgs, output, slopes};

/// What `cut` is asked besides the camera.
pub(crate) struct CutAsked {
    pub(crate) budget: usize,
    pub(crate) sse: f64,
    pub(crate) size: (u32, u32),
    pub(crate) json: bool,
    /// `--drawn-slopes`: the slopes drawn over this box.
    pub(crate) slopes_over: Option<Coverage>,
}

/// The deepest a camera may stand below its body's datum: deeper than any
/// body's lowest ground (Earth's trenches reach 11 km), within its body's
/// half radius.
const DEEPEST_CAMERA_M: f64 = 20_000.0;

pub(crate) fn cut(source: &dyn HeightSource, camera: CameraArgs, asked: CutAsked) -> Result<()> {
    let deepest = DEEPEST_CAMERA_M.min(0.5 * source.body().ellipsoid().min_radius());
    if camera.alt < -deepest {
        bail!(
            "--alt {}: the camera would stand inside the body (at most {deepest} m below its datum); a cut is of ground seen from outside",
            camera.alt
        );
    }
    let at = Geodetic::from_degrees(camera.lat, camera.lon, camera.alt);
    let view = View::looking_from(source.body(), at, camera.heading, camera.pitch, 60f64.to_radians(), asked.size);
    let settings = SelectionSettings { target_error_px: asked.sse, node_budget: asked.budget, near_m: 0.1 };
    let cut = select(source, &view, &settings)?;
    let mut s = output::CutSummary::from(&cut);
    if let Some(region) = &asked.slopes_over {
        s.drawn_slopes = Some(slopes::drawn_slopes(source, &cut, region)?);
    }
    if asked.json {
        outln!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        outln!(
            "{} nodes selected, {} drawn ({} culled; {} of measured ground, {} holding filled voids), deepest drawn depth {}, effective error {:.2} px{}, selected in {:.2} ms",
            s.nodes_selected,
            s.nodes_drawn,
            s.nodes_culled,
            s.nodes_drawn_measured,
            s.nodes_drawn_with_filled_voids,
            s.deepest_drawn_depth,
            s.effective_screen_error_pixels,
            if s.stopped_by_budget { " (budget reached)" } else { "" },
            s.selection_cpu_ms
        );
        if let Some(d) = &s.drawn_slopes {
            outln!(
                "drawn slopes over the packs' boxes ({} nodes, {} triangles): median {:.1}, 99th percentile {:.1}, 99.9th {:.1} degrees",
                d.nodes,
                d.triangles,
                d.median_deg,
                d.p99_deg,
                d.p99_9_deg
            );
        }
    }
    Ok(())
}
