//! Freeform queries on the Coons BVH (Kim et al. 2011 §4–5): collision within a tolerance,
//! certified minimum distance by branch and bound, and point–surface distance.

pub mod bound;
pub mod collide;
pub mod distance;
pub mod point;

pub use bound::{FreeformObject, QueryCell};
pub use collide::{
    freeform_collide, freeform_collide_any, CollisionPair, FreeformContact, FreeformContacts,
};
pub use distance::{freeform_distance, DistanceOptions, FreeformDistance};
pub use point::{point_surface_distance, PointDistance};
