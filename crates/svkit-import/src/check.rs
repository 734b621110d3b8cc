//! The check every import passes before it is printed: its config text
//! ([`render`]) loaded as `svctl check` loads a config, within s6-svscan's
//! limit.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::{render, RawSlot};
use svkit::capacity::{self, Limit, Need, Others, Place};
use svkit::config::{self, FixedInstances, LoadError};

/// What `svctl check` asks of a config off s6-overlay, without the
/// image's users and programs: valid, and within s6-svscan's default
/// limit with s6-overlay's own services; the text it checked. The error
/// names the slot (its index in `slots`) when it is about one.
pub fn checked(slots: &[RawSlot]) -> Result<String, (Option<usize>, String)> {
    // Too many services shows in the slot list already (a template makes
    // one slot per distinct instance name): said before rendering and
    // loading a config that the same count refuses after.
    fits(slots.iter().flat_map(|s| {
        let made =
            (s.instances.as_ref()).map_or(1, |i| i.names.iter().collect::<BTreeSet<_>>().len());
        std::iter::repeat_n(("", s.log.is_some()), made)
    }))?;
    let text = render(slots);
    let files = vec![(PathBuf::from("imported.json"), text.clone().into_bytes())];
    let v = match config::load_layers(&files, &FixedInstances::default()) {
        Ok(v) => v,
        Err(LoadError::Invalid(diags)) => {
            let Some(d) = diags.into_iter().next() else {
                return Err((None, "the imported config is invalid".into()));
            };
            let index = d.slot();
            let what = match &d.path {
                Some(p) => format!("{p}: {}", d.message),
                None => d.message,
            };
            return Err((index, format!("the imported slot would be invalid: {what}")));
        }
        Err(e) => return Err((None, e.to_string())),
    };
    fits(
        v.model
            .slots
            .iter()
            .map(|s| (s.name.as_str(), s.log.is_some())),
    )?;
    Ok(text)
}

/// Within s6-svscan's default limit with s6-overlay's own services, as
/// `svctl check` asks off s6-overlay.
fn fits<'a>(
    slots: impl IntoIterator<Item = (&'a str, bool)>,
) -> Result<(), (Option<usize>, String)> {
    let mut need = Need::of_slots(slots);
    need.others.push(Others {
        count: capacity::OVERLAY_OWN,
        place: Place::OverlayAssumed,
    });
    need.check(Limit::assumed("an import, checked as on a build host"))
        .map(|_| ())
        .map_err(|e| (None, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use svkit::config::raw::{RawInstances, RawLog};

    fn slots(n: usize, log: bool) -> Vec<RawSlot> {
        (0..n)
            .map(|i| RawSlot {
                name: format!("w{i}"),
                command: vec!["sleep".into(), "1".into()],
                log: log.then(|| RawLog {
                    dir: format!("/var/log/w{i}"),
                    ..RawLog::default()
                }),
                ..RawSlot::default()
            })
            .collect()
    }

    fn template(names: &[&str]) -> RawSlot {
        RawSlot {
            name: "t-{instance}".into(),
            instances: Some(RawInstances {
                names: names.iter().map(|n| n.to_string()).collect(),
                ..RawInstances::default()
            }),
            command: vec!["x".into()],
            ..RawSlot::default()
        }
    }

    /// What the check of the loaded config says of `slots`.
    fn after_load(slots: &[RawSlot]) -> Result<(), (Option<usize>, String)> {
        let files = vec![(PathBuf::from("imported.json"), render(slots).into_bytes())];
        let v = config::load_layers(&files, &FixedInstances::default()).unwrap();
        fits(
            v.model
                .slots
                .iter()
                .map(|s| (s.name.as_str(), s.log.is_some())),
        )
    }

    #[test]
    fn too_many_services_is_refused_before_the_load_as_after_it() {
        // 997 beside s6-overlay's own 3 fit; a logger each does not.
        assert!(checked(&slots(997, false)).is_ok());
        for (many, why) in [
            (slots(998, false), "slots"),
            (slots(500, true), "loggers"),
            (
                [slots(995, false), vec![template(&["a", "b", "c"])]].concat(),
                "instances",
            ),
        ] {
            let early = checked(&many).unwrap_err();
            assert_eq!(Err(early.clone()), after_load(&many), "{why}");
            assert!(early.1.contains("s6-svscan"), "{why}: {}", early.1);
        }
        // A template makes one slot per distinct name, as the load does.
        let dup = [slots(995, false), vec![template(&["a", "a", "b"])]].concat();
        assert!(checked(&dup).is_ok());
        // Known before the load: over the limit and invalid says the
        // limit (the load would have said the invalid slot).
        let mut bad = slots(998, false);
        bad[0].command.clear();
        assert!(checked(&bad).unwrap_err().1.contains("s6-svscan"));
    }
}
