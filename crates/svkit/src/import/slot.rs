//! The slot an importer makes: the keys of a `/etc/svkit/*.json` slot
//! that some format sets, as plain fields. A map of JSON values per slot
//! cost a tree node for every object and a heap string for every key, in
//! the thousands for a big import; render.rs writes these fields straight
//! into the config text.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// One imported slot. A `None`, `false` or empty field is a key the
/// config text leaves out (svkit's default applies).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    /// `instances.names`: a template's instance names.
    pub instances: Option<Vec<String>>,
    /// `type: oneshot`; else a longrun, svkit's default.
    pub oneshot: bool,
    pub command: Vec<String>,
    pub user: Option<String>,
    pub cwd: Option<String>,
    pub env: Pairs<String>,
    /// `autostart: never`; else started at boot, svkit's default.
    pub autostart_never: bool,
    pub depends_on: Pairs<Condition>,
    /// `readiness.notification_fd`.
    pub notification_fd: Option<u32>,
    pub log: Option<Log>,
    pub restart: Option<Restart>,
    /// A signal name without `SIG`.
    pub down_signal: Option<String>,
    pub stop_timeout_ms: Option<u32>,
}

/// `log`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    pub dir: String,
    pub keep: Option<u32>,
    pub max_bytes: Option<u32>,
}

/// `restart`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restart {
    /// `on_clean_exit: stop`.
    pub on_clean_exit_stop: bool,
    pub permanent_exit_codes: Vec<i64>,
    /// `max_deaths` and `within_s`.
    pub window: Option<(i64, i64)>,
}

/// What a `depends_on` entry waits for: the config's own conditions.
pub use crate::config::Condition;

/// Named values as a JSON object holds them: sorted by name, each name
/// once (setting a name again replaces its value), as the config text
/// lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairs<V>(Vec<(String, V)>);

impl<V> Default for Pairs<V> {
    fn default() -> Self {
        Pairs(Vec::new())
    }
}

impl<V> Pairs<V> {
    pub fn set(&mut self, name: String, value: V) {
        match self.0.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (name, value)),
        }
    }

    pub fn remove(&mut self, name: &str) {
        if let Ok(i) = self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            self.0.remove(i);
        }
    }

    pub fn get(&self, name: &str) -> Option<&V> {
        let i = self
            .0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        Some(&self.0[i].1)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }
}

impl<V> FromIterator<(String, V)> for Pairs<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let mut p = Pairs::default();
        for (n, v) in iter {
            p.set(n, v);
        }
        p
    }
}

impl Slot {
    /// Every text of the slot, names of env and dependencies included.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        fn one(s: &Option<String>) -> Option<&str> {
            s.as_deref()
        }
        std::iter::once(self.name.as_str())
            .chain(self.instances.iter().flatten().map(String::as_str))
            .chain(self.command.iter().map(String::as_str))
            .chain(one(&self.user))
            .chain(one(&self.cwd))
            .chain(self.env.iter().flat_map(|(n, v)| [n, v.as_str()]))
            .chain(self.depends_on.iter().map(|(n, _)| n))
            .chain(self.log.iter().map(|l| l.dir.as_str()))
            .chain(one(&self.down_signal))
    }

    /// The slot as a JSON object, as the config text holds it.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            // A slot serializes to an object, and cannot fail to.
            _ => serde_json::Map::new(),
        }
    }
}

/// The slot's keys in the order the config text writes them (render.rs
/// writes the same without serde, for speed).
impl Serialize for Slot {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &self.name)?;
        if let Some(names) = &self.instances {
            m.serialize_entry("instances", &One("names", names))?;
        }
        if self.oneshot {
            m.serialize_entry("type", "oneshot")?;
        }
        m.serialize_entry("command", &self.command)?;
        if let Some(u) = &self.user {
            m.serialize_entry("user", u)?;
        }
        if let Some(c) = &self.cwd {
            m.serialize_entry("cwd", c)?;
        }
        if !self.env.is_empty() {
            m.serialize_entry("env", &self.env)?;
        }
        if self.autostart_never {
            m.serialize_entry("autostart", "never")?;
        }
        if !self.depends_on.is_empty() {
            m.serialize_entry("depends_on", &self.depends_on)?;
        }
        if let Some(fd) = self.notification_fd {
            m.serialize_entry("readiness", &One("notification_fd", fd))?;
        }
        if let Some(l) = &self.log {
            m.serialize_entry("log", l)?;
        }
        if let Some(r) = &self.restart {
            m.serialize_entry("restart", r)?;
        }
        if let Some(sig) = &self.down_signal {
            m.serialize_entry("down_signal", sig)?;
        }
        if let Some(ms) = self.stop_timeout_ms {
            m.serialize_entry("stop_timeout_ms", &ms)?;
        }
        m.end()
    }
}

/// An object of one key.
struct One<'a, T>(&'a str, T);

impl<T: Serialize> Serialize for One<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &self.1)?;
        m.end()
    }
}

impl Serialize for Log {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("dir", &self.dir)?;
        if let Some(k) = self.keep {
            m.serialize_entry("keep", &k)?;
        }
        if let Some(b) = self.max_bytes {
            m.serialize_entry("max_bytes", &b)?;
        }
        m.end()
    }
}

impl Serialize for Restart {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some((deaths, _)) = self.window {
            m.serialize_entry("max_deaths", &deaths)?;
        }
        if self.on_clean_exit_stop {
            m.serialize_entry("on_clean_exit", "stop")?;
        }
        m.serialize_entry("permanent_exit_codes", &self.permanent_exit_codes)?;
        if let Some((_, within)) = self.window {
            m.serialize_entry("within_s", &within)?;
        }
        m.end()
    }
}

impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<V: Serialize> Serialize for Pairs<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (n, v) in &self.0 {
            m.serialize_entry(n, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_hold_each_name_once_in_name_order_as_a_json_object_does() {
        let mut p: Pairs<String> = [("Z", "1"), ("A", "2"), ("M", "3"), ("Z", "4")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        p.remove("M");
        p.remove("nope");
        p.set("B".into(), "5".into());
        let got: Vec<_> = p.iter().map(|(k, v)| (k, v.as_str())).collect();
        assert_eq!(got, [("A", "2"), ("B", "5"), ("Z", "4")]);
        assert_eq!(
            (p.get("Z").map(String::as_str), p.get("M"), p.len()),
            (Some("4"), None, 3)
        );
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"A":"2","B":"5","Z":"4"}"#);
    }
}
