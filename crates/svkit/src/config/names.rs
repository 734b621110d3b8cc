//! Syntax rules for the strings of a config: slot and instance names, env
//! names, users, absolute paths, signals. Each check returns the reason a
//! value is refused, worded to follow "`value`: ".

/// Longest slot name, in bytes, after `{instance}` expansion.
pub const MAX_NAME_BYTES: usize = 64;

/// The one template variable.
pub const INSTANCE_VAR: &str = "{instance}";

/// s6 and s6-rc reserve these prefixes in a scandir.
const RESERVED_PREFIXES: &[&str] = &["s6rc-", "s6-rc-"];

/// Check a slot name (already expanded).
pub fn check_slot_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name must not be empty".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a name is at most {MAX_NAME_BYTES} bytes (this one is {})",
            name.len()
        ));
    }
    if name.starts_with('.') {
        return Err("a name must not start with `.` (s6-svscan ignores such entries)".into());
    }
    if name.contains('/') {
        return Err("a name must not contain `/`".into());
    }
    if name.as_bytes().windows(2).any(|w| w == b"..") {
        return Err("a name must not contain `..`".into());
    }
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err("a name must not contain uppercase letters".into());
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        return Err("a name must start with a lowercase letter or a digit".into());
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "a name may only contain a-z, 0-9, `.`, `_` and `-` (found {c:?})"
        ));
    }
    if let Some(p) = RESERVED_PREFIXES.iter().find(|p| name.starts_with(*p)) {
        return Err(format!("the prefix `{p}` is reserved by s6-rc"));
    }
    Ok(())
}

/// Instance names follow the slot-name rules too: they end up in slot names
/// and, through templates, in paths.
pub use self::check_slot_name as check_instance_name;

/// An env name ([`crate::container::is_env_name`]).
pub fn check_env_name(name: &str) -> Result<(), String> {
    if crate::container::is_env_name(name) {
        Ok(())
    } else {
        Err("an environment variable name must match [A-Za-z_][A-Za-z0-9_]*".into())
    }
}

/// A user: a login name (`[a-z_][a-z0-9_.-]*`, at most 32 bytes, as
/// useradd accepts) or a numeric `uid:gid`, both of which s6-setuidgid takes.
pub fn check_user(user: &str) -> Result<(), String> {
    if let Some(ids) = crate::passwd::numeric(user) {
        return ids
            .map(drop)
            .map_err(|_| "a user is a login name or a numeric `uid:gid`".into());
    }
    let mut it = user.bytes();
    let ok = user.len() <= 32
        && it
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && it.all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        });
    if ok {
        Ok(())
    } else {
        Err("a user name must match [a-z_][a-z0-9_.-]* and be at most 32 bytes".into())
    }
}

/// An absolute, normalized path without control characters. Returns the
/// path with repeated and trailing slashes removed.
pub fn check_abs_path(p: &str) -> Result<String, String> {
    if !p.starts_with('/') {
        return Err("must be an absolute path (starting with `/`)".into());
    }
    if let Some(c) = p.chars().find(|c| c.is_control()) {
        return Err(format!("must not contain control characters (found {c:?})"));
    }
    let mut out = String::with_capacity(p.len().max(1));
    for comp in p.split('/').filter(|c| !c.is_empty()) {
        if comp == "." || comp == ".." {
            return Err(format!("must not contain a `{comp}` component"));
        }
        out.push('/');
        out.push_str(comp);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// A plain file name (for `require_file`).
pub fn check_file_name(n: &str) -> Result<(), String> {
    if n.is_empty() || n == "." || n == ".." || n.contains('/') || n.contains('\0') {
        Err("must be a plain file name (no `/`, not `.` or `..`)".into())
    } else {
        Ok(())
    }
}

/// Signals accepted for `down_signal`, as s6-supervise's `down-signal` file
/// takes them. Returns the canonical `SIGNAME` spelling.
pub use crate::s6::signal::down_signal as check_signal;

/// Every argv/env string reaches a C program: NUL cannot be passed.
pub fn check_no_nul(s: &str) -> Result<(), String> {
    if s.contains('\0') {
        Err("contains a NUL character, which cannot be passed to a program".into())
    } else {
        Ok(())
    }
}

/// The longest string the kernel passes to a program, its NUL included
/// (`MAX_ARG_STRLEN`, 32 pages of 4 KiB): execve refuses a longer argument
/// or `NAME=value` with E2BIG, and the slot would loop on it.
pub const MAX_ARG_STRLEN: usize = 32 * 4096;

/// An argv or environment string the kernel will pass (`what` is how the
/// message names it, e.g. `NAME=value`).
pub fn check_arg_len(len: usize, what: &str) -> Result<(), String> {
    if len < MAX_ARG_STRLEN {
        Ok(())
    } else {
        Err(format!(
            "{what} is {len} bytes: the kernel passes no argument or environment string over {} bytes",
            MAX_ARG_STRLEN - 1
        ))
    }
}

/// The value of `w` among `words`; else why not, as "`w`: expected
/// \"a\", \"b\" or \"c\"".
pub fn one_of<T: Copy>(w: &str, words: &[(&str, T)]) -> Result<T, String> {
    if let Some((_, v)) = words.iter().find(|(k, _)| *k == w) {
        return Ok(*v);
    }
    let mut q: Vec<String> = words.iter().map(|(k, _)| format!("\"{k}\"")).collect();
    let last = q.pop().unwrap_or_default();
    Err(format!("`{w}`: expected {} or {last}", q.join(", ")))
}

/// Truthy values for `if_env` and opt-out variables: `1`, `true`, `yes`,
/// in any case.
pub fn is_truthy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_names() {
        for ok in ["a", "gateway-default", "x.y_z-1", "0"] {
            assert!(check_slot_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", ".a", "a/b", "a..b", "A", "-a", "_a", "a b", "s6rc-x", "s6-rc-x", "é",
        ] {
            assert!(check_slot_name(bad).is_err(), "{bad}");
        }
        assert!(check_slot_name(&"a".repeat(64)).is_ok());
        assert!(check_slot_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn paths() {
        assert_eq!(check_abs_path("/a//b/").unwrap(), "/a/b");
        assert!(check_abs_path("a/b").is_err());
        assert!(check_abs_path("/a/../b").is_err());
        assert!(check_abs_path("/a/\nb").is_err());
    }

    #[test]
    fn users_envs_signals() {
        assert!(check_user("app").is_ok());
        assert!(check_user("1000:1000").is_ok());
        assert!(check_user("App").is_err());
        assert!(check_user("a:b").is_err());
        assert!(check_env_name("_A1").is_ok());
        assert!(check_env_name("1A").is_err());
        assert!(check_env_name("A-B").is_err());
        assert_eq!(check_signal("TERM").unwrap(), "SIGTERM");
        assert_eq!(check_signal("SIGHUP").unwrap(), "SIGHUP");
        assert!(check_signal("SIGFOO").is_err());
        assert!(is_truthy("YES") && !is_truthy("0"));
    }
}
