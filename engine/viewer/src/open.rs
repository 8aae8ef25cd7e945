//! What the command line opens: the packs (grouped by body, stacked), the
//! body the camera starts at and the session's other bodies, each on its
//! packs or analytic ground, the path's journey, and the camera's height.
//!
//! The key decision: a pack that fails at open is said and left out (the
//! body falls back to what is under it), unless `--strict`; and a session of
//! several bodies holds only bodies the system places by ephemeris, refused
//! here before anything is drawn.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use planet_cli::stack::PackOpener;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{EllipsoidSource, GroundStack, HeightSource, ProceduralSource};

use crate::cli::Cli;
use crate::flight::Framing;
use crate::{journey, session};

/// What the command line opens: the body the camera starts at, its
/// ground, where a camera given no place frames it, and the session's other
/// bodies with theirs.
pub(crate) struct Opened {
    pub(crate) body: Body,
    pub(crate) source: Option<Arc<dyn HeightSource>>,
    pub(crate) framing: Option<Framing>,
    /// The camera body's packs by name, bottom first, with their boxes.
    pub(crate) packs: Vec<(String, planet_terrain::pack::Coverage)>,
    /// The other bodies: those the packs, `--body` or the path's keyframes
    /// name besides the camera's, each on its packs or analytic ground.
    pub(crate) others: Vec<(Body, Option<Arc<dyn HeightSource>>)>,
    /// `--path`, its keyframes' bodies resolved.
    pub(crate) journey: Option<journey::Journey>,
}

/// The packs' ground over the ellipsoid (or `--procedural`) for each body
/// the command line names: the packs' bodies (packs of one body stack), the
/// `--body` the camera starts at, and the bodies of the path's keyframes.
/// The camera starts at the path's first keyframe's body, else `--body`,
/// else the first pack's; with one body, and a regional pack alone, the
/// camera frames the pack.
pub(crate) fn open_source(cli: &Cli, opener: &PackOpener) -> Result<Opened> {
    let mut by_body: Vec<(Body, Vec<planet_terrain::ground::StackedPack>)> = Vec::new();
    for pack in open_packs(cli, opener)? {
        match by_body.iter_mut().find(|(body, _)| body.name() == pack.source.body().name()) {
            Some((_, packs)) => packs.push(pack),
            None => by_body.push((pack.source.body().clone(), vec![pack])),
        }
    }
    let named = match &cli.body {
        Some(name) => Some(Body::named(name).with_context(|| format!("--body '{name}'"))?),
        None => None,
    };
    let start = named.clone().or_else(|| by_body.first().map(|(b, _)| b.clone())).unwrap_or_else(Body::earth);
    let journey = match &cli.path {
        Some(file) => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading path {}", file.display()))?;
            Some(journey::Journey::from_json(&text, &start).with_context(|| format!("path {}", file.display()))?)
        }
        None => None,
    };
    let camera_body = journey.as_ref().map_or(start.clone(), |j| j.first().0.clone());
    let mut bodies: Vec<Body> = by_body.iter().map(|(b, _)| b.clone()).collect();
    let named_bodies = [Some(start), Some(camera_body.clone())].into_iter().flatten();
    for body in named_bodies.chain(journey.iter().flat_map(|j| j.bodies().into_iter().cloned())) {
        if !bodies.iter().any(|b| b.name() == body.name()) {
            bodies.push(body);
        }
    }
    if bodies.len() > 1 {
        let time = cli.time.unwrap_or(planet_terrain::camera::Instant::J2000);
        if let Some(unplaced) = bodies.iter().find(|b| planet_terrain::geo::system::placement(b, time).is_none()) {
            // Each body with the packs that brought it, so a stray pack is found.
            let named = |body: &Body| match by_body.iter().find(|(b, _)| b.name() == body.name()) {
                Some((_, packs)) => {
                    let names: Vec<&str> = packs.iter().map(|p| p.name.as_str()).collect();
                    format!("{} ({})", body.name(), names.join(", "))
                }
                None => body.name().to_string(),
            };
            bail!(
                "a session of several bodies places each by its ephemeris, and {} has none (bodies: {}); \
                 give the packs of one body, or of earth, moon and mars",
                unplaced.name(),
                bodies.iter().map(named).collect::<Vec<_>>().join(", ")
            );
        }
    }
    let mut others = Vec::new();
    let mut camera = None;
    for body in bodies {
        let packs = by_body.iter().position(|(b, _)| b.name() == body.name()).map(|k| by_body.remove(k).1);
        let ground = body_ground(cli, &body, packs.unwrap_or_default())?;
        if body.name() == camera_body.name() {
            camera = Some((body, ground));
        } else {
            others.push((body, ground.source));
        }
    }
    let (body, ground) = camera.expect("the camera's body is among the bodies");
    // A regional pack alone is framed; not in a session of several bodies.
    let framing = ground.framing.filter(|_| others.is_empty());
    Ok(Opened { body, source: ground.source, framing, packs: ground.packs, others, journey })
}

/// One body's ground, as [`open_source`] opens it.
struct BodyGround {
    source: Option<Arc<dyn HeightSource>>,
    framing: Option<Framing>,
    packs: Vec<(String, planet_terrain::pack::Coverage)>,
}

/// `packs` (of `body`) stacked over the ellipsoid or `--procedural`, with
/// the framing of the top pack where every pack is regional.
fn body_ground(cli: &Cli, body: &Body, packs: Vec<planet_terrain::ground::StackedPack>) -> Result<BodyGround> {
    let procedural: Option<Arc<dyn HeightSource>> = match cli.procedural {
        Some(seed) => Some(Arc::new(ProceduralSource::new(body.clone(), seed))),
        None => None,
    };
    if packs.is_empty() {
        return Ok(BodyGround { source: procedural, framing: None, packs: Vec::new() });
    }
    let all_regional = packs.iter().all(|p| !p.source.pack().header().coverage.is_global());
    let framing =
        packs.last().filter(|_| all_regional).and_then(|p| Framing::of(p.source.pack().header().coverage, body));
    let base = procedural.unwrap_or_else(|| Arc::new(EllipsoidSource::new(body.clone())));
    let stack = GroundStack::new(base, packs)?;
    let packs = stack.packs();
    let source: Arc<dyn HeightSource> = Arc::new(stack.with_detail(cli.detail.on));
    Ok(BodyGround { source: Some(source), framing, packs })
}

/// The packs that open. One that fails at open (missing, a corrupt header,
/// an unreachable URL) ends the run with `--strict`; without it the run
/// goes on without that pack, its body on the other packs or on analytic
/// ground, and says so once, naming the pack and the cause.
fn open_packs(cli: &Cli, opener: &PackOpener) -> Result<Vec<planet_terrain::ground::StackedPack>> {
    let mut packs = Vec::with_capacity(cli.packs.len());
    for path in &cli.packs {
        match opener.open_packs(std::slice::from_ref(path)) {
            Ok(opened) => packs.extend(opened),
            Err(error) if cli.strict => return Err(error.context("--strict: every pack must open")),
            Err(error) => eprintln!("{}", without_pack_notice(path, &error)),
        }
    }
    Ok(packs)
}

/// What the viewer says of a pack it goes on without.
fn without_pack_notice(path: &std::path::Path, error: &anyhow::Error) -> String {
    format!(
        "warning: drawing without pack {}: {error:#}; its ground falls back to the packs below it or the analytic \
         ground (--strict exits instead)",
        path.display()
    )
}

/// The camera's height above the ellipsoid (given, or the ground plus
/// `--agl`) and above the ground; over the sea "the ground" is the water's
/// surface. The ground is read where the camera
/// reads it in flight ([`session::GROUND_SPACING_M`]), not at the view's detail.
pub(crate) fn camera_height(cli: &Cli, source: Option<&dyn HeightSource>, at: Geodetic) -> Result<(f64, f64)> {
    let ground = match source {
        Some(source) => {
            let depth = depth_for_spacing(source, session::GROUND_SPACING_M);
            GroundReader::new(source, depth).top(at).context("reading the ground under the camera")?
        }
        None => 0.0,
    };
    let height = match (cli.alt, cli.agl) {
        (Some(alt), _) => alt,
        (None, Some(agl)) => ground + agl,
        (None, None) => 20_000_000.0,
    };
    Ok((height, height - ground))
}
