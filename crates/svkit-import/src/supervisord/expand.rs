//! supervisord's expansions: Python's `text % expansions` over a dict of
//! `here`, `program_name`, `group_name`, `numprocs`, `process_num`,
//! `host_node_name` and `ENV_X`. What is known when importing is resolved
//! here; what only the running container knows (its environment, its host
//! name) stays a [`Seg::Env`], which the caller turns into `${X}` under
//! `sh -c`, or reports.

/// `%(name)[flags][width][.precision]conversion`, as Python reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    flags: String,
    width: usize,
    precision: Option<usize>,
    conv: char,
}

/// A piece of an expanded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Lit(String),
    /// `%(process_num)…`: known per process.
    Proc(Spec),
    /// A variable of the container's environment at run time
    /// (`%(ENV_X)s` → `X`; `%(host_node_name)s` → `HOSTNAME`).
    Env(String),
}

/// What is known when importing.
pub struct Known<'a> {
    pub here: &'a str,
    pub program_name: &'a str,
    pub group_name: &'a str,
    /// `None`: `numprocs=%(ENV_X)s`, known only at run time.
    pub numprocs: Option<i64>,
}

/// Expands `text`; an unknown name or a malformed `%` is an error, as it
/// is for supervisord.
pub fn expand(text: &str, k: &Known<'_>) -> Result<Vec<Seg>, String> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        lit.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(r) = rest.strip_prefix('%') {
            lit.push('%');
            rest = r;
            continue;
        }
        let Some(r) = rest.strip_prefix('(') else {
            return Err(format!(
                "a `%` that is neither `%%` nor `%(name)s` (write `%%` for a literal `%`): `{text}`"
            ));
        };
        let close = r
            .find(')')
            .ok_or_else(|| format!("unclosed `%(` in `{text}`"))?;
        let name = &r[..close];
        let (spec, after) = parse_spec(&r[close + 1..]).ok_or_else(|| {
            format!("`%({name})` has no conversion such as `s` or `d` in `{text}`")
        })?;
        rest = after;
        let seg = match name {
            "here" => Seg::Lit(format(&spec, Val::Str(k.here))?),
            "program_name" => Seg::Lit(format(&spec, Val::Str(k.program_name))?),
            "group_name" => Seg::Lit(format(&spec, Val::Str(k.group_name))?),
            "numprocs" => match k.numprocs {
                Some(n) => Seg::Lit(format(&spec, Val::Int(n))?),
                None => return Err("`%(numprocs)` is known only when the container runs here (numprocs is %(ENV_X)s): write it otherwise".into()),
            },
            "process_num" => {
                format(&spec, Val::Int(0))?;
                Seg::Proc(spec)
            }
            "host_node_name" => runtime("HOSTNAME", &spec)?,
            n if n.starts_with("ENV_") && n.len() > 4 => runtime(&n[4..], &spec)?,
            n => {
                return Err(format!(
                    "`%({n})` cannot be expanded (supervisord knows here, program_name, group_name, numprocs, process_num, host_node_name and ENV_X)"
                ))
            }
        };
        if let Seg::Lit(s) = seg {
            lit.push_str(&s);
        } else {
            if !lit.is_empty() {
                out.push(Seg::Lit(std::mem::take(&mut lit)));
            }
            out.push(seg);
        }
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        out.push(Seg::Lit(lit));
    }
    Ok(out)
}

fn runtime(var: &str, spec: &Spec) -> Result<Seg, String> {
    let plain = spec.conv == 's' && spec.width == 0 && spec.precision.is_none();
    if !plain {
        return Err(format!(
            "`{var}` is only known when the container runs: only a plain `s` conversion of it can be kept"
        ));
    }
    Ok(Seg::Env(var.to_owned()))
}

fn parse_spec(s: &str) -> Option<(Spec, &str)> {
    let flags_end = s.find(|c: char| !"-+ #0".contains(c)).unwrap_or(s.len());
    let flags = s[..flags_end].to_owned();
    let mut r = &s[flags_end..];
    let digits = |r: &str| r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
    let n = digits(r);
    let width = r[..n].parse().unwrap_or(0);
    r = &r[n..];
    let mut precision = None;
    if let Some(p) = r.strip_prefix('.') {
        let n = digits(p);
        precision = Some(p[..n].parse().unwrap_or(0));
        r = &p[n..];
    }
    let conv = r.chars().next()?;
    Some((
        Spec {
            flags,
            width: width.min(4096),
            precision: precision.map(|p: usize| p.min(4096)),
            conv,
        },
        &r[conv.len_utf8()..],
    ))
}

pub enum Val<'a> {
    Str(&'a str),
    Int(i64),
}

/// Python's `%` formatting of one value, for the conversions supervisord
/// configs use (`s`, `d`, `i`).
pub fn format(spec: &Spec, v: Val<'_>) -> Result<String, String> {
    let body = match (spec.conv, v) {
        ('s', Val::Str(s)) => match spec.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_owned(),
        },
        ('s', Val::Int(n)) => n.to_string(),
        ('d' | 'i', Val::Int(n)) => {
            let digits = n.unsigned_abs().to_string();
            let digits = match spec.precision {
                Some(p) if p > digits.len() => format!("{}{digits}", "0".repeat(p - digits.len())),
                _ => digits,
            };
            let sign = if n < 0 {
                "-"
            } else if spec.flags.contains('+') {
                "+"
            } else if spec.flags.contains(' ') {
                " "
            } else {
                ""
            };
            if spec.flags.contains('0') && !spec.flags.contains('-') {
                let pad = spec.width.saturating_sub(sign.len() + digits.len());
                return Ok(format!("{sign}{}{digits}", "0".repeat(pad)));
            }
            format!("{sign}{digits}")
        }
        ('d' | 'i', Val::Str(_)) => {
            return Err("a `%(…)d` of a name that is not a number".into());
        }
        (c, _) => return Err(format!("the conversion `%(…){c}` is not supported")),
    };
    let pad = spec.width.saturating_sub(body.chars().count());
    if pad == 0 {
        return Ok(body);
    }
    Ok(if spec.flags.contains('-') {
        format!("{body}{}", " ".repeat(pad))
    } else {
        format!("{}{body}", " ".repeat(pad))
    })
}

/// The text of `segs` with `%(process_num)` as `num`, or `None` when a
/// runtime variable is in it.
pub fn resolved(segs: &[Seg], num: i64) -> Option<String> {
    text(segs, num, false)
}

/// The text of `segs` with `%(process_num)` as `num`; each runtime
/// variable as svkit's config reads the container's (`${X}`) when `vars`,
/// else `None`.
pub fn text(segs: &[Seg], num: i64, vars: bool) -> Option<String> {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Lit(l) => s.push_str(l),
            Seg::Proc(spec) => s.push_str(&format(spec, Val::Int(num)).ok()?),
            Seg::Env(x) if vars => s.push_str(&format!("${{{x}}}")),
            Seg::Env(_) => return None,
        }
    }
    Some(s)
}

/// The runtime variables `segs` uses.
pub fn env_vars(segs: &[Seg]) -> impl Iterator<Item = &str> {
    segs.iter().filter_map(|s| match s {
        Seg::Env(v) => Some(v.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k() -> Known<'static> {
        Known {
            here: "/etc/supervisor",
            program_name: "worker",
            group_name: "worker",
            numprocs: Some(4),
        }
    }

    #[test]
    fn resolves_what_is_known_and_keeps_the_rest() {
        let segs = expand(
            "%(here)s/%(program_name)s_%(process_num)02d %(ENV_HOME)s 100%%",
            &k(),
        )
        .unwrap();
        assert_eq!(resolved(&segs, 3), None);
        assert_eq!(env_vars(&segs).collect::<Vec<_>>(), ["HOME"]);
        let segs = expand(
            "%(program_name)s_%(process_num)02d of %(numprocs)d, 100%%",
            &k(),
        )
        .unwrap();
        assert_eq!(resolved(&segs, 3).unwrap(), "worker_03 of 4, 100%");
        let segs = expand(
            "%(process_num)-3d|%(process_num)+d|%(program_name).3s",
            &k(),
        )
        .unwrap();
        assert_eq!(resolved(&segs, 7).unwrap(), "7  |+7|wor");
    }

    #[test]
    fn what_supervisord_refuses_is_an_error() {
        for bad in [
            "%(nope)s",
            "%s",
            "50%",
            "%(program_name)",
            "%(program_name)d",
            "%(ENV_X)5s",
            "%(here)q",
        ] {
            assert!(expand(bad, &k()).is_err(), "{bad}");
        }
    }
}
