//! `svctl exec SLOT -- CMD...`: a one-off command run as the slot runs its
//! program, by the same code as a redirect's opt-out
//! (`svkit::slotenv::oneoff`). It replaces svctl: its exit code is ours.

use std::path::Path;

use svkit::container;
use svkit::msg::{exit::svctl::UNKNOWN_SLOT, Fatal};
use svkit::slotenv::{oneoff, START_FAILED};

use crate::config::Policy;
use crate::svctl::args::ExecArgs;

pub fn run(args: ExecArgs) -> Result<u8, Fatal> {
    let dir = args.config.dir();
    let model = crate::config::required(&dir, Policy::Required { quiet: false })?.model;
    let Some(slot) = model.slot(&args.slot) else {
        return Err(Fatal::new(
            UNKNOWN_SLOT,
            format!("unknown slot {}", args.slot),
            format!("not declared in the config {}", dir.display()),
        ));
    };
    let one = oneoff::as_slot(&model, slot, args.argv)
        .map_err(|e| Fatal::new(START_FAILED, format!("slot {}: not starting", slot.name), e))?;
    let env = container::read_env_dir(Path::new(container::CONTAINER_ENV_DIR)).unwrap_or_default();
    let e = oneoff::exec(&one, &env);
    Err(Fatal::new(e.exit_code(), format!("slot {}", slot.name), e))
}
