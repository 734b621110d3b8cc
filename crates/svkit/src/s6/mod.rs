//! Talking to s6: reading supervise state natively, control, and what
//! that state means to svkit ([`health`]).

pub mod control;
pub mod end;
pub mod events;
pub mod health;
pub mod logger;
pub mod metrics;
pub mod status;
pub mod tai64;
pub mod wait;
