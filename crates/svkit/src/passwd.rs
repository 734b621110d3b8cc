//! Users and groups from `/etc/passwd` and `/etc/group`, read directly.
//!
//! Not through libc's NSS: svkit's binaries are static (glibc), and a
//! static glibc loads NSS modules other than `files` with dlopen, which
//! fails or crashes when the image's libraries do not match it exactly
//! (`initgroups` asks every module, so `group: files systemd` in
//! nsswitch.conf is enough). The files are what s6's own `s6-setuidgid`
//! reads in the same image, and all a container has.

use std::io;
use std::path::{Path, PathBuf};

pub const PASSWD: &str = "/etc/passwd";
pub const GROUP: &str = "/etc/group";

/// One `/etc/passwd` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

/// Who a config's `user` names, as s6-setuidgid takes it: a numeric
/// `uid:gid` (no passwd entry needed) or a login name in `/etc/passwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum User {
    Ids(u32, u32),
    Named(Account),
}

impl User {
    /// The uid and gid it runs as.
    pub fn ids(&self) -> (u32, u32) {
        match self {
            User::Ids(u, g) => (*u, *g),
            User::Named(a) => (a.uid, a.gid),
        }
    }
}

/// Why a `user` names nobody.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    /// A part of `uid:gid` that is not a number.
    #[error("{0}: not a number")]
    NotANumber(String),
    #[error("no user {0} in {PASSWD}")]
    Unknown(String),
    #[error("unable to read {PASSWD}: {}", crate::msg::strerror(.0))]
    Read(io::Error),
}

/// The one rule for a config's `user`: with a `:`, both sides are
/// decimal ids (digits only, each fitting a u32); else a name looked up
/// in `/etc/passwd`.
pub fn lookup(user: &str) -> Result<User, UserError> {
    if let Some(ids) = numeric(user) {
        return ids.map(|(u, g)| User::Ids(u, g));
    }
    // No `/etc/passwd` at all: no entries.
    let text = read_or_empty(Path::new(PASSWD)).map_err(UserError::Read)?;
    let account = find_user(&text, user).map(User::Named);
    account.ok_or_else(|| UserError::Unknown(user.to_string()))
}

/// A `user` with a `:` as its `uid:gid` ([`lookup`]'s rule, no I/O);
/// None for a name.
pub fn numeric(user: &str) -> Option<Result<(u32, u32), UserError>> {
    let (u, g) = user.split_once(':')?;
    let id = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .ok_or_else(|| UserError::NotANumber(s.to_string()))
    };
    Some(id(u).and_then(|u| Ok((u, id(g)?))))
}

/// The groups `name` belongs to: `gid` (its primary group) first, then
/// every `/etc/group` entry that lists it as a member, as `initgroups` does.
pub fn groups(name: &str, gid: u32) -> io::Result<Vec<u32>> {
    Ok(member_of(&read_or_empty(Path::new(GROUP))?, name, gid))
}

/// A missing file reads as empty: no entries.
pub(crate) fn read_or_empty(path: &Path) -> io::Result<String> {
    match std::fs::read(path) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// `name:password:uid:gid:gecos:home:shell`; malformed lines are skipped,
/// the first well-formed match wins (as in libc).
pub fn find_user(text: &str, name: &str) -> Option<Account> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 7 || f[0] != name {
            return None;
        }
        Some(Account {
            uid: f[2].parse().ok()?,
            gid: f[3].parse().ok()?,
            home: PathBuf::from(f[5]),
        })
    })
}

/// `name:password:gid:member,member,...`.
pub fn member_of(text: &str, name: &str, gid: u32) -> Vec<u32> {
    let mut out = vec![gid];
    for line in text.lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 4 || !f[3].split(',').any(|m| m.trim() == name) {
            continue;
        }
        if let Ok(g) = f[2].parse() {
            if !out.contains(&g) {
                out.push(g);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PW: &str = "root:x:0:0:root:/root:/bin/sh\n\
                      broken:x:nope:1::/:/bin/sh\n\
                      short:x:5\n\
                      app:x:10001:10002::/data:/bin/false\n\
                      app:x:1:1::/second:/bin/false\n";

    #[test]
    fn finds_the_first_well_formed_entry() {
        let a = find_user(PW, "app").unwrap();
        assert_eq!(
            (a.uid, a.gid, a.home),
            (10001, 10002, PathBuf::from("/data"))
        );
        assert_eq!(find_user(PW, "root").unwrap().uid, 0);
        assert_eq!(find_user(PW, "broken"), None);
        assert_eq!(find_user(PW, "short"), None);
        assert_eq!(find_user(PW, "nobody"), None);
        assert_eq!(find_user("", "app"), None);
    }

    #[test]
    fn groups_are_the_primary_then_each_listing_the_user() {
        let gr = "app:x:10002:\nwheel:x:10:root,app\naudio:x:29: app \n\
                  other:x:30:apple\nbad:x:zz:app\nagain:x:10002:app\n";
        assert_eq!(member_of(gr, "app", 10002), vec![10002, 10, 29]);
        assert_eq!(member_of(gr, "nobody", 7), vec![7]);
    }

    #[test]
    fn numeric_users_parse_and_names_do_not() {
        assert_eq!(lookup("1000:100").unwrap(), User::Ids(1000, 100));
        assert!(matches!(lookup("1000:x"), Err(UserError::NotANumber(x)) if x == "x"));
        assert!(matches!(lookup(":"), Err(UserError::NotANumber(x)) if x.is_empty()));
        assert!(matches!(lookup("+1:2"), Err(UserError::NotANumber(_))));
        assert!(matches!(
            lookup("4294967296:0"),
            Err(UserError::NotANumber(_))
        ));
        assert!(matches!(
            lookup("no-such-user-svkit"),
            Err(UserError::Unknown(_))
        ));
    }
}
