//! `svctl check`: validate and report.

use crate::cli::ConfigArgs;
use crate::exit::{Fatal, OK};

pub fn run(args: &ConfigArgs) -> Result<u8, Fatal> {
    let dir = args.dir();
    let v = match super::load(&dir)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let m = &v.model;
    println!(
        "svctl: config ok: {} slot{}, {} redirect{}, {} file{} in {}",
        m.slots.len(),
        if m.slots.len() == 1 { "" } else { "s" },
        m.redirects.len(),
        if m.redirects.len() == 1 { "" } else { "s" },
        m.files.len(),
        if m.files.len() == 1 { "" } else { "s" },
        dir.display()
    );
    Ok(OK)
}
