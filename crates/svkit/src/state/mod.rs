//! What svkit remembers across boots: the desired state an operator last set
//! for a `remember` slot. Persisted as intent (up/down), never as the last
//! observed state, so a slot an operator started comes back after a restart
//! or an image upgrade even if it was crashing at the time.

mod desired;
mod instances;

pub use desired::{read_desired, write_desired, Desired, StateError};
pub use instances::{
    inject, is_registered, load_config, register, registered, unregister, INSTANCES_DIR,
};
