//! Redirect: `docker run IMAGE app gateway run` lands in a supervised slot.
//!
//! [`route`] and [`decide`] are pure (facts come in as arguments);
//! [`execute`] ensures the slot, wants it up and starts its companions;
//! [`keep_alive`] blocks in-process until a stop signal.

mod decide;
mod deps;
mod execute;
mod hold;

pub use decide::{decide, route, shown, Decision, Facts, RouteError};
pub use deps::{await_deps, DepsError, DEPENDS_TIMEOUT};
pub use execute::{breadcrumb, displace, execute, refusal, RedirectError};
pub use hold::{exec_keep_alive, keep_alive};
