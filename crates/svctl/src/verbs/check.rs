//! `svctl check`: validate and report.

use svkit::msg::{self, exit::OK, Fatal};

use crate::cli::CheckArgs;

pub fn run(args: &CheckArgs) -> Result<u8, Fatal> {
    let dir = args.config.dir();
    let v = match super::load(&dir)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    if let Err(code) = super::check_users(&dir, &v.model, args.users.root.as_deref())? {
        return Ok(code);
    }
    let m = &v.model;
    msg::out(format!(
        "{}: config ok: {} slot{}, {} redirect{}, {} file{} in {}\n",
        msg::prog(),
        m.slots.len(),
        if m.slots.len() == 1 { "" } else { "s" },
        m.redirects.len(),
        if m.redirects.len() == 1 { "" } else { "s" },
        m.files.len(),
        if m.files.len() == 1 { "" } else { "s" },
        dir.display()
    ))?;
    Ok(OK)
}
