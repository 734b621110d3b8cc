//! A `services.d/` dir, as s6-overlay's `services-up` takes it: every
//! subdir is a longrun, copied and supervised as is (a `down` file keeps
//! it down); anything that is not a dir is skipped. No dependencies.

use std::path::{Path, PathBuf};

use super::{longrun_slot, name_map, note, read};
use crate::{ImportError, Imported};

pub(super) fn import(
    path: &Path,
    root: &str,
    entries: &[(String, PathBuf, bool)],
) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    for (name, file, is_dir) in entries {
        if !is_dir {
            out.notes
                .push(note(file, name, "not a directory: s6-overlay skips it too"));
        }
    }
    let services: Vec<_> = entries.iter().filter(|e| e.2).collect();
    // The files read are the service dirs.
    out.files = services.len();
    let names = name_map(
        services.iter().map(|(n, d, _)| (n.as_str(), d.as_path())),
        &mut out.notes,
    )?;
    for (name, dir, _) in services {
        let image_dir = format!("{root}/{name}");
        let Some(mut slot) = longrun_slot(&names[name], dir, &image_dir, &mut out.notes)? else {
            continue;
        };
        if read::has(dir, "down")? {
            slot.autostart = Some("never".into());
        }
        out.slots.push(slot);
    }
    if !out.slots.is_empty() {
        out.notes.push(note(
            path,
            "services.d",
            "s6-overlay starts every dir of /etc/services.d itself: once the svkit config is \
             in the image, move these dirs out of /etc/services.d (and import them from where \
             they will be, so the commands name that place), or each service runs twice",
        ));
    }
    Ok(out)
}
