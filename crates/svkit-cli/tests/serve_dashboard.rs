//! The dashboard of `svkit serve` in headless Chromium (Debian's
//! `chromium` and `chromium-driver`, driven by `selenium` from PyPI, both
//! installed by `make deps`), against the real server in the sandbox: the
//! table lists every slot, a crash shows within 2 s without a reload,
//! with the token Stop stops the slot, the console has no error, and on
//! a phone in dark mode it is dark and no wider than the screen. The
//! server listens on a unix socket in the data volume; the browser reaches
//! it through a forwarder in the driving script.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::process::Command;
use std::time::Duration;

use svctl_common::*;
use svkit_testkit::skip;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "http": { "listen": "unix:/data/http.sock", "token_file": "/run/token" },
  "slots": [
    { "name": "web", "command": ["sleep", "100000"] },
    { "name": "worker", "command": ["sleep", "100000"] },
    { "name": "talk", "log": { "dir": "/data/logs/talk" },
      "command": ["sh", "-c", "echo hello from talk; exec sleep 100000"] },
    { "name": "off", "autostart": "never", "command": ["sleep", "100000"] },
    { "name": "bad", "command": ["sh", "-c", "exit 78"] },
    { "name": "nightly", "type": "oneshot", "command": ["true"],
      "schedule": { "cron": "0 3 * * *" } }
  ]
}"#;

/// `python3 -c DRIVE SOCKET KILL_CMD SHOT`: serves the unix socket on a
/// local TCP port, opens the page and prints what it checked.
const DRIVE: &str = r##"
import json, socket, socketserver, subprocess, sys, threading, time
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sock, kill, shot = sys.argv[1:4]

class Forward(socketserver.BaseRequestHandler):
    def handle(self):
        u = socket.socket(socket.AF_UNIX)
        u.connect(sock)
        def pipe(a, b):
            try:
                while True:
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        t = threading.Thread(target=pipe, args=(u, self.request), daemon=True)
        t.start()
        pipe(self.request, u)
        t.join()

class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

srv = Server(("127.0.0.1", 0), Forward)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/" % srv.server_address[1]

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,560"]:
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
d = webdriver.Chrome(options=opts, service=webdriver.ChromeService("/usr/bin/chromedriver"))
out = {}
try:
    d.get(url)
    wait = WebDriverWait(d, 10, poll_frequency=0.05)
    # Read in one call: the table is drawn anew at every event.
    cells = lambda n: d.execute_script(
        "const r = document.querySelector('tr[data-slot=\"' + arguments[0] + '\"]');"
        "return r ? [...r.cells].map((c) => c.textContent) : [];", n) or [""] * 9
    wait.until(lambda _: d.find_element(By.ID, "live").text == "live")
    wait.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, "#slots tbody tr")) >= 7)
    out["slots"] = d.execute_script(
        "return [...document.querySelectorAll('#slots tbody tr')].map((r) => r.dataset.slot)")
    wait.until(lambda _: cells("bad")[1] == "failed")
    out["bad_why"] = cells("bad")[8]
    wait.until(lambda _: cells("nightly")[1] == "scheduled")
    out["nightly_why"] = cells("nightly")[8]

    # A crash: shown without a reload, within 2 s.
    before = cells("worker")[4]
    subprocess.check_call(kill, shell=True)
    t0 = time.monotonic()
    WebDriverWait(d, 2, poll_frequency=0.05).until(lambda _: cells("worker")[4] != before)
    out["crash_shown_s"] = time.monotonic() - t0
    out["worker_after"] = cells("worker")

    # The token, then Stop (confirmed) on web.
    d.find_element(By.ID, "token").send_keys("s3cret")
    d.find_element(By.ID, "settoken").click()
    d.execute_script("document.querySelector('tr[data-slot=talk]').click()")
    wait.until(lambda _: "hello from talk" in d.find_element(By.ID, "log").text)
    d.execute_script("document.querySelector('tr[data-slot=web]').click()")
    d.find_element(By.CSS_SELECTOR, '#controls button[data-op="stop"]').click()
    WebDriverWait(d, 5).until(lambda _: d.switch_to.alert).accept()
    wait.until(lambda _: cells("web")[1] == "down")
    out["said"] = d.find_element(By.ID, "said").text
    out["token_stored"] = d.execute_script("return sessionStorage.getItem('svkit-token') !== null")
    out["cookies"] = d.get_cookies()
    d.save_screenshot(shot)

    # A phone in dark mode: nothing wider than the screen, dark colours.
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": 390, "height": 700, "deviceScaleFactor": 2, "mobile": True})
    d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                      {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    bg = lambda: d.execute_script("return getComputedStyle(document.body).backgroundColor")
    wait.until(lambda _: bg() != "rgb(251, 251, 250)")
    out["dark_bg"] = bg()
    out["phone_overflow"] = d.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    d.save_screenshot(shot.replace(".png", "-phone.png"))
    out["console"] = [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
finally:
    d.quit()
print(json.dumps(out))
"##;

fn browser_missing() -> Option<String> {
    if !std::path::Path::new("/usr/bin/chromedriver").exists() {
        return Some(
            "chromium-driver missing (make deps: apt-get install chromium chromium-driver)".into(),
        );
    }
    let o = Command::new("python3")
        .args(["-c", "import selenium"])
        .output();
    match o {
        Ok(o) if o.status.success() => None,
        _ => Some("selenium missing (make deps: pip install selenium)".into()),
    }
}

#[test]
fn dashboard_lists_slots_shows_a_crash_live_and_stops_with_the_token() {
    let test = "dashboard_lists_slots_shows_a_crash_live_and_stops_with_the_token";
    if !sandbox_or_skip(test) {
        return;
    }
    if let Some(why) = browser_missing() {
        skip(test, why);
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    sbx.sh("umask 077; echo s3cret > /run/token");
    wait_supervised(
        &sbx,
        &[
            "svkit-serve",
            "web",
            "worker",
            "talk",
            "off",
            "bad",
            "nightly",
        ],
    );
    let sock = fx.data.path().join("http.sock");
    poll("the server listens", Duration::from_secs(10), || {
        sock.exists().then_some(())
    });
    let kill = sbx.exec_line(
        &[],
        &[
            "sh",
            "-c",
            "kill -9 $(s6-svstat -o pid /run/service/worker)",
        ],
    );
    let shot = std::env::var("SVKIT_DASHBOARD_SHOT")
        .unwrap_or_else(|_| fx.data.path().join("shot.png").display().to_string());
    let o = Command::new("python3")
        .args(["-c", DRIVE, &sock.display().to_string(), &kill, &shot])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let slots: Vec<&str> = (v["slots"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        slots,
        [
            "bad",
            "nightly",
            "off",
            "svkit-serve",
            "talk",
            "web",
            "worker"
        ],
        "{v}"
    );
    let why = v["nightly_why"].as_str().unwrap();
    assert!(
        why.starts_with("next run ") && why.contains(":00:00"),
        "{v}"
    );
    assert!(v["crash_shown_s"].as_f64().unwrap() < 2.0, "{v}");
    assert!(v["bad_why"].as_str().unwrap().contains("78"), "{v}");
    assert_eq!(v["said"], "stop: done", "{v}");
    assert_eq!(v["token_stored"], true, "{v}");
    assert_eq!(v["cookies"], serde_json::json!([]), "{v}");
    assert_eq!(
        v["console"],
        serde_json::json!([]),
        "no console errors: {v}"
    );
    let (_, doc) = status_json(&sbx, &["web"]);
    assert_eq!(slot_json(&doc, "web")["state"], "down");
}
