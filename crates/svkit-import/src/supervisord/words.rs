//! supervisord's value types: booleans, integers, byte sizes, exit code
//! lists, as its `datatypes` module reads them.

/// `true/yes/on/1`, `false/no/off/0`, any case.
pub fn boolean(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!(
            "`{s}` is not a boolean (true/false, yes/no, on/off, 1/0)"
        )),
    }
}

/// A whole number in `lo..=hi`.
pub fn integer(s: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let n: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is out of range ({lo}..{hi})"));
    }
    Ok(n)
}

/// `1024`, `50KB`, `50MB`, `1GB` (any case; multiples of 1024).
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mul) = [("KB", 1u64 << 10), ("MB", 1 << 20), ("GB", 1 << 30)]
        .into_iter()
        .find_map(|(unit, mul)| Some((t.strip_suffix(unit)?, mul)))
        .unwrap_or((&t, 1));
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("`{s}` is not a size (a number, optionally KB, MB or GB)"))
}

/// `0,2`: exit codes 0..255.
pub fn exit_codes(s: &str) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let n = integer(part, 0, 255).map_err(|e| format!("exit code {e}"))?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// supervisord's `autorestart`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoRestart {
    Always,
    Unexpected,
    Never,
}

pub fn auto_restart(s: &str) -> Result<AutoRestart, String> {
    if s.eq_ignore_ascii_case("unexpected") {
        return Ok(AutoRestart::Unexpected);
    }
    match boolean(s) {
        Ok(true) => Ok(AutoRestart::Always),
        Ok(false) => Ok(AutoRestart::Never),
        Err(_) => Err(format!("`{s}` is not true, false or unexpected")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_supervisord_reads_them() {
        assert_eq!(boolean("Yes"), Ok(true));
        for (s, b) in [
            ("ON", true),
            ("1", true),
            ("TRUE", true),
            ("oFf", false),
            ("0", false),
            ("No", false),
        ] {
            assert_eq!(boolean(s), Ok(b), "{s}");
        }
        assert!(boolean("").is_err() && boolean("y").is_err() && boolean("10").is_err());
        assert!(boolean("maybe").is_err());
        assert_eq!(byte_size("50MB"), Ok(50 << 20));
        assert_eq!(byte_size("10kb"), Ok(10 << 10));
        assert!(byte_size("ten").is_err());
        assert_eq!(exit_codes("0, 2,2"), Ok(vec![0, 2]));
        assert!(exit_codes("0,256").is_err());
        assert_eq!(auto_restart("UNEXPECTED"), Ok(AutoRestart::Unexpected));
        assert_eq!(auto_restart("off"), Ok(AutoRestart::Never));
    }
}
