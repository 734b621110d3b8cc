//! How many services s6-svscan supervises: its default, since nothing
//! svkit runs under gives it `-C`.
//!
//! s6-svscan sizes its tables once, at start, from its `-C` (`-c` before
//! s6 2.14 renamed it). s6-overlay 3.2.3.0's stage 1 (s6-linux-init) runs
//! it as `s6-svscan -dN -- /run/service`, with no `-C` and no setting that
//! adds one, and svkit-init runs it without one too: the limit is always
//! the default.

use std::fmt;

/// s6-svscan's default `-C`: s6 2.15.0.0's `src/supervision/s6-svscan.c`
/// (`static uint32_t max = 1000`), documented in its `doc/s6-svscan.html`
/// ("Default is 1000").
pub const DEFAULT_MAX: u32 = 1000;

/// A limit, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub max: u32,
    /// Why the default is assumed, when no s6-overlay runs here; `None`:
    /// s6-overlay's s6-svscan, PID 1, run without `-C`.
    pub assumed: Option<String>,
}

impl Limit {
    /// The default, assumed for `why`.
    pub fn assumed(why: impl Into<String>) -> Limit {
        Limit {
            max: DEFAULT_MAX,
            assumed: Some(why.into()),
        }
    }

    /// The limit of the s6-svscan supervising this container; the default,
    /// assumed and saying why, when s6-overlay does not run it.
    pub fn running() -> Limit {
        match crate::container::supervision() {
            crate::container::Supervision::Overlay => Limit {
                max: DEFAULT_MAX,
                assumed: None,
            },
            crate::container::Supervision::Init(_) => {
                Limit::assumed("svkit-init runs s6-svscan with its default")
            }
            crate::container::Supervision::Missing(why) => {
                Limit::assumed(format!("no s6-overlay here: {why}"))
            }
        }
    }
}

impl fmt::Display for Limit {
    /// `1,000 (its default: no -C in /proc/1/cmdline)`-like, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = super::thousands(self.max);
        match &self.assumed {
            None => write!(f, "{max} (its default: no -C in /proc/1/cmdline)"),
            Some(why) => write!(f, "{max} (its default, assumed; {why})"),
        }
    }
}
