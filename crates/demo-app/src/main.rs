//! `app`: a stand-in for the reference deployment's agent, for svkit's demo
//! image and tests. Not part of svkit.
//!
//!   app gateway run [-p PROFILE] [--replace] [--port P]
//!   app dashboard [--host H] [--port P] [--name NAME]   (NAME in its lines)
//!   app sidecar --port P
//!   app report                                           (one line, exit 0)
//!
//! Each server prints a banner (with ⚕), a heartbeat every APP_HEARTBEAT_MS
//! (default 3000), takes APP_STOP_MS (default 0) to stop on TERM (a slow
//! shutdown: `stopping`, then `stopped` when done), answers `GET /healthz` on loopback, exits 78 (EX_CONFIG)
//! when APP_CONFIG_BAD is set or `$HOME/config.bad` exists, and crashes
//! (exit 70) on SIGUSR1 — `svctl signal USR1 SLOT` shows a restart.
#![forbid(unsafe_code)]

use nix::sys::signal::{SigSet, Signal};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

fn usage() -> ! {
    eprintln!("usage: app gateway run [-p PROFILE] [--replace] [--port P] | app dashboard [--port P] [--name NAME] | app sidecar --port P | app report");
    std::process::exit(64)
}

fn opt(args: &[String], names: &[&str]) -> Option<String> {
    args.iter()
        .position(|a| names.contains(&a.as_str()))
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    // An argument that is not UTF-8 is a usage error, never a panic.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().unwrap_or_else(|_| usage()))
        .collect();
    // Options may come anywhere (`app -p alice gateway run`); words are the rest.
    let mut words: Vec<&str> = Vec::new();
    let mut it = args.iter().map(String::as_str);
    while let Some(a) = it.next() {
        match a {
            "-p" | "--profile" | "--port" | "--host" | "--name" => {
                it.next();
            }
            a if a.starts_with('-') && a != "--version" => {}
            a => words.push(a),
        }
    }
    let port = |default: u16| -> u16 {
        match opt(&args, &["--port"]) {
            Some(p) => p.parse().unwrap_or_else(|_| usage()),
            None => default,
        }
    };
    match words.as_slice() {
        ["gateway", "run", ..] => {
            let profile = opt(&args, &["-p", "--profile"]).unwrap_or_else(|| "default".into());
            serve(
                &format!("gateway {profile}"),
                port(0),
                args.iter().any(|a| a == "--replace"),
            )
        }
        ["dashboard", ..] => serve(
            &opt(&args, &["--name"]).unwrap_or_else(|| "dashboard".into()),
            port(0),
            false,
        ),
        ["sidecar", ..] => serve("sidecar", port(0), false),
        ["report"] => report(),
        ["--version"] => println!("app 0.1.0 (svkit demo)"),
        _ => usage(),
    }
}

/// The demo's periodic job: the profiles under `$HOME/profiles`, as a
/// nightly report of the reference deployment would.
fn report() {
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
    let profiles = std::fs::read_dir(std::path::Path::new(&home).join("profiles"))
        .map(|d| d.flatten().filter(|e| e.path().is_dir()).count())
        .unwrap_or(0);
    println!("app: report: profiles: {profiles}");
}

fn config_bad() -> bool {
    if std::env::var_os("APP_CONFIG_BAD").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    std::env::var_os("HOME").is_some_and(|h| std::path::Path::new(&h).join("config.bad").exists())
}

fn serve(what: &str, port: u16, replace: bool) -> ! {
    // Crash on request; TERM ends cleanly. Blocked here, waited for below.
    let mut sigs = SigSet::empty();
    for s in [Signal::SIGUSR1, Signal::SIGTERM, Signal::SIGINT] {
        sigs.add(s);
    }
    let _ = sigs.thread_block();
    if config_bad() {
        eprintln!("app: fatal: {what}: bad config");
        std::process::exit(78);
    }
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("app: fatal: {what}: unable to listen on 127.0.0.1:{port}: {e}");
            std::process::exit(71)
        }
    };
    let bound = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    let supervised = std::env::var("APP_SUPERVISED_CHILD").unwrap_or_default();
    println!(
        "⚕ {what} up on 127.0.0.1:{bound} (pid {}{}{})",
        std::process::id(),
        if replace { ", replace" } else { "" },
        if supervised.is_empty() {
            String::new()
        } else {
            format!(", slot {supervised}")
        }
    );
    let _ = std::io::stdout().flush();
    std::thread::spawn(move || health(listener));
    let beat = std::env::var("APP_HEARTBEAT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let name = what.to_string();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(beat));
        println!("⚕ {name} heartbeat");
        let _ = std::io::stdout().flush();
    });
    loop {
        match sigs.wait() {
            Ok(Signal::SIGUSR1) => {
                eprintln!("app: {what}: crashing on request (SIGUSR1)");
                std::process::exit(70)
            }
            Ok(_) => {
                println!("⚕ {what} stopping");
                let _ = std::io::stdout().flush();
                let ms: u64 = (std::env::var("APP_STOP_MS").ok())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if ms > 0 {
                    std::thread::sleep(Duration::from_millis(ms));
                    println!("⚕ {what} stopped after {ms} ms");
                }
                std::process::exit(0)
            }
            Err(_) => {}
        }
    }
}

fn health(listener: TcpListener) {
    for conn in listener.incoming().flatten() {
        let mut conn = conn;
        let mut buf = [0u8; 512];
        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = conn.read(&mut buf);
        let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
    }
}
