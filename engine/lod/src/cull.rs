//! Culling a selected cover: frustum and horizon.
//!
//! The key decision: culling only marks nodes. The cover is decided first
//! and never depends on the view direction, so turning the camera cannot
//! open a hole; a culled node is still part of the cut (for balance and
//! edge relations), it is just not drawn.

use crate::camera::view::{Plane, View};
use crate::cut::{Culled, SelectedNode};
use planet_geo::body::Ellipsoid;
use planet_geo::bounds::BoundingSphere;

/// True if `sphere` lies wholly outside one of the frustum's `planes`: the
/// one test culling marks by and refinement weights by.
pub(super) fn outside_frustum(planes: &[Plane], sphere: &BoundingSphere) -> bool {
    planes.iter().any(|p| p.signed_distance(sphere.centre) < -sphere.radius)
}

/// Marks nodes outside the frustum or wholly below the horizon. The horizon
/// occluder is the largest sphere certainly inside the ground: the
/// ellipsoid's smallest radius lowered by the deepest elevation any node
/// reports.
pub(super) fn cull(nodes: &mut [SelectedNode], view: &View, ellipsoid: &Ellipsoid, near: f64) {
    let planes = view.frustum(near);
    let lowest = nodes.iter().map(|n| n.bounds.min_elevation).fold(0.0f64, f64::min);
    let occluder = (ellipsoid.min_radius() + lowest).max(0.0);
    let camera = view.position;
    let camera_distance = camera.length();
    let horizon = (camera_distance > occluder).then(|| {
        let tangent = (camera_distance * camera_distance - occluder * occluder).sqrt();
        let cone = (occluder / camera_distance).asin();
        (tangent, cone, cone.cos() - OFF_CONE_MARGIN)
    });
    for node in nodes.iter_mut() {
        let s = node.sphere;
        if outside_frustum(&planes, &s) {
            node.culled = Some(Culled::Frustum);
            continue;
        }
        if let Some((tangent, cone, off_cone)) = horizon {
            let to_node = s.centre - camera;
            let distance = to_node.length();
            // Hidden only if wholly beyond the occluder's tangent points and
            // wholly inside its shadow cone. The first needs no trig, and a
            // centre clearly off the cone (its cosine well below the cone's)
            // cannot be inside whatever its size: only the rest pay for the
            // two inverse trig calls.
            if distance > s.radius && distance - s.radius > tangent {
                let cosine = to_node.dot(-camera) / (to_node.length_squared() * camera.length_squared()).sqrt();
                if cosine >= off_cone {
                    let off_axis = to_node.angle_between(-camera);
                    let half_angle = (s.radius / distance).asin();
                    if off_axis + half_angle < cone {
                        node.culled = Some(Culled::Horizon);
                    }
                }
            }
        }
    }
}

/// How far below the cone's cosine a centre's cosine must be to skip the
/// exact test: a billionth, ten million times the rounding of either
/// cosine, and acos only widens it into an angle (its slope is at least 1).
const OFF_CONE_MARGIN: f64 = 1e-9;
