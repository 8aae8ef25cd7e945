//! The Rapier world on the ground: bodies, their patches, gravity, the
//! floating origin and edits.
//!
//! The key decision: patches follow bodies, not the camera or the tiles.
//! Each step, every body's cell (see `patch`) is found from its position;
//! a cell no patch holds yet gets one read from the ground, and a patch no
//! body stands in is let go. Gravity is not Rapier's one world vector but a
//! force per body along the ellipsoid normal under it, so "down" stays true
//! however far a body is from the basis's origin. When the awake bodies'
//! centre strays `recentre_m` from the origin, the basis moves there: every
//! body is carried over as an exact rigid motion and the patches are read
//! again on the new lattice. An edit's journaled footprints rebuild the
//! patches they reach; a body the edit buried is lifted onto the new
//! ground and every body on a touched patch is woken, so it follows the
//! ground up or down.

use std::collections::{BTreeMap, BTreeSet};

use glam::{DQuat, DVec3};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::HeightSource;
use planet_terrain::ground::query::{GroundCache, GroundReader, depth_for_spacing};
use planet_terrain::layers::Footprint;
use rapier3d_f64::prelude::{
    ColliderBuilder, ColliderHandle, PhysicsWorld, Pose, RigidBodyBuilder, RigidBodyHandle, TriMeshFlags,
};

use crate::PhysicsError;
use crate::basis::LocalBasis;
use crate::convert::{from_rapier, rotation_from_rapier, rotation_to_rapier, to_rapier};
use crate::patch::{CellKey, PatchGrid};

/// How far above the new ground a buried body is set down, metres (clear
/// of the contact margin, small enough not to be seen as a drop).
const LIFT_CLEARANCE_M: f64 = 1e-3;

/// How far ahead of a moving body contacts are predicted, metres (Rapier's
/// soft CCD): a ball landing at 5 m/s without it sank 1 cm into the
/// ground for a step before the contact pushed it out.
const SOFT_CCD_M: f64 = 0.25;

/// Ground tiles kept between patch builds before the cache starts over.
const MAX_CACHED_TILES: usize = 64;

/// Steps [`GroundWorld::advance`] takes at most per call: a stalled frame
/// slows the simulation down rather than making the next frame slower.
pub const MAX_STEPS_PER_ADVANCE: usize = 16;

/// A body's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Sphere { radius_m: f64 },
    Box { half_extents_m: DVec3 },
}

impl Shape {
    /// The farthest any point of the shape lies from its centre.
    pub fn reach_m(&self) -> f64 {
        match *self {
            Shape::Sphere { radius_m } => radius_m,
            Shape::Box { half_extents_m } => half_extents_m.length(),
        }
    }

    /// How far the shape reaches from its centre along unit `direction`
    /// (local), turned by `rotation` (local).
    fn extent_along(&self, rotation: DQuat, direction: DVec3) -> f64 {
        match *self {
            Shape::Sphere { radius_m } => radius_m,
            Shape::Box { half_extents_m } => (rotation.inverse() * direction).abs().dot(half_extents_m),
        }
    }

    fn validate(&self) -> Result<(), PhysicsError> {
        let ok = match *self {
            Shape::Sphere { radius_m } => radius_m.is_finite() && radius_m > 0.0,
            Shape::Box { half_extents_m } => half_extents_m.is_finite() && half_extents_m.min_element() > 0.0,
        };
        if ok { Ok(()) } else { Err(PhysicsError::Shape("sizes must be finite and positive")) }
    }

    fn collider(&self) -> ColliderBuilder {
        match *self {
            Shape::Sphere { radius_m } => ColliderBuilder::ball(radius_m),
            Shape::Box { half_extents_m: h } => ColliderBuilder::cuboid(h.x, h.y, h.z),
        }
    }
}

/// What the world is told once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Fixed step, seconds.
    pub step_s: f64,
    /// Spacing at which patches read the ground (metres; the depth whose
    /// samples are at most this far apart).
    pub ground_spacing_m: f64,
    /// Side of a patch cell, metres (rounded to whole samples).
    pub cell_m: f64,
    /// How far a patch reaches past its cell, metres: the largest body reach.
    pub margin_m: f64,
    /// Distance from the origin at which the frame follows the bodies.
    pub recentre_m: f64,
    /// Surface gravity, m/s^2, along the ellipsoid normal.
    pub gravity_m_s2: f64,
    /// Coulomb friction of bodies and ground (Rapier averages the two).
    pub friction: f64,
    pub restitution: f64,
    /// Rapier's velocity damping, 1/s: how bodies come to rest (there is no
    /// rolling resistance). Zero for the textbook slope.
    pub linear_damping: f64,
    pub angular_damping: f64,
}

impl Settings {
    /// Defaults for `body`, with its standard surface gravity (Earth's for
    /// a body this crate does not know).
    pub fn for_body(body: &Body) -> Settings {
        let gravity_m_s2 = match body.name() {
            "moon" => 1.62,
            "mars" => 3.72,
            _ => 9.80665,
        };
        Settings {
            step_s: 1.0 / 120.0,
            ground_spacing_m: 1.0,
            cell_m: 16.0,
            margin_m: 8.0,
            recentre_m: 1000.0,
            gravity_m_s2,
            friction: 0.7,
            restitution: 0.1,
            linear_damping: 0.05,
            angular_damping: 0.3,
        }
    }

    fn validate(&self) -> Result<(), PhysicsError> {
        let rule = |name, value: f64, ok: bool, rule| {
            if ok { Ok(()) } else { Err(PhysicsError::Setting { name, value, rule }) }
        };
        rule("step_s", self.step_s, self.step_s > 0.0 && self.step_s <= 0.1, "a step is over 0 and at most 0.1 s")?;
        let positive = "must be finite and positive";
        rule(
            "ground_spacing_m",
            self.ground_spacing_m,
            self.ground_spacing_m.is_finite() && self.ground_spacing_m > 0.0,
            positive,
        )?;
        rule("cell_m", self.cell_m, self.cell_m.is_finite() && self.cell_m > 0.0, positive)?;
        rule("margin_m", self.margin_m, self.margin_m.is_finite() && self.margin_m > 0.0, positive)?;
        rule("recentre_m", self.recentre_m, self.recentre_m.is_finite() && self.recentre_m > 0.0, positive)?;
        rule(
            "gravity_m_s2",
            self.gravity_m_s2,
            self.gravity_m_s2.is_finite() && self.gravity_m_s2 >= 0.0,
            "must be finite, >= 0",
        )?;
        for (name, v) in [
            ("friction", self.friction),
            ("restitution", self.restitution),
            ("linear_damping", self.linear_damping),
            ("angular_damping", self.angular_damping),
        ] {
            rule(name, v, v.is_finite() && v >= 0.0, "must be finite, >= 0")?;
        }
        Ok(())
    }
}

/// A body of the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId(u64);

/// Where a body is, body-fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    pub id: BodyId,
    pub shape: Shape,
    /// Centre, body-fixed metres.
    pub position: DVec3,
    /// The body's axes in the body-fixed frame.
    pub orientation: DQuat,
    /// Body-fixed m/s.
    pub velocity: DVec3,
    pub sleeping: bool,
}

/// Counts of patch work since the world began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchStatistics {
    /// Patches held now.
    pub live: usize,
    /// Patches read from the ground (edits' rebuilds included).
    pub built: usize,
    /// Patches read again because an edit reached them.
    pub rebuilt_for_edits: usize,
    /// Times the frame moved to follow the bodies.
    pub recentres: usize,
}

#[derive(Debug)]
struct Tracked {
    handle: RigidBodyHandle,
    shape: Shape,
    /// The cell the centre is in.
    cell: CellKey,
    /// The cell it came from, kept while the body still stands on its
    /// patch: the contacts there carry on while those of the new one start.
    held: Option<CellKey>,
}

/// Rigid bodies on the ground of one body (planet, moon).
pub struct GroundWorld {
    body: Body,
    settings: Settings,
    depth: u8,
    grid: PatchGrid,
    basis: LocalBasis,
    rapier: PhysicsWorld,
    patches: BTreeMap<CellKey, ColliderHandle>,
    bodies: BTreeMap<BodyId, Tracked>,
    next_id: u64,
    cache: GroundCache,
    statistics: PatchStatistics,
    leftover_s: f64,
}

impl std::fmt::Debug for GroundWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroundWorld")
            .field("body", &self.body.name())
            .field("depth", &self.depth)
            .field("basis", &self.basis)
            .field("bodies", &self.bodies.len())
            .field("statistics", &self.statistics)
            .finish_non_exhaustive()
    }
}

impl GroundWorld {
    /// An empty world over `ground`, its frame at `near` until a body comes.
    pub fn new(ground: &dyn HeightSource, settings: Settings, near: Geodetic) -> Result<GroundWorld, PhysicsError> {
        settings.validate()?;
        let body = ground.body().clone();
        let depth = depth_for_spacing(ground, settings.ground_spacing_m);
        let grid = PatchGrid::new(body.sample_spacing_m(depth), settings.cell_m, settings.margin_m);
        let mut rapier = PhysicsWorld::new();
        rapier.gravity = to_rapier(DVec3::ZERO);
        rapier.integration_parameters.dt = settings.step_s;
        Ok(GroundWorld {
            basis: LocalBasis::at(body.ellipsoid(), near),
            body,
            settings,
            depth,
            grid,
            rapier,
            patches: BTreeMap::new(),
            bodies: BTreeMap::new(),
            next_id: 0,
            cache: GroundCache::default(),
            statistics: PatchStatistics::default(),
            leftover_s: 0.0,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The depth every patch reads the ground at.
    pub fn ground_depth(&self) -> u8 {
        self.depth
    }

    pub fn grid(&self) -> &PatchGrid {
        &self.grid
    }

    pub fn basis(&self) -> &LocalBasis {
        &self.basis
    }

    pub fn statistics(&self) -> PatchStatistics {
        PatchStatistics { live: self.patches.len(), ..self.statistics }
    }

    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Adds a body centred at body-fixed `at`, moving at body-fixed
    /// `velocity`, axes along the local east, north, up.
    pub fn add(
        &mut self,
        ground: &dyn HeightSource,
        shape: Shape,
        at: DVec3,
        velocity: DVec3,
    ) -> Result<BodyId, PhysicsError> {
        shape.validate()?;
        if shape.reach_m() > self.grid.margin_m() {
            return Err(PhysicsError::TooLarge { reach_m: shape.reach_m(), margin_m: self.grid.margin_m() });
        }
        if !at.is_finite() || !velocity.is_finite() {
            return Err(PhysicsError::Shape("position and velocity must be finite"));
        }
        if self.bodies.is_empty() {
            // Nothing to carry over: start the frame where the body is.
            self.recentre(ground, at)?;
        }
        let s = &self.settings;
        let rigid = RigidBodyBuilder::dynamic()
            .translation(to_rapier(self.basis.to_local(at)))
            .linvel(to_rapier(self.basis.direction_to_local(velocity)))
            .linear_damping(s.linear_damping)
            .angular_damping(s.angular_damping)
            .ccd_enabled(true)
            .soft_ccd_prediction(SOFT_CCD_M);
        let collider = shape.collider().friction(s.friction).restitution(s.restitution).density(1000.0);
        let (handle, _) = self.rapier.insert(rigid, collider);
        let id = BodyId(self.next_id);
        self.next_id += 1;
        let cell = self.grid.cell_of(self.basis.to_local(at));
        self.bodies.insert(id, Tracked { handle, shape, cell, held: None });
        self.refresh_patches(ground)?;
        Ok(id)
    }

    /// Takes a body out of the world.
    pub fn remove(&mut self, id: BodyId) -> bool {
        let Some(t) = self.bodies.remove(&id) else { return false };
        self.rapier.remove_body(t.handle);
        true
    }

    /// A body's state, body-fixed.
    pub fn state(&self, id: BodyId) -> Option<BodyState> {
        let t = self.bodies.get(&id)?;
        let rigid = &self.rapier.bodies[t.handle];
        Some(BodyState {
            id,
            shape: t.shape,
            position: self.basis.to_body_fixed(from_rapier(rigid.translation())),
            orientation: self.basis.rotation() * rotation_from_rapier(*rigid.rotation()),
            velocity: self.basis.direction_to_body_fixed(from_rapier(rigid.linvel())),
            sleeping: rigid.is_sleeping(),
        })
    }

    /// Every body's state, in the order they were added.
    pub fn states(&self) -> Vec<BodyState> {
        self.bodies.keys().filter_map(|&id| self.state(id)).collect()
    }

    /// Runs as many fixed steps as `elapsed_s` (plus what earlier calls
    /// left over) holds, at most [`MAX_STEPS_PER_ADVANCE`]; returns how
    /// many ran.
    pub fn advance(&mut self, ground: &dyn HeightSource, elapsed_s: f64) -> Result<usize, PhysicsError> {
        self.leftover_s += elapsed_s.max(0.0);
        let mut steps = 0;
        while self.leftover_s >= self.settings.step_s && steps < MAX_STEPS_PER_ADVANCE {
            self.step(ground)?;
            self.leftover_s -= self.settings.step_s;
            steps += 1;
        }
        if steps == MAX_STEPS_PER_ADVANCE {
            self.leftover_s = self.leftover_s.min(self.settings.step_s);
        }
        Ok(steps)
    }

    /// One fixed step: follow the bodies with the frame and the patches,
    /// pull each body down along its own normal, integrate.
    pub fn step(&mut self, ground: &dyn HeightSource) -> Result<(), PhysicsError> {
        if self.bodies.is_empty() {
            return Ok(());
        }
        self.recentre_if_far(ground)?;
        self.refresh_patches(ground)?;
        self.apply_gravity();
        self.rapier.step();
        Ok(())
    }

    /// The ground changed where `footprints` (the layer stack's journal)
    /// say: patches those reach are read again, buried bodies are lifted
    /// onto the new ground, and bodies on those patches wake. `ground` is
    /// the ground after the edit. Returns how many patches were rebuilt.
    pub fn ground_edited(
        &mut self,
        ground: &dyn HeightSource,
        footprints: &[Footprint],
    ) -> Result<usize, PhysicsError> {
        // The cached tiles were the ground before.
        self.cache = GroundCache::default();
        let ellipsoid = *self.body.ellipsoid();
        let touched: BTreeSet<CellKey> = self
            .patches
            .keys()
            .copied()
            .filter(|&cell| footprints.iter().any(|f| self.grid.touched_by(&self.basis, &ellipsoid, cell, f)))
            .collect();
        for cell in &touched {
            if let Some(handle) = self.patches.remove(cell) {
                self.rapier.remove_collider(handle);
            }
        }
        self.statistics.rebuilt_for_edits += touched.len();
        self.refresh_patches(ground)?;
        let mut reader = GroundReader::new(ground, self.depth);
        for t in
            self.bodies.values().filter(|t| touched.contains(&t.cell) || t.held.is_some_and(|h| touched.contains(&h)))
        {
            let rigid = &mut self.rapier.bodies[t.handle];
            let centre = self.basis.to_body_fixed(from_rapier(rigid.translation()));
            let g = ellipsoid.point_to_geodetic(centre);
            let foot = Geodetic { height: 0.0, ..g };
            let ground_m = reader.top(foot).map_err(|source| PhysicsError::Ground {
                lat: g.latitude.to_degrees(),
                lon: g.longitude.to_degrees(),
                source,
            })?;
            let up = self.basis.direction_to_local(g.normal());
            let extent = t.shape.extent_along(rotation_from_rapier(*rigid.rotation()), up);
            if g.height - extent < ground_m {
                let lifted =
                    ellipsoid.geodetic_to_point(Geodetic { height: ground_m + extent + LIFT_CLEARANCE_M, ..g });
                rigid.set_translation(to_rapier(self.basis.to_local(lifted)), true);
            }
            rigid.wake_up(true);
        }
        Ok(touched.len())
    }

    /// Moves the basis's origin under body-fixed `point`, carrying every
    /// body over unchanged in body-fixed terms, and reads the patches again
    /// on the new lattice.
    pub fn recentre(&mut self, ground: &dyn HeightSource, point: DVec3) -> Result<(), PhysicsError> {
        let new = LocalBasis::under(self.body.ellipsoid(), point);
        let old = self.basis;
        let turn = new.rotation().inverse() * old.rotation();
        for t in self.bodies.values() {
            let rigid = &mut self.rapier.bodies[t.handle];
            let sleeping = rigid.is_sleeping();
            let centre = new.to_local(old.to_body_fixed(from_rapier(rigid.translation())));
            let rotation = (turn * rotation_from_rapier(*rigid.rotation())).normalize();
            let linvel = turn * from_rapier(rigid.linvel());
            let angvel = turn * from_rapier(rigid.angvel());
            rigid.set_position(Pose::from_parts(to_rapier(centre), rotation_to_rapier(rotation)), false);
            rigid.set_linvel(to_rapier(linvel), false);
            rigid.set_angvel(to_rapier(angvel), false);
            if sleeping {
                rigid.sleep();
            }
        }
        for (_, handle) in std::mem::take(&mut self.patches) {
            self.rapier.remove_collider(handle);
        }
        for t in self.bodies.values_mut() {
            t.held = None;
        }
        self.basis = new;
        if !self.bodies.is_empty() {
            self.statistics.recentres += 1;
        }
        self.refresh_patches(ground)?;
        self.apply_gravity();
        Ok(())
    }

    fn recentre_if_far(&mut self, ground: &dyn HeightSource) -> Result<(), PhysicsError> {
        let awake: Vec<DVec3> = self
            .bodies
            .values()
            .map(|t| &self.rapier.bodies[t.handle])
            .filter(|r| !r.is_sleeping())
            .map(|r| from_rapier(r.translation()))
            .collect();
        if awake.is_empty() {
            return Ok(());
        }
        let centre = awake.iter().copied().sum::<DVec3>() / awake.len() as f64;
        if centre.length() > self.settings.recentre_m {
            self.recentre(ground, self.basis.to_body_fixed(centre))?;
        }
        Ok(())
    }

    /// Gives every body's cell a patch (and the cell it left, while it still
    /// stands on that one) and lets go of patches no body needs.
    fn refresh_patches(&mut self, ground: &dyn HeightSource) -> Result<(), PhysicsError> {
        let mut wanted = BTreeSet::new();
        for t in self.bodies.values_mut() {
            let centre = from_rapier(self.rapier.bodies[t.handle].translation());
            let now = self.grid.cell_of(centre);
            if now != t.cell {
                t.held = Some(t.cell);
                t.cell = now;
            }
            t.held = t.held.filter(|&held| held != now && self.grid.holds(held, centre, t.shape.reach_m()));
            wanted.insert(t.cell);
            wanted.extend(t.held);
        }
        let stale: Vec<CellKey> = self.patches.keys().copied().filter(|c| !wanted.contains(c)).collect();
        for cell in stale {
            if let Some(handle) = self.patches.remove(&cell) {
                self.rapier.remove_collider(handle);
            }
        }
        let missing: Vec<CellKey> = wanted.into_iter().filter(|c| !self.patches.contains_key(c)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut cache = std::mem::take(&mut self.cache);
        if cache.len() > MAX_CACHED_TILES {
            cache = GroundCache::default();
        }
        let mut reader = GroundReader::with_cache(ground, self.depth, cache);
        let ellipsoid = *self.body.ellipsoid();
        let mut result = Ok(());
        for cell in missing {
            match self.grid.build(&self.basis, &ellipsoid, &mut reader, cell) {
                Ok(mesh) => {
                    let vertices = mesh.vertices.into_iter().map(to_rapier).collect();
                    let collider =
                        ColliderBuilder::trimesh_with_flags(vertices, mesh.triangles, TriMeshFlags::FIX_INTERNAL_EDGES)
                            .map_err(|e| PhysicsError::Patch {
                                east: cell.east,
                                north: cell.north,
                                reason: e.to_string(),
                            })?
                            .friction(self.settings.friction)
                            .restitution(self.settings.restitution);
                    self.patches.insert(cell, self.rapier.insert_collider(collider, None));
                    self.statistics.built += 1;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.cache = reader.into_cache();
        result
    }

    /// Sets each body's one standing force: its weight along the ellipsoid
    /// normal under it, in the current frame.
    fn apply_gravity(&mut self) {
        let ellipsoid = *self.body.ellipsoid();
        for t in self.bodies.values() {
            let rigid = &mut self.rapier.bodies[t.handle];
            let centre = self.basis.to_body_fixed(from_rapier(rigid.translation()));
            let down = -self.basis.direction_to_local(ellipsoid.point_to_geodetic(centre).normal());
            let weight = down * (self.settings.gravity_m_s2 * rigid.mass());
            rigid.reset_forces(false);
            rigid.add_force(to_rapier(weight), false);
        }
    }
}
