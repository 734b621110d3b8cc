//! Whether the users slots drop to exist where the slots run. Validation
//! checks how a `user` is spelled; whether a passwd database knows it is a
//! fact of a machine, checked here against the one the caller names: this
//! system's (the boot, `plan`, `apply`) or an image's root (`svctl check
//! --root`). `s6-setuidgid NAME` looks the name up when the slot starts;
//! `uid:gid` needs no entry.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::Path;

use super::error::{Diagnostic, Site};
use super::model::Model;

/// A passwd database: its text, or why it could not be read, and how
/// messages name it. This system's is read at the first name looked up:
/// a boot whose slots all run as root reads no passwd file.
pub struct PasswdFile {
    text: OnceCell<Result<String, String>>,
    name: String,
}

impl PasswdFile {
    /// This system's database: `/etc/passwd`, read as `s6-setuidgid` (and
    /// svkit's static binaries) read it, never through NSS modules.
    pub fn system() -> PasswdFile {
        PasswdFile {
            text: OnceCell::new(),
            name: "this system's passwd database".into(),
        }
    }

    /// The `etc/passwd` file of an image's root directory: the file a
    /// static `s6-setuidgid` in that image reads.
    pub fn under_root(root: &Path) -> std::io::Result<PasswdFile> {
        let path = root.join("etc/passwd");
        let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
        let name = crate::msg::path(&path).to_string();
        Ok(PasswdFile {
            text: OnceCell::from(Ok(text)),
            name,
        })
    }

    /// Whether `name` has an entry; `Err` says why the database could not
    /// answer.
    fn exists(&self, name: &str) -> Result<bool, String> {
        let text = self.text.get_or_init(|| {
            crate::passwd::read_or_empty(Path::new(crate::passwd::PASSWD))
                .map_err(|e| crate::msg::strerror(&e))
        });
        let text = text.as_ref().map_err(Clone::clone)?;
        Ok(crate::passwd::find_user(text, name).is_some())
    }
}

/// How many slot names a message lists before "and N more".
const NAMED_SLOTS: usize = 3;

/// One diagnostic per `user` value (where it was written) that `db` does
/// not know, naming the slots that would drop to it. Slots that do not
/// drop (`root`) and numeric `uid:gid` users are not looked up.
pub fn unknown_users(model: &Model, db: &PasswdFile) -> Vec<Diagnostic> {
    let mut answers: BTreeMap<&str, Result<bool, String>> = BTreeMap::new();
    // (where, user, slots), in declaration order.
    let mut missing: Vec<(&Site, &str, Vec<&str>)> = Vec::new();
    for slot in &model.slots {
        let (Some(user), Some(site)) = (slot.run_as(), slot.user_site.as_ref()) else {
            continue;
        };
        if user.contains(':') {
            continue;
        }
        let known = answers.entry(user).or_insert_with(|| db.exists(user));
        if matches!(known, Ok(true)) {
            continue;
        }
        let same = |(s, u, _): &&mut (&Site, &str, _)| {
            (&s.file, &s.path, *u) == (&site.file, &site.path, user)
        };
        match missing.iter_mut().find(same) {
            Some(m) => m.2.push(&slot.name),
            None => missing.push((site, user, vec![&slot.name])),
        }
    }
    (missing.into_iter())
        .map(|(site, user, slots)| {
            let why = match answers.get(user) {
                Some(Err(e)) => format!("{} could not be read: {e}", db.name),
                _ => format!("not in {}", db.name),
            };
            site.diag(format!(
                "unknown user `{user}` ({}): {why}; s6-setuidgid could not start the slot as it",
                slot_list(&slots)
            ))
        })
        .collect()
}

fn slot_list(slots: &[&str]) -> String {
    let word = if slots.len() == 1 { "slot" } else { "slots" };
    let mut s = format!(
        "{word} {}",
        slots[..slots.len().min(NAMED_SLOTS)].join(", ")
    );
    if slots.len() > NAMED_SLOTS {
        s.push_str(&format!(" and {} more", slots.len() - NAMED_SLOTS));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(json: &str) -> Model {
        crate::config::test_model(json)
    }

    fn db(text: &str) -> PasswdFile {
        let name = "/img/etc/passwd".to_string();
        let text = OnceCell::from(Ok(text.to_string()));
        PasswdFile { text, name }
    }

    #[test]
    fn passwd_lines() {
        let d = db(
            "root:x:0:0:root:/root:/bin/sh\n\napp:x:1000:1000::/data:/bin/sh\n# note\nbroken:x\n",
        );
        assert_eq!(d.exists("app"), Ok(true));
        assert_eq!(d.exists("root"), Ok(true));
        assert_eq!(d.exists("broken"), Ok(false));
        assert_eq!(d.exists("# note"), Ok(false));
    }

    #[test]
    fn one_diagnostic_per_place_naming_its_slots() {
        let m = model(
            r#"{
  "user": "app",
  "slots": [
    { "name": "a", "command": ["x"] },
    { "name": "b", "command": ["x"] },
    { "name": "w-{instance}", "instances": {"names": ["1", "2"]}, "command": ["x"], "user": "w{instance}" },
    { "name": "r", "command": ["x"], "user": "root" },
    { "name": "n", "command": ["x"], "user": "4242:4242" },
    { "name": "k", "command": ["x"], "user": "known" }
  ]
}"#,
        );
        let d: Vec<String> = unknown_users(&m, &db("known:x:1:1::/:/bin/sh\n"))
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(
            d,
            [
                "/etc/svkit/10.json:2:3: user: unknown user `app` (slots a, b): not in /img/etc/passwd; s6-setuidgid could not start the slot as it",
                "/etc/svkit/10.json:6:85: slots[2].user: unknown user `w1` (slot w-1): not in /img/etc/passwd; s6-setuidgid could not start the slot as it",
                "/etc/svkit/10.json:6:85: slots[2].user: unknown user `w2` (slot w-2): not in /img/etc/passwd; s6-setuidgid could not start the slot as it",
            ]
        );
        assert!(unknown_users(
            &m,
            &db("app:x:1:1::/:\nw1:x:2:2::/:\nw2:x:3:3::/:\nknown:x:4:4::/:\n")
        )
        .is_empty());
    }

    #[test]
    fn many_slots_are_counted() {
        let m = model(
            r#"{"user": "app", "slots": [
  {"name": "a", "command": ["x"]}, {"name": "b", "command": ["x"]},
  {"name": "c", "command": ["x"]}, {"name": "d", "command": ["x"]},
  {"name": "e", "command": ["x"]}]}"#,
        );
        let d = unknown_users(&m, &db(""));
        assert_eq!(d.len(), 1);
        assert!(
            d[0].message.contains("(slots a, b, c and 2 more)"),
            "{}",
            d[0]
        );
    }
}
