//! svkit's rules about its slots, decided here and nowhere else, on top of
//! s6's protocol ([`crate::s6`]): what a slot's state means ([`health`]),
//! the records its scripts and watchers leave ([`end`], [`liveness`],
//! [`logger`]), whose it is ([`owner`]), and the views of it: status
//! ([`status_fmt`]), events ([`events`]), metrics ([`metrics`]), waits
//! ([`wait`]). Render, reconcile and svctl all read these rules from here.
//!
//! May import config, state, stray and claim (the inputs of the rules) and s6;
//! never render, reconcile or anything that drives slots.

pub mod end;
pub mod events;
pub mod health;
pub mod liveness;
pub mod logger;
pub mod metrics;
pub mod owner;
pub mod status_fmt;
pub mod wait;
