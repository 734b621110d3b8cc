//! Exit codes and the fatal-error type of every verb.

use std::fmt;

pub const OK: u8 = 0;
/// The thing checked is not ok (e.g. an invalid config).
pub const NOT_OK: u8 = 1;
pub const USAGE: u8 = 100;
pub const SYSTEM: u8 = 111;

/// A verb's failure: printed as `svctl: fatal: what: why`, exit `code`.
#[derive(Debug)]
pub struct Fatal {
    pub code: u8,
    pub what: String,
    pub why: String,
}

impl Fatal {
    pub fn usage(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Fatal {
            code: USAGE,
            what: what.into(),
            why: why.to_string(),
        }
    }

    pub fn system(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Fatal {
            code: SYSTEM,
            what: what.into(),
            why: why.to_string(),
        }
    }
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A `why` already inside `what` (e.g. a library error's own text).
        if self.why.is_empty() {
            return f.write_str(&self.what);
        }
        write!(f, "{}: {}", self.what, self.why)
    }
}
