//! Talking to s6: reading supervise state natively, and control.

pub mod control;
pub mod status;
pub mod tai64;
pub mod wait;
