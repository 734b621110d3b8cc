//! svkit-sandbox: boots s6-overlay's own `/init` in a container-like set of
//! namespaces, for svkit's tests and demo. Not a container runtime.

mod boot;
mod caps;
mod host;
mod layout;
mod overlay;
mod preflight;
mod sig;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "Test fixture and demo runner: boots s6-overlay's real /init in namespaces.

This is NOT a container runtime. It gives svkit's tests and `make demo` a
container without a Docker engine: s6-overlay's own /init (preinit, stage 1,
s6-rc, cont-init.d, services.d, CMD, stage 3) from the release tarballs in
--s6-overlay DIR or $SVKIT_S6_OVERLAY (checked against their SHA256SUMS),
over the host's / as the read-only lower layer of an overlay (the host is
never written), with the workspace binaries in /usr/local/bin and the
--rootfs dirs copied over them. Like a container: private mount, PID,
network (lo only), UTS and IPC namespaces, Docker's default capability set,
and the CMD's exit code as the sandbox's. Not isolated: users, cgroups.
The sandbox keeps its own marker in /.svkit-sandbox (it says when the CMD
starts). Root only.";

const RUN_AFTER: &str = "Examples:
  svkit-sandbox run --rootfs rootfs -- sh -c 'cat /proc/1/comm'
  svkit-sandbox run --detach --env APP_DASHBOARD=1 -- svkit-wrap gateway run
  svkit-sandbox run --volume /tmp/data:/data -- svctl status

Exit codes: CMD's exit code (128+N when killed by signal N); 125 when the
sandbox itself fails; 126/127 when CMD cannot be run / is not found.";

#[derive(Parser)]
#[command(name = "svkit-sandbox", version, about = ABOUT, long_about = ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Boot a sandbox and run CMD in it, like `docker run`.
    #[command(after_help = RUN_AFTER)]
    Run {
        /// A directory copied over the container's / (repeatable, in order).
        #[arg(long, value_name = "DIR")]
        rootfs: Vec<PathBuf>,
        /// Bind a host directory at PATH inside (state that survives a restart).
        #[arg(long, value_name = "HOSTDIR:PATH")]
        volume: Vec<String>,
        /// A container environment variable, as `docker run -e`.
        #[arg(long, short = 'e', value_name = "K=V")]
        env: Vec<String>,
        /// Print the sandbox id and return once CMD has started.
        #[arg(long, short = 'd')]
        detach: bool,
        /// Directory of binaries copied to /usr/local/bin [default: this binary's dir].
        #[arg(long, value_name = "DIR")]
        bin_dir: Option<PathBuf>,
        /// s6-overlay's release tarballs and their SHA256SUMS [default: $SVKIT_S6_OVERLAY].
        #[arg(long = "s6-overlay", value_name = "DIR")]
        s6_overlay: Option<PathBuf>,
        /// The CMD and its arguments (none: stay up until stopped).
        #[arg(last = true)]
        cmd: Vec<String>,
    },
    /// Run a command in a running sandbox, like `docker exec`; exits with its code.
    Exec {
        id: String,
        /// Run as this user (via s6-setuidgid).
        #[arg(long, short = 'u')]
        user: Option<String>,
        #[arg(long, short = 'e', value_name = "K=V")]
        env: Vec<String>,
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
    /// SIGTERM to PID 1 (a clean halt, like `docker stop`), wait, print the
    /// exit code, and remove every trace of the sandbox. Exit 1: no such sandbox.
    Stop { id: String },
    /// List sandboxes.
    Ps,
    /// Print what a detached sandbox wrote (its `docker logs`).
    Logs { id: String },
    #[command(name = "__boot", hide = true)]
    Boot { dir: PathBuf },
    #[command(name = "__started", hide = true)]
    Started {
        file: PathBuf,
        #[arg(last = true)]
        cmd: Vec<String>,
    },
    #[command(name = "__monitor", hide = true)]
    Monitor { dir: PathBuf },
}

fn parse_env(items: &[String]) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .with_context(|| format!("bad --env {kv:?}: expected K=V"))?;
            let valid = !k.is_empty()
                && !k.starts_with(|c: char| c.is_ascii_digit())
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                bail!("bad --env {kv:?}: invalid variable name");
            }
            Ok((k.to_string(), v.to_string()))
        })
        .collect()
}

fn parse_volume(v: &str) -> Result<(PathBuf, PathBuf)> {
    let (host, inside) = v
        .split_once(':')
        .with_context(|| format!("bad --volume {v:?}: expected HOSTDIR:PATH"))?;
    let inside = PathBuf::from(inside);
    if !inside.is_absolute() || inside.components().any(|c| c.as_os_str() == "..") {
        bail!("bad --volume {v:?}: PATH must be absolute, without ..");
    }
    let host =
        std::fs::canonicalize(host).with_context(|| format!("bad --volume {v:?}: {host}"))?;
    if !host.is_dir() {
        bail!("bad --volume {v:?}: not a directory");
    }
    Ok((host, inside))
}

fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Cmd::Run {
            rootfs,
            volume,
            env,
            detach,
            bin_dir,
            s6_overlay,
            cmd,
        } => {
            preflight::check()?;
            let s6_overlay_tree = overlay::tree(&overlay::tarball_dir(s6_overlay)?)?;
            let rootfs = rootfs
                .iter()
                .map(|d| {
                    std::fs::canonicalize(d)
                        .with_context(|| format!("bad --rootfs {}", d.display()))
                })
                .collect::<Result<Vec<_>>>()?;
            let bin_dir = match bin_dir {
                Some(d) => d,
                None => std::env::current_exe()?
                    .parent()
                    .context("unable to find the binaries' dir")?
                    .to_path_buf(),
            };
            let spec = layout::Spec {
                id: layout::new_id()?,
                rootfs,
                volumes: volume
                    .iter()
                    .map(|v| parse_volume(v))
                    .collect::<Result<_>>()?,
                env: parse_env(&env)?,
                cmd,
                bin_dir,
                s6_overlay_tree,
                detached: detach,
            };
            host::run(spec)
        }
        Cmd::Exec { id, user, env, cmd } => {
            host::exec(&id, user.as_deref(), &parse_env(&env)?, &cmd)
        }
        Cmd::Stop { id } => host::stop(&id),
        Cmd::Ps => host::ps(),
        Cmd::Logs { id } => host::logs(&id),
        Cmd::Boot { dir } => boot::boot(&dir).map(|()| 0),
        Cmd::Started { file, cmd } => Ok(boot::started(&file, &cmd)),
        Cmd::Monitor { dir } => host::monitor(&dir),
    }
}

fn main() {
    let cli = Cli::parse();
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("svkit-sandbox: fatal: {e:#}");
            if e.to_string().starts_with("no such sandbox") {
                1
            } else {
                host::EXIT_SANDBOX
            }
        }
    };
    std::process::exit(code);
}
