//! `svctl render --to DIR`: write every slot into an empty directory, for
//! inspection and golden tests. Never a live scandir: putting slots live is
//! `apply`'s job (atomic create, restarts, locking).

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use svkit::msg::{self, exit::OK, Fatal};
use svkit::render::{render_all, RenderEnv, RenderedSlot};
use svkit::slot::health::StartFacts;

use crate::config::Policy;
use crate::svctl::cli::RenderArgs;

pub fn run(args: &RenderArgs) -> Result<u8, Fatal> {
    let to = &args.to;
    let create = check_target(to)?;
    let dir = args.config.dir();
    let v = crate::config::required(&dir, Policy::Required { quiet: false })?;
    super::check_users(&dir, &v.model, args.users.root.as_deref())?;
    let facts = StartFacts {
        env: svkit::container::utf8_env(),
        // Desired states persisted by `svctl start/stop` are not read here:
        // a `remember` slot renders down, its default.
        remembered: Default::default(),
    };
    // No live tree: what root's /init would supervise, whoever asks.
    let slots = render_all(&v.model, &RenderEnv::detect(None), &facts);
    if create {
        fs::create_dir(to)
            .map_err(|e| Fatal::io(format!("unable to create {}", to.display()), &e))?;
    }
    for s in &slots {
        write_slot(to, s)?;
        msg::out(format!(
            "render: slot={} files={} state={}\n",
            s.name,
            s.files.len(),
            if s.up { "up" } else { "down" }
        ))?;
    }
    Ok(OK)
}

/// Refuse anything but an empty dir or a missing one (returns "create it").
fn check_target(to: &Path) -> Result<bool, Fatal> {
    let what = || format!("refusing to render into {}", to.display());
    let meta = match fs::symlink_metadata(to) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(Fatal::io(what(), &e)),
    };
    if !meta.is_dir() {
        return Err(Fatal::usage(what(), "not a directory"));
    }
    if to.join(".s6-svscan").exists() {
        return Err(Fatal::usage(
            what(),
            "it is a live scandir (it has .s6-svscan); use svctl apply",
        ));
    }
    let mut entries = fs::read_dir(to).map_err(|e| Fatal::io(what(), &e))?;
    if let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| Fatal::io(what(), &e))?;
        let why = if entry.path().join("supervise").exists() {
            "it holds supervised slots; use svctl apply"
        } else {
            "it is not empty"
        };
        return Err(Fatal::usage(what(), why));
    }
    Ok(false)
}

fn write_slot(to: &Path, s: &RenderedSlot) -> Result<(), Fatal> {
    let dir = to.join(&s.name);
    let mk = |p: &Path| {
        fs::DirBuilder::new()
            .mode(0o755)
            .create(p)
            .map_err(|e| Fatal::io(format!("unable to create {}", p.display()), &e))
    };
    mk(&dir)?;
    for d in s.dirs() {
        mk(&dir.join(d))?;
    }
    for f in &s.files {
        let p = dir.join(&f.path);
        let err = |e: std::io::Error| Fatal::io(format!("unable to write {}", p.display()), &e);
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(f.mode)
            .open(&p)
            .map_err(err)?;
        file.write_all(&f.contents).map_err(err)?;
        // The umask may have narrowed the mode given to open().
        file.set_permissions(fs::Permissions::from_mode(f.mode))
            .map_err(err)?;
    }
    Ok(())
}
