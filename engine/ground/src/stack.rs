//! A stack of packs: the ground a user gets from `planet-view BASE INSET...`.
//!
//! The key decision: the stack never fails for want of data. Its bottom is a
//! base that answers everywhere (the body's ellipsoid at 0 m, marked
//! `Invented`, or a procedural source), and each pack lies over everything
//! below it inside its coverage box, its samples unaltered up to the box's
//! edge (`InsetSource`: no blend into what lies below). A regional pack
//! alone is therefore flyable: outside its box the ellipsoid stands in, and every
//! consumer can tell that ground from measured ground by its provenance.
//! A stack is of one body; packs of two bodies are refused, naming both.

use crate::BoundsAt;
use std::sync::Arc;

use crate::{HeightSource, InsetSource, PackSource, Provenance, SourceError, SourceTile, TileBounds, locate};
use planet_geo::address::{TILE_STORED_SAMPLE_COUNT, TileAddress};
use planet_geo::body::{Body, Geodetic};
use planet_packfile::Coverage;
use planet_packfile::codec::{VoidFill, Voids};

/// The body's reference ellipsoid as ground: 0 m everywhere, invented, its
/// every sample of the [no-data class](crate::NO_DATA_CLASS).
#[derive(Clone, Debug)]
pub struct EllipsoidSource {
    body: Body,
}

impl EllipsoidSource {
    pub fn new(body: Body) -> EllipsoidSource {
        EllipsoidSource { body }
    }
}

impl HeightSource for EllipsoidSource {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.body
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        Ok(SourceTile {
            tile,
            heights: vec![0.0; TILE_STORED_SAMPLE_COUNT],
            classes: Some(vec![crate::NO_DATA_CLASS; TILE_STORED_SAMPLE_COUNT]),
            colour: None,
            provenance: Provenance::Invented,
            voids: None,
        })
    }

    fn bounds(&self, _tile: TileAddress, _reads: crate::Reads) -> Result<TileBounds, SourceError> {
        Ok(TileBounds {
            min_elevation: 0.0,
            max_elevation: 0.0,
            geometric_error: 0.0,
            provenance: Provenance::Invented,
            voids: false,
        })
    }

    fn data_depth(&self) -> Option<u8> {
        None
    }

    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}

/// Why a stack could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    #[error("{pack} is a pack of {pack_body}, but {first} is of {first_body}: a stack holds one body")]
    DifferentBodies { first: String, first_body: String, pack: String, pack_body: String },
}

/// One pack of a stack, with the name it was given by (its path).
#[derive(Clone, Debug)]
pub struct StackedPack {
    pub name: String,
    pub source: PackSource,
}

/// Ground from a base and packs over it, later packs over earlier ones.
#[derive(Clone, Debug)]
pub struct GroundStack {
    top: Arc<dyn HeightSource>,
    base: Arc<dyn HeightSource>,
    /// Bottom first.
    layers: Vec<StackedPack>,
    /// Whether each pack's ground carries detail past its own data depth.
    detail: bool,
}

impl GroundStack {
    /// Packs over `base` (the ellipsoid, a procedural source, ...), which
    /// must be of the packs' body.
    pub fn new(base: Arc<dyn HeightSource>, packs: Vec<StackedPack>) -> Result<GroundStack, StackError> {
        let mut top = base.clone();
        let mut layers = Vec::with_capacity(packs.len());
        let mut first: Option<(String, Body)> = None;
        for pack in packs {
            let body = pack.source.body().clone();
            match &first {
                Some((first, first_body)) if !same_body(first_body, &body) => {
                    return Err(StackError::DifferentBodies {
                        first: first.clone(),
                        first_body: first_body.to_string(),
                        pack: pack.name,
                        pack_body: body.to_string(),
                    });
                }
                Some(_) => {}
                None => {
                    if !same_body(top.body(), &body) {
                        return Err(StackError::DifferentBodies {
                            first: "the base".to_owned(),
                            first_body: top.body().to_string(),
                            pack: pack.name,
                            pack_body: body.to_string(),
                        });
                    }
                    first = Some((pack.name.clone(), body));
                }
            }
            top = Arc::new(InsetSource::new(top, pack.source.clone()));
            layers.push(pack);
        }
        Ok(GroundStack { top, base, layers, detail: false })
    }

    /// The same stack with detail synthesized past each pack's own height
    /// data depth (`on`), or without (`off`, the packs' samples alone). Per
    /// pack, not over the whole stack: an inset's deeper data must not move
    /// the ground outside its box, and each pack's detail continues its own
    /// data's roughness, by the law it recorded when it was baked.
    pub fn with_detail(&self, on: bool) -> GroundStack {
        let mut top = self.base.clone();
        for pack in &self.layers {
            let header = pack.source.pack().header();
            let ground: Arc<dyn HeightSource> =
                if on { Arc::new(pack.source.with_detail()) } else { Arc::new(pack.source.clone()) };
            top = Arc::new(InsetSource::over(top, ground, header.coverage));
        }
        GroundStack { top, base: self.base.clone(), layers: self.layers.clone(), detail: on }
    }

    /// Whether the packs' ground carries synthesized detail.
    pub fn detail(&self) -> bool {
        self.detail
    }

    /// Packs over their body's ellipsoid at 0 m: the stack every command
    /// builds from `PACK...`. `None` when `packs` is empty.
    pub fn of_packs(packs: Vec<StackedPack>) -> Result<Option<GroundStack>, StackError> {
        let Some(first) = packs.first() else { return Ok(None) };
        let base = Arc::new(EllipsoidSource::new(first.source.body().clone()));
        GroundStack::new(base, packs).map(Some)
    }

    /// The packs themselves, bottom first.
    pub fn stacked_packs(&self) -> &[StackedPack] {
        &self.layers
    }

    /// The packs, bottom first: (name, coverage).
    pub fn packs(&self) -> Vec<(String, Coverage)> {
        self.layers.iter().map(|p| (p.name.clone(), p.source.pack().header().coverage)).collect()
    }

    /// Where the ground at one point comes from: the topmost pack whose box
    /// holds it (and that has data there, not a void with a pack below),
    /// else the base, each read at its own height data depth. This speaks
    /// for the point, so a place inside a regional pack's box reads as
    /// measured even where its tile reaches past the box, and a void the
    /// bake filled reads as filled where no pack below shows through it.
    pub fn origin_at(&self, at: Geodetic) -> Result<GroundOrigin, SourceError> {
        self.origin_at_with(at, &mut OriginMemo::default())
    }

    /// [`GroundStack::origin_at`] for a run of nearby points (a map's row):
    /// `memo` keeps each layer's last tile and its provenance, so the index
    /// lookup is made once per tile, not once per point.
    pub fn origin_at_with(&self, at: Geodetic, memo: &mut OriginMemo) -> Result<GroundOrigin, SourceError> {
        let (lat, lon) = (at.latitude.to_degrees(), at.longitude.to_degrees());
        if memo.last.len() != self.layers.len() + 1 {
            memo.last = vec![None; self.layers.len() + 1];
        }
        let mut through_void_of = None;
        for (layer, pack) in self.layers.iter().enumerate().rev() {
            let header = pack.source.pack().header();
            if !header.coverage.contains(lat, lon) {
                continue;
            }
            let (tile, u, v) = locate(self.body(), at, header.height_data_depth);
            let Some((provenance, voids)) = memo.provenance(layer, tile, || pack.source.tile_bounds(tile))? else {
                continue;
            };
            let filled = if voids { memo.void_fill(layer, tile, u, v, || pack.source.tile(tile))? } else { None };
            // The ground below shows through a void as `InsetSource` draws
            // it: over another pack, or a base with data.
            if filled.is_some() && (layer > 0 || self.base.data_depth().is_some()) {
                through_void_of.get_or_insert_with(|| pack.name.clone());
                continue;
            }
            return Ok(GroundOrigin { provenance, pack: Some(pack.name.clone()), tile, filled, through_void_of });
        }
        let (tile, _, _) = locate(self.body(), at, self.base.data_depth().unwrap_or(0));
        let base = self.layers.len();
        let (provenance, _) =
            memo.provenance(base, tile, || self.base.tile_bounds(tile))?.ok_or(SourceError::NoData { tile })?;
        Ok(GroundOrigin { provenance, pack: None, tile, filled: None, through_void_of })
    }
}

/// A tile's provenance, and whether it holds voids.
type TileOrigin = (Provenance, bool);

/// Each layer's last tile asked by [`GroundStack::origin_at_with`] and its
/// provenance (`None`: the layer has no data there). A memo belongs to one
/// stack: it knows layers by their place in the stack.
#[derive(Clone, Debug, Default)]
pub struct OriginMemo {
    last: Vec<Option<(TileAddress, Option<TileOrigin>)>>,
    /// Each layer's last tile with voids, and its voids.
    voids: Vec<Option<(TileAddress, Option<Voids>)>>,
}

impl OriginMemo {
    /// The provenance of `tile` in `layer`, and whether it holds voids,
    /// from the memo or from `bounds` (a `NoData` answer is remembered as
    /// `None`; any other error is returned and not remembered).
    fn provenance(
        &mut self,
        layer: usize,
        tile: TileAddress,
        bounds: impl FnOnce() -> Result<TileBounds, SourceError>,
    ) -> Result<Option<TileOrigin>, SourceError> {
        if let Some((t, p)) = self.last[layer]
            && t == tile
        {
            return Ok(p);
        }
        let provenance = match bounds() {
            Ok(b) => Some((b.provenance, b.voids)),
            Err(SourceError::NoData { .. }) => None,
            Err(e) => return Err(e),
        };
        self.last[layer] = Some((tile, provenance));
        Ok(provenance)
    }

    /// How the sample of `tile` in `layer` nearest stored coordinates
    /// `u, v` was filled, `None` where it was no void; the tile's voids
    /// from the memo or from `read`.
    fn void_fill(
        &mut self,
        layer: usize,
        tile: TileAddress,
        u: f64,
        v: f64,
        read: impl FnOnce() -> Result<SourceTile, SourceError>,
    ) -> Result<Option<VoidFill>, SourceError> {
        if self.voids.len() != self.last.len() {
            self.voids = vec![None; self.last.len()];
        }
        if !matches!(&self.voids[layer], Some((t, _)) if *t == tile) {
            self.voids[layer] = Some((tile, read()?.voids));
        }
        let Some((_, Some(voids))) = &self.voids[layer] else { return Ok(None) };
        let at = |w: f64| w.round().clamp(-1.0, planet_geo::address::TILE_CELLS as f64 + 1.0) as i32;
        Ok(voids.samples[planet_packfile::codec::stored_index(at(u), at(v))].then_some(voids.fill))
    }
}

/// Where the ground at a point comes from (see [`GroundStack::origin_at`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GroundOrigin {
    pub provenance: Provenance,
    /// The topmost pack that contributes there; `None` where only the base does.
    pub pack: Option<String>,
    /// That pack's tile over the point at its height data depth (the base's
    /// otherwise).
    pub tile: TileAddress,
    /// How the pack's bake filled the point, where it was a void of its
    /// DEM and no pack below shows through; `None` elsewhere.
    pub filled: Option<VoidFill>,
    /// The topmost pack whose void the point shows this ground through
    /// (its bake's fill set aside); `None` where no pack above had a void.
    pub through_void_of: Option<String>,
}

fn same_body(a: &Body, b: &Body) -> bool {
    a.name() == b.name() && a.ellipsoid().radii() == b.ellipsoid().radii()
}

impl HeightSource for GroundStack {
    fn body(&self) -> &Body {
        self.top.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        self.top.tile(tile)
    }

    fn bounds(&self, tile: TileAddress, reads: crate::Reads) -> Result<TileBounds, SourceError> {
        self.top.bounds(tile, reads)
    }

    /// The top holds every layer (and the base) through its insets.
    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![&*self.top]
    }

    fn data_depth(&self) -> Option<u8> {
        self.top.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.top.colour_data_depth()
    }
}
