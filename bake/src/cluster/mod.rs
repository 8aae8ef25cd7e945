//! A bake across machines: the plan that cuts the tile set into parts
//! (`plan`), one part baked into a shard file (`shard`, with the tiles it
//! holds and declares: `tiles`; what it hands on: `file`), the levels above
//! the shards baked in waves (`wave`), and the merge that checks every part
//! as one set (`parts`) and lays them out as the pack, whole (`merge`) or in
//! stages on many nodes (`stages`).
//!
//! The key decision: every part computes the plan itself from the same
//! inputs and flags, so a task needs nothing but its index, and the merge
//! writes the bytes a single process writes (the tests compare with `cmp`).

pub(crate) mod file;
pub(crate) mod merge;
pub(crate) mod parts;
pub(crate) mod plan;
pub(crate) mod shard;
pub(crate) mod stages;
pub(crate) mod tiles;
pub(crate) mod wave;
