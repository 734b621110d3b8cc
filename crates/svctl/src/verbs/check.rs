//! `svctl check`: validate and report.

use svkit::msg::{self, exit::OK, Fatal};

use crate::cli::ConfigArgs;

pub fn run(args: &ConfigArgs) -> Result<u8, Fatal> {
    let dir = args.dir();
    let v = match super::load(&dir)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
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
