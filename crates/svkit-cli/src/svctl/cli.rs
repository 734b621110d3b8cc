//! Command line. One subcommand per verb; each verb's code is in
//! `verbs/<verb>.rs`, its arguments in `args.rs`.

use clap::{Parser, Subcommand};

pub use crate::svctl::args::*;

#[derive(Debug, Parser)]
#[command(
    name = "svctl",
    version,
    about = "See and steer the svkit slots of an s6-overlay container",
    after_help = "Examples:
  svctl status                             every svkit slot, as a table
  svctl status --json gateway-default      one slot, for machines
  svctl restart --wait gateway-default     restart and wait until it is up again
  svctl logs -f gateway-default            follow a slot's log
  svctl top                                every slot live, with keys to act
  svctl plan && svctl apply                see, then make, what the config asks

Exit codes: 0 ok; 1 not ok (invalid config, timeout, ...); 2 a slot gone or
failed while waiting, or changes to apply (plan);
3 a slot not in its wanted state; 4 unknown slot; 100 bad usage; 111 system error.
5 a start refused: the slot's program runs in the foreground (an opt-out).
Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_SCANDIR (default
/run/service), SVKIT_S6_BIN, NO_COLOR."
)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Show the state of slots (a table, or JSON)
    #[command(after_help = "Examples:
  svctl status                     every svkit slot in the scandir
  svctl status --all               also slots svkit did not make
  svctl status gateway-default     one slot
  svctl status --json | jq '.slots[] | select(.failed)'
  HEALTHCHECK CMD [\"svctl\", \"status\"]

Exit codes (LSB): 0 every listed slot is in its wanted state; 3 some slot is not
(down but wanted up, up but wanted down, permanently failed, readiness check
gave up, waiting for its dependencies, no supervisor, declared in the config
but missing from the scandir); 4 unknown slot; 100 bad usage; 111 system
error. A finished job (`done`: a clean exit kept down by on_clean_exit) is
healthy.")]
    Status(StatusArgs),
    /// Start slots (and persist `up` for `remember` slots)
    #[command(after_help = "Examples:
  svctl start gateway-default
  svctl start --wait --timeout 10000 gateway-default dashboard
  svctl start --all

With --wait, returns when every slot is up (ready, for slots with readiness).
A slot whose program runs in the foreground (the container's command, run
with its redirect's opt-out) is never started beside it: named, the start
is refused (exit 5, nothing started); with --all it is left out, said.
Exit codes: 0 done; 1 --timeout ran out; 2 a slot failed permanently or vanished;
4 unknown slot; 5 a slot's program runs in the foreground; 100 bad usage; 111
system error (e.g. supervisor not running).")]
    Start(CtlArgs),
    /// Stop slots (and persist `down` for `remember` slots)
    #[command(after_help = "Examples:
  svctl stop gateway-default
  svctl stop --all --wait --timeout 20000      (the cont-finish.d hook)

With --wait, returns when every slot is down.
Exit codes: 0 done; 1 --timeout ran out; 2 a slot vanished; 4 unknown slot;
100 bad usage; 111 system error.")]
    Stop(CtlArgs),
    /// Restart slots that are up, start those that are down (and persist `up` for `remember` slots)
    #[command(after_help = "Examples:
  svctl restart gateway-default
  svctl restart --wait --timeout 15000 --all

With --wait, returns when every slot is up again with a new process (ready, for
slots with readiness). The old process's exit is never taken for a clean exit
of its own (on_clean_exit: stop does not apply). A slot whose program runs in
the foreground is refused as by start.
Exit codes: 0 done; 1 --timeout ran out; 2 a slot failed permanently or vanished;
4 unknown slot; 5 a slot's program runs in the foreground; 100 bad usage; 111
system error.")]
    Restart(CtlArgs),
    /// Run a job once now, outside its schedule
    #[command(after_help = "Examples:
  svctl run backup
  svctl run --wait backup                  returns the run's exit code

A job waiting for its tick runs at once; a paused (stopped) job runs once and
stays paused; a job whose run goes on is refused: one run at a time. Its
schedule goes on as before.
Exit codes: 0 started (with --wait: the run's exit code, 128+N when killed by
signal N); 1 not a job, a run goes on, or --timeout ran out; 4 unknown slot;
100 bad usage; 111 system error.")]
    Run(RunArgs),
    /// Wait until slots are up, ready, down or done
    #[command(after_help = "Examples:
  svctl wait up gateway-default
  svctl wait ready --timeout 30000 gateway-default dashboard
  svctl wait down --any gateway-a gateway-b
  svctl wait done migrate                  a oneshot's completion (exit 0)

Waits on inotify events of supervise/ (with a slow fallback poll), never busily.
A slot without readiness is ready once up.
Exit codes: 0 met; 1 --timeout ran out; 2 a slot is gone (or not supervised),
failed permanently, or its readiness check gave up (waiting for ready); 100 bad
usage; 111 system error.")]
    Wait(WaitArgs),
    /// Show a slot's log (current plus archives, in order)
    #[command(after_help = "Examples:
  svctl logs gateway-default
  svctl logs -n 100 gateway-default
  svctl logs -f gateway-default           keep following, across rotations

The log dir is the slot's `log.dir` in the config.
Exit codes: 0 ok; 1 the slot has no log dir; 4 unknown slot; 100 bad usage;
111 system error.")]
    Logs(LogsArgs),
    /// Print state changes of slots as they happen (up, ready, down, done, failed, ...)
    #[command(after_help = "Examples:
  svctl events                              every svkit slot, and slots added later
  svctl events --json gateway-default       one slot, one JSON object per line
  svctl events --json | jq -c 'select(.event == \"failed\")'

Subscribes to s6-supervise's own event FIFOs (event/ in each slot) and sleeps
until s6 announces a change: no polling, no CPU while nothing happens. Events:
supervised, up, ready, down (exit code or signal), done, failed (why), stopped,
restarting, unsupervised, added, removed. Runs until SIGINT, SIGTERM or SIGHUP,
or until its reader goes away (`svctl events | head -3`); removes its FIFOs.
Exit codes: 0 ended by a signal or a closed output; 4 unknown slot; 100 bad
usage; 111 system error (e.g. a slot's event/ this user may not write to).")]
    Events(EventsArgs),
    /// A live view of every slot in the terminal, and keys to act on them
    #[command(after_help = "Examples:
  svctl top
  svctl top --interval 2s gateway-default dashboard
  docker exec -it CONTAINER svctl top    (from the host)

The table is svctl status's, read again every interval, with each slot's CPU
(percent of one CPU since the last refresh) and memory. Keys: up/down or j/k
move; / filter (Enter applies, Escape clears); Enter opens or closes the
selected slot's log, followed live; s start, x stop, r restart (each asks
first: y confirms); o sort (name, CPU, memory, deaths, state); i details (the
slot's status --json); ? help; q or Ctrl-C quit.
Needs a terminal: piped, or with TERM=dumb, it exits 100 (use svctl status).
Exit codes: 0 quit (or ended by SIGTERM, SIGHUP, SIGINT); 4 unknown slot;
100 bad usage or no terminal; 111 system error.")]
    Top(TopArgs),
    /// Print Prometheus metrics of slots (text exposition format)
    #[command(after_help = "Examples:
  svctl metrics
  svctl metrics > /var/lib/node-exporter/svkit.prom.tmp &&
    mv /var/lib/node-exporter/svkit.prom.tmp /var/lib/node-exporter/svkit.prom

One sample per slot and metric, labelled slot=\"NAME\": svkit_slot_up, _ready,
_wanted_up, _desired_up, _failed, _done, _deaths, _uptime_seconds,
_last_exit_code, ... (list in docs/svctl.md). For node-exporter's textfile
collector, write a temporary file and rename it, so it never reads half a file.
Exit codes: 0 printed (a slot this user may not read is left out, with a
warning); 4 unknown slot; 100 bad usage; 111 system error.")]
    Metrics(MetricsArgs),
    /// Show what `apply` would change
    #[command(after_help = "Examples:
  svctl plan
  svctl plan --json

One line per slot: reconcile: slot=NAME action=create|update|unchanged|delete state=up|down
Exit codes: 0 nothing would change; 1 invalid config, or more s6 services than
s6-svscan supervises; 2 something would change; 100 bad usage; 111 system error.")]
    Plan(PlanArgs),
    /// Make the scandir match the config now (what the boot hook does; as the tree's user, root unless the container runs as non-root)
    #[command(after_help = "Examples:
  svctl apply
  svctl apply --config-dir /etc/svkit

Prints one audit line per slot, like svkit-reconcile. All or nothing: when a
slot cannot be applied (its log dir cannot be made, its user is unknown, ...),
no slot is changed or restarted, and the error names the slot, the path and why.
Exit codes: 0 done; 1 invalid config, or more s6 services than s6-svscan
supervises (nothing written); 100 bad usage; 111 system error (including: a
slot that cannot be applied, nothing changed; not the user the supervision
tree runs as).")]
    Apply(ApplyArgs),
    /// Add an instance of a templated slot at runtime (as the tree's user, like apply)
    #[command(after_help = "Examples:
  svctl register eve                         gateway-{instance} -> gateway-eve
  svctl register --slot 'worker-{instance}' w3

The instance is recorded under the config's state_dir (so it survives restarts)
and the slot is created and supervised at once.
Exit codes: 0 done; 1 invalid config or name, or one slot more than s6-svscan
supervises (nothing registered); 100 bad usage (several templates and no
--slot); 111 system error (including: not the tree's user).")]
    Register(RegisterArgs),
    /// Remove an instance added with `register` (as the tree's user, like apply)
    #[command(after_help = "Examples:
  svctl unregister eve
  svctl unregister --slot 'worker-{instance}' w3

Stops the slot (bounded wait), removes it and prunes its supervisor.
Exit codes: 0 done; 1 not a registered instance; 100 bad usage; 111 system error
(including: not the tree's user).")]
    Unregister(RegisterArgs),
    /// Remove what state_dir keeps for names the config no longer declares (as the tree's user, like apply)
    #[command(after_help = "Examples:
  svctl forget old-worker                    its remembered state (autostart remember)
  svctl forget 'gw-{instance}'               the instances registered for that template
  svctl forget --all                         every such record

After an image renames a slot or a template, what the old name left in
state_dir (desired/NAME, instances/TEMPLATE/) is never read again; the boot
hook, `svctl status` and `svctl plan` name it. A name the config declares,
or one with nothing to forget, is refused and nothing is removed.
Exit codes: 0 done (--all: also when there was nothing); 1 invalid config, a
name the config declares or with nothing to forget (nothing removed); 100 bad
usage; 111 system error (including: not the tree's user).")]
    Forget(ForgetArgs),
    /// Send a signal to slots' processes
    #[command(after_help = "Examples:
  svctl signal HUP gateway-default
  svctl signal SIGUSR1 gateway-a gateway-b
  svctl signal 15 dashboard

Signals: TERM KILL HUP INT QUIT ALRM USR1 USR2 STOP CONT WINCH (name, SIGNAME or number).
An exit after TERM, INT, QUIT or KILL counts as asked for: the slot is
restarted, never kept down as a clean exit of its own.
Exit codes: 0 sent; 4 unknown slot; 100 bad usage; 111 system error.")]
    Signal(SignalArgs),
    /// Validate the config and print every error found
    #[command(after_help = "Examples:
  svctl check
  svctl check --config-dir /etc/svkit
  svctl check --root /mnt/image            users looked up in the image's /etc/passwd

Prints one line per error, FILE:LINE:COL: FIELD: message.
A slot's user missing from the passwd database is an error with --root, or
inside the running container; elsewhere (a build host) a warning.
A ${VAR} in a user or instances.count, unset here without a default, is a
warning: the container's environment may set it (the boot refuses it unset).
The s6 services the config needs (a slot, plus one for its logger, plus
the others s6-svscan supervises) must fit in s6-svscan's limit: inside the
running container, its own and what is in the scandir; elsewhere (or with
--root) 1,000 and s6-overlay's own 3, assumed, and said so.
Exit codes: 0 valid, 1 invalid, too many services or a scandir entry that
stops s6-svscan's scan, 100 bad usage, 111
unreadable config dir.")]
    Check(CheckArgs),
    /// Render every declared slot into an empty directory (never a live scandir)
    #[command(after_help = "Examples:
  svctl render --to /tmp/slots
  svctl render --to ./out --config-dir ./svkit.d && cat ./out/*/run

Renders what the container's root-run /init supervises (s6-setuidgid for
slots with a user), whoever runs it. Users are checked as `svctl check` does.
Nothing is written when the config is invalid.
Exit codes: 0 rendered, 1 invalid config, 100 bad usage (e.g. DIR not empty), 111 system error.")]
    Render(RenderArgs),
    /// Run a one-off command in the foreground as a slot runs its program
    #[command(after_help = "Examples:
  svctl exec gateway-default -- app migrate
  svctl exec api -- sh -c 'echo \"$API_TOKEN\" | wc -c'

The command gets what the slot's program gets: its user (when run as
root), cwd, env, env files and secrets (read now, as at a start), over the
container's environment. It is not supervised, does not wait for the
slot's depends_on, and does not need the slot to run. svctl execs it: its
exit code is svctl's.
Exit codes: the command's own; 4 the slot is not declared in the config; 1
invalid config; 78 an env file or secret refused; 100 bad usage; 111
system error (e.g. unknown user); 126 not executable; 127 not found.")]
    Exec(ExecArgs),
    /// Turn a supervisord config, a Procfile, an s6-overlay tree or a crontab into an svkit config
    #[command(after_help = "Examples:
  svctl import /etc/supervisor/supervisord.conf > /etc/svkit/10-app.json
  svctl import --check --root / -o /etc/svkit/10-app.json supervisord.conf
  svctl import --from procfile Procfile
  crontab -l > crontab.txt && svctl import crontab.txt

Prints the config (or writes --output FILE: a temp file renamed into place;
an existing FILE only with --force). On stderr, one line per key or section
not carried over as written, FILE:LINE: KEY: why, then a summary line.
The result always passes `svctl check`; --check also checks users (and, with
--root, programs) as `svctl check` does. See docs/import.md.
Exit codes: 0 imported (the report may list what did not carry over); 1 the
input cannot be imported, or --check found errors (nothing written); 100 bad
usage, or --output FILE exists without --force; 111 system error.")]
    Import(ImportArgs),
}
