//! `svctl forget NAME...|--all`: removes the records `state_dir` keeps for
//! names the config no longer declares (`svkit::state::orphans` decides
//! which those are). Every name is checked before the first removal, so a
//! refused one changes nothing; under the scandir lock, as `register`, so
//! a boot or an apply reading the same records runs before or after it.

use std::path::Path;

use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, Fatal};
use svkit::reconcile::ApplyOptions;
use svkit::state::{self, Orphan};

use super::ctx::require_tree_user;
use super::reconcile::lock;
use crate::config::Policy;
use crate::svctl::args::ForgetArgs;

/// The orphans `args` names, in its order; a name the config declares or
/// one with nothing recorded refuses the whole call.
fn pick(
    args: &ForgetArgs,
    model: &svkit::config::Model,
    all: Vec<Orphan>,
) -> Result<Vec<Orphan>, Fatal> {
    if args.all {
        return Ok(all);
    }
    let mut picked: Vec<Orphan> = Vec::new();
    for name in &args.names {
        let refuse = |why: String| Fatal::new(NOT_OK, format!("unable to forget {name}"), why);
        if state::declares(model, name) {
            return Err(refuse(
                "the config declares it (`svctl stop` or `svctl unregister` change what it keeps); nothing removed"
                    .to_string(),
            ));
        }
        let found: Vec<&Orphan> = all.iter().filter(|o| &o.name == name).collect();
        if found.is_empty() {
            return Err(refuse(format!(
                "nothing to forget: state_dir {} keeps no record of it; nothing removed",
                model.state_dir
            )));
        }
        for o in found {
            if !picked.contains(o) {
                picked.push(o.clone());
            }
        }
    }
    Ok(picked)
}

pub fn run(args: &ForgetArgs) -> Result<u8, Fatal> {
    let scandir = args.at.scandir();
    require_tree_user(&scandir, "forget")?;
    let _lock = lock(&scandir, ApplyOptions::default().lock_timeout)?;
    let model =
        crate::config::required(&args.at.config.dir(), Policy::Required { quiet: false })?.model;
    let sd = Path::new(&model.state_dir);
    let all = state::orphans(&model)
        .map_err(|e| Fatal::system(format!("unable to read state_dir {}", sd.display()), e))?;
    let picked = pick(args, &model, all)?;
    if picked.is_empty() {
        msg::info(format_args!(
            "nothing to forget: state_dir {} keeps no record of a name the config does not declare",
            sd.display()
        ));
    }
    let mut out = String::new();
    for o in &picked {
        state::forget(o).map_err(|e| Fatal::system(format!("unable to forget {}", o.name), e))?;
        out.push_str(&format!("forgot {}\n", o.describe()));
    }
    msg::out(out)?;
    Ok(OK)
}
