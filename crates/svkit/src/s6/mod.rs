//! s6's own protocol, and nothing of svkit's: the supervise status bytes
//! ([`status`], [`tai64`]), the control FIFO's `s6-svc` bytes ([`control`]),
//! event FIFOs ([`fifo`]) and waking on a supervise dir's changes
//! ([`wait`]). What those states mean to svkit is [`crate::slot`]'s.
//!
//! Imports nothing of svkit's domain (only `msg`, `clock`, `fsutil`,
//! `container`): the layering test holds it to that.

pub mod control;
pub mod fifo;
pub mod status;
pub mod tai64;
pub mod wait;
