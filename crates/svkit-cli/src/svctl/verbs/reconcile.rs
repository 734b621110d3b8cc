//! `svctl plan` and `svctl apply`: reconcile's two runtime faces (the boot
//! hook `svkit-reconcile` is the third). The algorithm is
//! `svkit::reconcile`; this prints its plans and maps its errors.

use std::path::Path;

use serde_json::{json, Value};
use svkit::msg::exit::svctl::CHANGES;
use svkit::msg::exit::OK;
use svkit::msg::{self, Fatal};
use svkit::reconcile::{
    self, Action, ApplyOptions, ApplyReport, ReconcileError, ScandirLock, Scope, SlotPlan,
};

use super::ctx::{require_tree_user, unreadable_scandir};
pub use crate::apply::lock;
use crate::svctl::args::{ApplyArgs, PlanArgs};

/// Slots in dependency order, each with what it waits for (`depends_on`);
/// empty when no slot depends on another.
fn start_order(model: &svkit::config::Model) -> Vec<(String, Vec<String>)> {
    if model.slots.iter().all(|s| s.depends_on.is_empty()) {
        return Vec::new();
    }
    svkit::config::depends::start_order(&model.slots)
        .into_iter()
        .map(|n| {
            let after = model
                .slot(n)
                .map(|s| {
                    s.depends_on
                        .iter()
                        .map(|d| format!("{} ({})", d.on, d.condition.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            (n.to_string(), after)
        })
        .collect()
}

fn plan_json(
    plans: &[SlotPlan],
    order: &[(String, Vec<String>)],
    orphans: &[svkit::state::Orphan],
) -> String {
    let slots: Vec<Value> = plans
        .iter()
        .map(|p| {
            let mut v = json!({
                "name": p.name,
                "action": p.action.name(),
                "state": if p.want_up { "up" } else { "down" },
            });
            if let Action::Update {
                restart,
                log_dir_missing,
                ..
            } = &p.action
            {
                v["files"] = json!(p.action.files());
                v["restart"] = json!(restart);
                v["log_dir_missing"] = json!(log_dir_missing);
            }
            v
        })
        .collect();
    let changes = plans.iter().any(|p| p.action != Action::Unchanged);
    let order: Vec<Value> = order
        .iter()
        .map(|(n, after)| json!({ "name": n, "after": after }))
        .collect();
    format!(
        "{}\n",
        json!({
            "changes": changes,
            "slots": slots,
            "start_order": order,
            "orphans": svkit::state::orphans_json(orphans),
        })
    )
}

pub fn plan(args: &PlanArgs) -> Result<u8, Fatal> {
    let scandir = args.at.scandir();
    let prepared = crate::apply::prepare(&args.at.config.dir(), &scandir, Scope::All)?;
    let plans = reconcile::plan(&scandir, &prepared.desired).map_err(|e| match e {
        ReconcileError::Io { path, source } if path == scandir => {
            unreadable_scandir(&scandir, source)
        }
        e @ ReconcileError::TooManyServices(_) => crate::apply::failed(&scandir, e),
        e => Fatal::system(format!("unable to plan {}", scandir.display()), e),
    })?;
    let order = start_order(&prepared.model);
    // Nothing `apply` changes: a note on stderr, not a change to plan.
    let orphans = super::ctx::orphans(&prepared.model);
    if args.json {
        msg::out(plan_json(&plans, &order, &orphans))?;
    } else {
        let mut lines: String = plans
            .iter()
            .map(|p| format!("{}\n", p.audit_line()))
            .collect();
        // Start order, when dependencies make one: stops go the other way.
        for (i, (n, after)) in order.iter().enumerate() {
            let after = if after.is_empty() {
                String::new()
            } else {
                format!(" after {}", after.join(", "))
            };
            lines.push_str(&format!("order: {}. {n}{after}\n", i + 1));
        }
        msg::out(lines)?;
    }
    Ok(if plans.iter().all(|p| p.action == Action::Unchanged) {
        OK
    } else {
        CHANGES
    })
}

/// Prepares and applies under `lock`; slots not applied fail it (`svctl
/// apply` is all or nothing).
pub fn apply_locked(
    lock: &ScandirLock,
    config_dir: &Path,
    opts: &ApplyOptions,
) -> Result<ApplyReport, Fatal> {
    let applied = crate::apply::apply(lock, config_dir, opts, |_| {})?;
    match applied.failed {
        Some(f) => Err(f),
        None => Ok(applied.outcome),
    }
}

pub fn apply(args: &ApplyArgs) -> Result<u8, Fatal> {
    require_tree_user(&args.at.scandir(), "apply")?;
    let opts = ApplyOptions {
        lock_timeout: args.lock_timeout,
        ..Default::default()
    };
    let lock = lock(&args.at.scandir(), opts.lock_timeout)?;
    apply_locked(&lock, &args.at.config.dir(), &opts)?;
    Ok(OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn plan_json_shape() {
        let plans = vec![
            SlotPlan {
                name: "a".into(),
                action: Action::Unchanged,
                want_up: true,
            },
            SlotPlan {
                name: "b".into(),
                action: Action::Update {
                    changed: vec![PathBuf::from("run")],
                    removed: vec![PathBuf::from("down")],
                    restart: true,
                    log_dir_missing: true,
                },
                want_up: false,
            },
        ];
        let v: Value = serde_json::from_str(&plan_json(&plans, &[], &[])).expect("json");
        assert_eq!(v["changes"], true);
        assert_eq!(v["orphans"], json!([]));
        assert_eq!(
            v["slots"][0],
            json!({"name": "a", "action": "unchanged", "state": "up"})
        );
        assert_eq!(v["slots"][1]["files"], json!(["run", "down"]));
        assert_eq!(v["slots"][1]["restart"], true);
        assert_eq!(v["slots"][1]["log_dir_missing"], true);
        let v: Value = serde_json::from_str(&plan_json(
            &plans[..1],
            &[("a".into(), vec!["b (up)".into()])],
            &[],
        ))
        .expect("json");
        assert_eq!(v["changes"], false);
        assert_eq!(
            v["start_order"],
            json!([{"name": "a", "after": ["b (up)"]}])
        );
    }
}
