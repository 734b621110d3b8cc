//! `svkit serve` in the sandbox under real s6: booted as the slot the
//! config's `http` renders, each endpoint and status code against slots
//! that are up, waiting, failed, done, unhealthy and stopped; `/readyz` following a crash
//! and the readiness after it; the token (none, wrong, right, a file every
//! user may read); control through POST; and hostile clients (oversized
//! heads, 200 idle connections, a slow head, `../` and control characters
//! in a name) while `/livez` keeps answering in under 100 ms. The clients
//! run inside the sandbox (python3), over a unix socket.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;

use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "http": { "listen": "unix:/run/svkit-http.sock" },
  "slots": [
    { "name": "web", "command": ["sleep", "100000"] },
    { "name": "off", "autostart": "never", "command": ["sleep", "100000"] },
    { "name": "waits", "command": ["sleep", "100000"], "depends_on": { "off": "up" } },
    { "name": "bad", "command": ["sh", "-c", "exit 78"] },
    { "name": "job", "type": "oneshot", "command": ["true"] },
    { "name": "hourly", "type": "oneshot", "command": ["true"], "schedule": { "every_s": 3600 } },
    { "name": "nightly", "type": "oneshot", "command": ["sh", "-c", "exit 2"],
      "schedule": { "cron": "0 3 * * *" } },
    { "name": "sick", "command": ["sleep", "100000"],
      "liveness": { "exec": ["test", "!", "-e", "/tmp/sick"], "interval_ms": 100, "failures": 100 } },
    { "name": "talk", "log": { "dir": "/data/logs/talk" },
      "command": ["sh", "-c", "echo hello from talk; exec sleep 100000"] }
  ]
}"#;

/// A client: `python3 -c CLIENT METHOD PATH [TOKEN]` prints the status
/// code, a newline and the body.
const CLIENT: &str = r#"
import socket, sys
def req(method, path, token=None, sock="/run/svkit-http.sock"):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    auth = "Authorization: Bearer %s\r\n" % token if token else ""
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (method, path, auth)).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")
if __name__ == "__main__":
    code, body = req(*sys.argv[1:])
    print(code)
    sys.stdout.write(body)
"#;

fn http(sbx: &Sandbox, method: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut argv = vec!["python3", "-c", CLIENT, method, path];
    argv.extend(token);
    let o = sbx.exec(&argv);
    let out = stdout(&o);
    let (code, body) = out
        .split_once('\n')
        .unwrap_or_else(|| panic!("{method} {path}: {out:?} {}", err(&o)));
    (code.parse().unwrap(), body.to_string())
}

fn get(sbx: &Sandbox, path: &str) -> (u16, String) {
    http(sbx, "GET", path, None)
}

fn state(sbx: &Sandbox, slot: &str) -> String {
    let (code, body) = get(sbx, &format!("/v1/slots/{slot}"));
    assert_eq!(code, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    slot_json(&doc, slot)["state"].as_str().unwrap().to_string()
}

fn boot() -> (Fixture, Sandbox) {
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(
        &sbx,
        &[
            "svkit-serve",
            "web",
            "off",
            "waits",
            "bad",
            "job",
            "sick",
            "talk",
        ],
    );
    poll("the server answers", Duration::from_secs(10), || {
        let o = sbx.exec(&["python3", "-c", CLIENT, "GET", "/livez"]);
        stdout(&o).starts_with("200").then_some(())
    });
    (fx, sbx)
}

#[test]
fn endpoints_and_codes_against_slots_in_every_state() {
    if !sandbox_or_skip("endpoints_and_codes_against_slots_in_every_state") {
        return;
    }
    let (_fx, sbx) = boot();
    poll(
        "bad failed, waits waiting, job done",
        Duration::from_secs(10),
        || {
            let s = (state(&sbx, "bad"), state(&sbx, "waits"), state(&sbx, "job"));
            (s == ("failed".into(), "waiting".into(), "done".into())).then_some(())
        },
    );
    assert_eq!(state(&sbx, "web"), "up");
    assert_eq!(state(&sbx, "off"), "down");

    // The same document as `svctl status --json`, but for the clock.
    let (code, body) = get(&sbx, "/v1/slots");
    assert_eq!(code, 200);
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (_, cli) = status_json(&sbx, &[]);
    let names = |d: &serde_json::Value| -> Vec<String> {
        (d["slots"].as_array().unwrap().iter())
            .map(|s| format!("{} {}", s["name"], s["state"]))
            .collect()
    };
    assert_eq!(names(&doc), names(&cli));
    assert_eq!(doc["schema"], 1);
    assert!(slot_json(&doc, "web")["usage"]["rss_bytes"]
        .as_u64()
        .is_some());

    assert_eq!(
        get(&sbx, "/livez"),
        (200, "ok\n".into()),
        "a failed slot that is not essential"
    );
    assert_eq!(get(&sbx, "/readyz?slot=web").0, 200);
    // The socket is anyone's, as a TCP port is: a user's probe gets in.
    let o = sbx.exec(&[
        "s6-setuidgid",
        "nobody",
        "python3",
        "-c",
        CLIENT,
        "GET",
        "/livez",
    ]);
    assert_eq!(stdout(&o), "200\nok\n", "{}", err(&o));
    assert_eq!(get(&sbx, "/readyz?slot=off").0, 200, "not wanted up");
    assert_eq!(get(&sbx, "/readyz?slot=job").0, 200, "a oneshot done");
    // A scheduled job serves nothing: ready between runs; its failed last
    // run counts (as for the health check).
    assert_eq!(get(&sbx, "/readyz?slot=hourly").0, 200, "scheduled");
    assert_eq!(get(&sbx, "/readyz?slot=nightly").0, 200, "scheduled");
    sbx.run(&["svctl", "run", "--wait", "nightly"], 2);
    let (code, body) = get(&sbx, "/readyz?slot=nightly");
    assert_eq!(code, 503, "{body}");
    assert!(
        body.starts_with("nightly: failed (its last run failed"),
        "{body}"
    );
    // Unhealthy: its liveness check fails (not yet often enough to restart it).
    assert_eq!(get(&sbx, "/readyz?slot=sick").0, 200);
    sbx.sh("touch /tmp/sick");
    let (code, body) = poll("sick unhealthy", Duration::from_secs(5), || {
        let r = get(&sbx, "/readyz?slot=sick");
        (r.0 == 503).then_some(r)
    });
    assert_eq!((code, body.as_str()), (503, "sick: unhealthy\n"));
    assert_eq!(
        get(&sbx, "/livez").0,
        200,
        "unhealthy is no reason to restart the container"
    );
    sbx.sh("rm /tmp/sick");
    let (code, body) = get(&sbx, "/readyz");
    assert_eq!(code, 503);
    assert!(body.contains("bad: failed"), "{body}");
    assert!(body.contains("waits: waiting (off (up))"), "{body}");
    assert_eq!(get(&sbx, "/readyz?slot=web&slot=bad").0, 503);
    assert_eq!(get(&sbx, "/readyz?slot=nope").0, 404);
    assert_eq!(get(&sbx, "/readyz?slot=../x").0, 400);
    let (code, body) = get(&sbx, "/healthz");
    assert_eq!(code, 503, "svctl status exits 3");
    assert!(body.contains("bad ") && body.contains("failed"), "{body}");
    let (code, body) = get(&sbx, "/metrics");
    assert_eq!(code, 200);
    assert!(body.contains("svkit_slot_up{slot=\"web\"} 1"), "{body}");
    assert!(body.contains("svkit_slot_failed{slot=\"bad\"} 1"), "{body}");
    assert!(
        body.contains("svkit_slot_memory_rss_bytes{slot=\"web\"}"),
        "{body}"
    );
    assert_eq!(get(&sbx, "/v1/slots/nope").0, 404);
    assert_eq!(get(&sbx, "/nowhere").0, 404);
    assert_eq!(http(&sbx, "POST", "/livez", None).0, 405);
    assert_eq!(http(&sbx, "GET", "/v1/slots/web/stop", None).0, 405);
    let (code, body) = get(&sbx, "/");
    assert_eq!(code, 200);
    assert!(body.contains("<html"), "{body}");

    // Without a token file: logs and control are off.
    assert_eq!(get(&sbx, "/v1/slots/talk/logs").0, 403);
    assert_eq!(http(&sbx, "POST", "/v1/slots/web/stop", Some("x")).0, 403);
    assert_eq!(state(&sbx, "web"), "up");

    // A layer adds the token file: the server loads the config again.
    sbx.sh("umask 077; echo s3cret > /run/token")
        .status
        .success()
        .then_some(())
        .unwrap();
    let layer =
        r#"{ "http": { "listen": "unix:/run/svkit-http.sock", "token_file": "/run/token" } }"#;
    sbx.sh(&format!("echo '{layer}' > /etc/svkit/20-http.json"));
    poll("the token file is used", Duration::from_secs(5), || {
        (get(&sbx, "/v1/slots/talk/logs").0 == 401).then_some(())
    });
    assert_eq!(
        http(&sbx, "GET", "/v1/slots/talk/logs", Some("s3cre")).0,
        401
    );
    assert_eq!(
        http(&sbx, "GET", "/v1/slots/talk/logs", Some("s3cretX")).0,
        401
    );
    let (code, body) = http(&sbx, "GET", "/v1/slots/talk/logs?lines=5", Some("s3cret"));
    assert_eq!(code, 200);
    assert!(body.contains("hello from talk"), "{body}");
    assert_eq!(
        http(&sbx, "GET", "/v1/slots/talk/logs?lines=x", Some("s3cret")).0,
        400
    );
    assert_eq!(
        http(&sbx, "GET", "/v1/slots/web/logs", Some("s3cret")).0,
        404,
        "no log dir"
    );
    assert_eq!(
        http(&sbx, "POST", "/v1/slots/nope/stop", Some("s3cret")).0,
        404
    );
    assert_eq!(
        http(
            &sbx,
            "POST",
            "/v1/slots/web/signal?sig=BOGUS",
            Some("s3cret")
        )
        .0,
        400
    );
    assert_eq!(
        http(
            &sbx,
            "POST",
            "/v1/slots/web/signal?sig=CONT",
            Some("s3cret")
        )
        .0,
        200
    );
    // A token every user may read is no secret: refused.
    sbx.sh("chmod 644 /run/token");
    assert_eq!(
        http(&sbx, "POST", "/v1/slots/web/stop", Some("s3cret")).0,
        403
    );
    assert_eq!(state(&sbx, "web"), "up");
    sbx.sh("chmod 600 /run/token");

    // The streams: events as `svctl events --json` has them, a log
    // followed, and streams whose clients left do not hold their place.
    let out = py(&sbx, STREAMS);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let ev = &v["event"];
    assert_eq!(ev["slot"], "web", "{v}");
    for key in [
        "time",
        "event",
        "s6",
        "up",
        "want",
        "pid",
        "last_exit",
        "deaths",
        "why",
    ] {
        assert!(ev.get(key).is_some(), "{key} missing: {v}");
    }
    assert!(
        v["followed"].as_str().unwrap().contains("hello from talk"),
        "{v}"
    );
    assert_eq!(v["over_cap"], 503, "{v}");
    assert_eq!(v["after_close"], 200, "{v}");

    // Control goes through svctl's rules: stop, and it is down.
    assert_eq!(
        http(&sbx, "POST", "/v1/slots/web/stop", Some("wrong")).0,
        401
    );
    assert_eq!(state(&sbx, "web"), "up");
    let (code, body) = http(&sbx, "POST", "/v1/slots/web/stop", Some("s3cret"));
    assert_eq!(code, 200, "{body}");
    assert_eq!(state(&sbx, "web"), "down");
    assert_eq!(
        get(&sbx, "/readyz?slot=web").0,
        200,
        "stopped by an operator: not wanted up"
    );
    sbx.wait_for_log("POST /v1/slots/web/stop: 200", Duration::from_secs(5));
    let (code, _) = http(&sbx, "POST", "/v1/slots/web/start", Some("s3cret"));
    assert_eq!(code, 200);
    assert_eq!(state(&sbx, "web"), "up");
}

/// `python3 -c SCRIPT` in the sandbox's /tmp, beside the client.
fn py(sbx: &Sandbox, script: &str) -> String {
    sbx.sh(&format!("cat > /tmp/client.py <<'EOF'\n{CLIENT}\nEOF"));
    let o = sbx.exec(&["sh", "-c", "cd /tmp && exec python3 -c \"$0\"", script]);
    assert!(o.status.success(), "{}{}", stdout(&o), err(&o));
    stdout(&o)
}

/// Runs in the sandbox, the token set: reads `/v1/events` while web
/// restarts, follows talk's log while it restarts, then opens 2 event
/// streams and 18 log follows (over the cap of 16), closes them and
/// signals web; prints JSON.
const STREAMS: &str = r#"
import json, socket, subprocess, time
from client import req
def stream(path, token=None):
    s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect("/run/svkit-http.sock")
    auth = "Authorization: Bearer %s\r\n" % token if token else ""
    s.sendall(("GET %s HTTP/1.1\r\n%s\r\n" % (path, auth)).encode())
    return s
def until(s, want):
    data = b""
    while want not in data:
        b = s.recv(65536)
        if not b:
            raise SystemExit("stream ended: %r" % data)
        data += b
    return data.decode()
out = {}
ev = stream("/v1/events")
until(ev, b": svkit events\n\n")
subprocess.check_call(["svctl", "restart", "web"])
buf = ""
while "data: " not in buf or "\n\n" not in buf.split("data: ", 1)[1]:
    b = ev.recv(65536)
    if not b:
        raise SystemExit("event stream ended: %r" % buf)
    buf += b.decode()
line = buf.split("data: ", 1)[1].split("\n", 1)[0]
out["event"] = json.loads(line)
ev.close()
log = stream("/v1/slots/talk/logs?lines=0&follow=1", "s3cret")
until(log, b"\r\n\r\n")
subprocess.check_call(["svctl", "restart", "talk"])
out["followed"] = until(log, b"hello from talk")
log.close()
many = [stream("/v1/events") for _ in range(2)]
many += [stream("/v1/slots/talk/logs?lines=0&follow=1", "s3cret") for _ in range(18)]
time.sleep(0.5)
codes = []
for s in many:
    s.settimeout(0.5)
    try:
        codes.append(int(s.recv(100).split()[1]))
    except (socket.timeout, IndexError, ValueError):
        codes.append(0)
out["over_cap"] = 503 if 503 in codes else codes
for s in many:
    s.close()
t0 = time.monotonic()
code = 0
while time.monotonic() - t0 < 3:
    code = req("POST", "/v1/slots/web/signal?sig=CONT", "s3cret")[0]
    if code == 200:
        break
    time.sleep(0.05)
out["after_close"] = code
print(json.dumps(out))
"#;

/// Runs in the sandbox: kills web's program, then polls `/readyz?slot=web`
/// and s6's readiness; prints the seconds to the 503 after the kill and
/// from s6's readiness to the 200.
const CRASH: &str = r#"
import subprocess, time
from client import req
pid = subprocess.check_output(["s6-svstat", "-o", "pid", "/run/service/web"]).decode().strip()
subprocess.check_call(["kill", "-9", pid])
t0 = time.monotonic()
while req("GET", "/readyz?slot=web")[0] != 503:
    time.sleep(0.01)
down = time.monotonic() - t0
t_ready = None
while True:
    ready = subprocess.check_output(["s6-svstat", "-o", "up,ready", "/run/service/web"]).decode().split()
    now = time.monotonic()
    if t_ready is None and ready == ["true", "true"]:
        t_ready = now
    if req("GET", "/readyz?slot=web")[0] == 200:
        break
    if now - t0 > 20:
        raise SystemExit("never ready again")
    time.sleep(0.01)
print(down, time.monotonic() - (t_ready or time.monotonic()))
"#;

/// Runs in the sandbox: 200 idle connections, a head sent a byte every
/// 0.2 s, a 20 KB head and names with `../` and control characters, while
/// `/livez` is asked 30 times; prints JSON of what each got.
const HOSTILE: &str = r#"
import json, socket, threading, time
from client import req
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect("/run/svkit-http.sock"); return s
idle = [conn() for _ in range(200)]
for s in idle[:100]:
    s.sendall(b"GET /livez HTTP/1.1\r\n")
def slow():
    s = conn()
    try:
        for b in b"GET /livez HTTP/1.1\r\nX-Slow: " + b"a" * 100:
            s.send(bytes([b])); time.sleep(0.2)
    except OSError:
        pass
threading.Thread(target=slow, daemon=True).start()
big = conn()
big.sendall(b"GET /livez HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
big_code = int(big.recv(100).split()[1])
worst = 0.0
for _ in range(30):
    t = time.monotonic()
    code, _ = req("GET", "/livez")
    assert code == 200, code
    worst = max(worst, time.monotonic() - t)
    time.sleep(0.05)
names = {}
for p in ["/v1/slots/..%2f..%2fetc", "/v1/slots/../etc", "/v1/slots/a%0ab", "/v1/slots/.x", "/v1/slots/a\x01b"]:
    try:
        names[p] = req("GET", p)[0]
    except Exception as e:
        names[p] = str(e)
t = time.monotonic(); code, _ = req("GET", "/livez"); worst = max(worst, time.monotonic() - t)
print(json.dumps({"worst": worst, "big": big_code, "names": names}))
"#;

#[test]
fn readyz_follows_a_crash_and_hostile_clients_never_delay_livez() {
    if !sandbox_or_skip("readyz_follows_a_crash_and_hostile_clients_never_delay_livez") {
        return;
    }
    let (_fx, sbx) = boot();
    assert_eq!(get(&sbx, "/readyz?slot=web").0, 200);
    let out = py(&sbx, CRASH);
    let t: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert!(t[0] < 1.0, "503 {} s after the crash", t[0]);
    assert!(t[1] < 1.0, "200 {} s after readiness", t[1]);

    let out = py(&sbx, HOSTILE);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let worst = v["worst"].as_f64().unwrap();
    assert!(worst < 0.1, "/livez took {worst} s: {v}");
    assert_eq!(v["big"], 431, "{v}");
    for (p, code) in v["names"].as_object().unwrap() {
        assert_eq!(code, 400, "{p}: {v}");
    }
    // Nothing crashed: the same server answers.
    assert_eq!(get(&sbx, "/livez").0, 200);
    let logs = sbx.logs();
    assert!(logs.contains("431: request head over 8192 bytes"), "{logs}");
    assert!(!logs.contains("panicked"), "{logs}");
}
