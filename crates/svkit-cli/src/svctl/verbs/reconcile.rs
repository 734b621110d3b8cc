//! `svctl plan` and `svctl apply`: reconcile's two runtime faces (the boot
//! hook `svkit-reconcile` is the third). The algorithm is
//! `svkit::reconcile`; this prints its plans and maps its errors.

use std::path::Path;

use serde_json::{json, Value};
use svkit::config::LoadError;
use svkit::msg::exit::svctl::CHANGES;
use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, Fatal};
use svkit::reconcile::{
    self, Action, ApplyOptions, Outcome, Prepared, ReconcileError, ScandirLock, SlotPlan,
};

use super::ctx::{require_tree_user, unreadable_scandir};
use crate::svctl::args::{ApplyArgs, PlanArgs};

/// Loads and renders; an invalid config prints every error and yields the
/// exit code.
pub fn prepare(config_dir: &Path, scandir: &Path) -> Result<Result<Prepared, u8>, Fatal> {
    match reconcile::prepare(config_dir, scandir) {
        Ok(p) => {
            for w in &p.warnings {
                msg::warn(w);
            }
            Ok(Ok(p))
        }
        Err(LoadError::Invalid(diags)) => {
            msg::invalid_config(config_dir, "nothing changed", &diags);
            Ok(Err(NOT_OK))
        }
        Err(e) => Err(Fatal::system("unable to load the config", e)),
    }
}

/// A config that cannot be applied as it is (too many services for
/// s6-svscan): exit 1, as an invalid config, its own text saying it all.
fn config_fault(e: &ReconcileError) -> Fatal {
    Fatal::new(e.exit_code(), e.to_string(), "")
}

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

fn plan_json(plans: &[SlotPlan], order: &[(String, Vec<String>)]) -> String {
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
        json!({ "changes": changes, "slots": slots, "start_order": order })
    )
}

pub fn plan(args: &PlanArgs) -> Result<u8, Fatal> {
    let scandir = args.at.scandir();
    let prepared = match prepare(&args.at.config.dir(), &scandir)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let plans = reconcile::plan(&scandir, &prepared.desired).map_err(|e| match e {
        ReconcileError::Io { path, source } if path == scandir => {
            unreadable_scandir(&scandir, &source)
        }
        e @ ReconcileError::TooManyServices(_) => config_fault(&e),
        e => Fatal::system(format!("unable to plan {}", scandir.display()), e),
    })?;
    let order = start_order(&prepared.model);
    if args.json {
        msg::out(plan_json(&plans, &order))?;
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

/// Takes the scandir lock, before anything is read: what `apply_locked`
/// plans from must be what is there when it writes.
pub fn lock(scandir: &Path, opts: &ApplyOptions) -> Result<ScandirLock, Fatal> {
    ScandirLock::acquire(scandir, opts.lock_timeout)
        .map_err(|e| Fatal::system(format!("unable to reconcile {}", scandir.display()), e))
}

/// Prepares and applies under `lock`, printing the audit lines.
pub fn apply_locked(
    lock: &ScandirLock,
    config_dir: &Path,
    opts: &ApplyOptions,
) -> Result<Result<Outcome, u8>, Fatal> {
    let scandir = lock.scandir();
    let fatal = |e| match e {
        e @ ReconcileError::TooManyServices(_) => config_fault(&e),
        e => Fatal::system(format!("unable to reconcile {}", scandir.display()), e),
    };
    let prepared = match prepare(config_dir, scandir)? {
        Ok(p) => p,
        Err(code) => return Ok(Err(code)),
    };
    let outcome = reconcile::apply(lock, &prepared.desired, opts).map_err(fatal)?;
    let failed = outcome.report(scandir);
    msg::out(outcome.audit())?;
    match failed {
        Some(f) => Err(f),
        None => Ok(Ok(outcome)),
    }
}

pub fn apply(args: &ApplyArgs) -> Result<u8, Fatal> {
    require_tree_user(&args.at.scandir(), "apply")?;
    let opts = ApplyOptions {
        lock_timeout: args.lock_timeout,
        ..Default::default()
    };
    let lock = lock(&args.at.scandir(), &opts)?;
    match apply_locked(&lock, &args.at.config.dir(), &opts)? {
        Ok(_) => Ok(OK),
        Err(code) => Ok(code),
    }
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
        let v: Value = serde_json::from_str(&plan_json(&plans, &[])).expect("json");
        assert_eq!(v["changes"], true);
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
        ))
        .expect("json");
        assert_eq!(v["changes"], false);
        assert_eq!(
            v["start_order"],
            json!([{"name": "a", "after": ["b (up)"]}])
        );
    }
}
