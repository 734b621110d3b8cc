use super::*;
use crate::config::{load, FixedInstances};

fn slots(json: &str) -> Vec<Slot> {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("10.json"), json).expect("write");
    load(t.path(), &FixedInstances::default())
        .expect("valid config")
        .model
        .slots
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// redis <- migrate <- web, and a worker nothing depends on and that
/// depends on nothing.
const CHAIN: &str = r#"{ "slots": [
    { "name": "web", "command": ["x"], "depends_on": { "migrate": "up" } },
    { "name": "worker", "command": ["x"] },
    { "name": "migrate", "command": ["x"], "depends_on": { "redis": "up" } },
    { "name": "redis", "command": ["x"] } ] }"#;

#[test]
fn start_layers_put_dependencies_first() {
    let s = slots(CHAIN);
    let all = names(&["migrate", "redis", "web", "worker"]);
    assert_eq!(
        start_layers(&s, &all),
        [
            names(&["redis", "worker"]),
            names(&["migrate"]),
            names(&["web"])
        ]
    );
    // Only the given names, ranked as in the whole graph.
    assert_eq!(
        start_layers(&s, &names(&["web", "redis"])),
        [names(&["redis"]), names(&["web"])]
    );
}

#[test]
fn stop_layers_put_dependents_and_independents_first() {
    let s = slots(CHAIN);
    let all = names(&["migrate", "redis", "web", "worker"]);
    assert_eq!(
        stop_layers(&s, &all),
        [
            names(&["web", "worker"]),
            names(&["migrate"]),
            names(&["redis"])
        ]
    );
    // Not in the config (a foreign slot): nothing depends on it.
    assert_eq!(
        stop_layers(&s, &names(&["redis", "other"])),
        [names(&["other"]), names(&["redis"])]
    );
}

/// Each diagnostic of an invalid config, as a user reads it.
fn errors(json: &str) -> Vec<String> {
    let files = vec![(
        std::path::PathBuf::from("/etc/svkit/10.json"),
        json.as_bytes().to_vec(),
    )];
    match crate::config::load_layers(&files, &FixedInstances::default()) {
        Err(crate::config::LoadError::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
        Err(e) => panic!("expected an invalid config, got {e}"),
        Ok(_) => panic!("expected an invalid config, it loaded"),
    }
}

/// `line:col` of the first `needle` in `json` after `after`, counted as
/// the loader counts (1-based, bytes).
fn at(json: &str, after: &str, needle: &str) -> String {
    let from = json.find(after).expect("anchor in the text");
    let off = from + json[from..].find(needle).expect("needle after the anchor");
    let line = json[..off].matches('\n').count() + 1;
    let col = off - json[..off].rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{col}")
}

/// Each slot's dependencies as `on:condition`, by slot name.
fn deps(json: &str) -> BTreeMap<String, Vec<String>> {
    (slots(json).into_iter())
        .map(|s| {
            let d = (s.depends_on.iter())
                .map(|d| format!("{}:{}", d.on, d.condition.as_str()))
                .collect();
            (s.name, d)
        })
        .collect()
}

#[test]
fn each_condition_word_is_kept_and_a_template_means_each_instance() {
    let d = deps(
        r#"{ "slots": [
        { "name": "migrate", "type": "oneshot", "command": ["x"] },
        { "name": "db-{instance}", "instances": { "names": ["b", "a"] }, "command": ["x"] },
        { "name": "cache", "command": ["x"] },
        { "name": "web", "command": ["x"],
          "depends_on": { "migrate": "completed", "db-{instance}": "ready", "cache": "up" } },
        { "name": "job", "command": ["x"], "restart": { "on_clean_exit": "stop" } },
        { "name": "report", "command": ["x"], "depends_on": { "job": "completed", "db-a": "up" } } ] }"#,
    );
    let want = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        d["web"],
        want(&["cache:up", "db-b:ready", "db-a:ready", "migrate:completed"])
    );
    assert_eq!(d["report"], want(&["db-a:up", "job:completed"]));
    assert_eq!(d["cache"], want(&[]));
    assert_eq!(d["db-a"], want(&[]));
}

#[test]
fn a_name_that_is_no_slot_is_an_error_at_its_key() {
    let json = r#"{ "slots": [
        { "name": "db", "command": ["x"] },
        { "name": "api", "command": ["x"], "depends_on": { "db": "up", "dbb": "up" } },
        { "name": "w-{instance}", "instances": { "names": ["a"] }, "command": ["x"],
          "depends_on": { "w-a": "up", "worker-{instance}": "up" } } ] }"#;
    assert_eq!(
        errors(json),
        [
            format!(
                "/etc/svkit/10.json:{}: slots[1].depends_on.dbb: depends on undeclared slot `dbb`",
                at(json, "api", r#""dbb""#)
            ),
            format!(
                "/etc/svkit/10.json:{}: slots[2].depends_on.w-a: slot `w-a` depends on itself",
                at(json, "\"w-{", r#""w-a""#)
            ),
            format!(
                "/etc/svkit/10.json:{}: slots[2].depends_on[\"worker-{{instance}}\"]: depends on undeclared slot `worker-{{instance}}`",
                at(json, "\"w-{", r#""worker-"#)
            ),
        ]
    );
}

#[test]
fn a_slot_declared_with_errors_of_its_own_is_no_unknown_name() {
    let json = r#"{ "slots": [
        { "name": "db", "command": ["x"], "autostart": "sometimes" },
        { "name": "api", "command": ["x"], "depends_on": { "db": "up" } } ] }"#;
    let e = errors(json);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("slots[0].autostart"), "{e:#?}");
}

#[test]
fn a_word_that_is_no_condition_and_a_slot_that_never_completes_are_errors() {
    let json = r#"{ "slots": [
        { "name": "db", "command": ["x"] },
        { "name": "job", "type": "oneshot", "command": ["x"] },
        { "name": "api", "command": ["x"], "depends_on": { "db": "completed", "job": "done" } } ] }"#;
    let key = |k: &str| at(json, "\"api\"", &format!("\"{k}\""));
    assert_eq!(
        errors(json),
        [
            format!(
                "/etc/svkit/10.json:{}: slots[2].depends_on.db: `db` never completes: `completed` needs a oneshot (or on_clean_exit: \"stop\")",
                key("db")
            ),
            format!(
                "/etc/svkit/10.json:{}: slots[2].depends_on.job: `done`: expected \"up\", \"ready\" or \"completed\"",
                key("job")
            ),
        ]
    );
}

/// A config whose `depends_on` are `edges` (`from` depends on `to`, all
/// `up`), every slot a plain longrun; slots in `names`' order.
fn graph(names: &[&str], edges: &[(&str, &str)]) -> String {
    let slots: Vec<String> = (names.iter())
        .map(|n| {
            let on: Vec<String> = (edges.iter())
                .filter(|(from, _)| from == n)
                .map(|(_, to)| format!("\"{to}\": \"up\""))
                .collect();
            format!(
                "{{ \"name\": \"{n}\", \"command\": [\"x\"], \"depends_on\": {{ {} }} }}",
                on.join(", ")
            )
        })
        .collect();
    format!("{{ \"slots\": [\n{}\n] }}", slots.join(",\n"))
}

/// The cycle each error shows, by the slot it is reported at, checking
/// that it is located at that slot's `depends_on`.
fn cycles_shown(json: &str) -> Vec<(String, String)> {
    (errors(json).into_iter())
        .map(|e| {
            let (head, shown) = e.split_once(": dependency cycle: ").expect("a cycle error");
            let (loc, path) = head.rsplit_once(": ").expect("a field path");
            let i: usize = (path.strip_prefix("slots["))
                .and_then(|p| p.strip_suffix("].depends_on"))
                .and_then(|p| p.parse().ok())
                .expect("slots[i].depends_on");
            // The i-th slot's `depends_on` key is where the error points.
            let line = json.lines().nth(i + 1).expect("one slot a line");
            let col = line.find("\"depends_on\"").expect("its depends_on") + 1;
            assert_eq!(loc, format!("/etc/svkit/10.json:{}:{col}", i + 2), "{e}");
            let name = shown.split(" -> ").next().expect("a first name");
            (name.to_string(), shown.to_string())
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn each_slot_on_a_cycle_shows_it_from_itself_and_no_other_slot_is_blamed() {
    // d waits on the cycle without being on it; e is alone.
    let json = graph(
        &["a", "b", "c", "d", "e"],
        &[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")],
    );
    assert_eq!(
        cycles_shown(&json),
        pairs(&[
            ("a", "a -> b -> c -> a"),
            ("b", "b -> c -> a -> b"),
            ("c", "c -> a -> b -> c"),
        ])
    );
}

#[test]
fn each_slot_shows_its_shortest_way_back_and_separate_cycles_each_their_own() {
    // a <-> b, and b -> c -> d -> b through b: one knot of four slots;
    // x <-> y apart; r waits on both knots.
    let json = graph(
        &["a", "b", "c", "d", "r", "x", "y"],
        &[
            ("a", "b"),
            ("b", "a"),
            ("b", "c"),
            ("c", "d"),
            ("d", "b"),
            ("r", "a"),
            ("r", "x"),
            ("x", "y"),
            ("y", "x"),
        ],
    );
    assert_eq!(
        cycles_shown(&json),
        pairs(&[
            ("a", "a -> b -> a"),
            ("b", "b -> a -> b"),
            ("c", "c -> d -> b -> c"),
            ("d", "d -> b -> c -> d"),
            ("x", "x -> y -> x"),
            ("y", "y -> x -> y"),
        ])
    );
}

/// A ring of `n` slots `s00 -> s01 -> ... -> s00`.
fn ring(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("s{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let edges: Vec<(&str, &str)> = (0..n).map(|i| (refs[i], refs[(i + 1) % n])).collect();
    graph(&refs, &edges)
}

#[test]
fn a_long_cycle_is_shown_by_its_ends_and_its_length() {
    // 11 slots: 12 names with the first at both ends, shown whole.
    let shown = cycles_shown(&ring(11));
    assert_eq!(shown.len(), 11);
    assert_eq!(
        shown[0].1,
        "s00 -> s01 -> s02 -> s03 -> s04 -> s05 -> s06 -> s07 -> s08 -> s09 -> s10 -> s00"
    );
    // 12 slots: 13 names, past what one line shows.
    let shown = cycles_shown(&ring(12));
    assert_eq!(shown.len(), 12);
    assert_eq!(
        shown[0].1,
        "s00 -> s01 -> s02 -> s03 -> s04 -> s05 -> s06 -> s07 -> s08 -> s09 -> ... -> s11 -> s00 (12 slots)"
    );
    assert_eq!(
        shown[3].1,
        "s03 -> s04 -> s05 -> s06 -> s07 -> s08 -> s09 -> s10 -> s11 -> s00 -> ... -> s02 -> s03 (12 slots)"
    );
}

#[test]
fn start_order_puts_each_slot_after_its_dependencies_ties_by_name() {
    // Against the alphabet: a waits on m, m and c on z; b waits on nothing.
    let json = graph(
        &["a", "b", "c", "m", "z"],
        &[("a", "m"), ("m", "z"), ("c", "z")],
    );
    let s = slots(&json);
    assert_eq!(start_order(&s), ["b", "z", "c", "m", "a"]);
}

#[test]
fn start_order_puts_slots_on_a_cycle_last_by_name() {
    // A cycle is refused by validation; the order still places every
    // slot once, those that can never start last.
    let json = graph(&["q", "p", "a", "z"], &[("q", "p"), ("a", "z")]);
    let mut s = slots(&json);
    let p = s.iter().position(|s| s.name == "p").expect("p");
    s[p].depends_on.push(Dependency {
        on: "q".into(),
        condition: Condition::Up,
    });
    assert_eq!(start_order(&s), ["z", "a", "p", "q"]);
}

/// Tarjan's components themselves: the cycle errors would come out the
/// same from one component of everything (the ring search finds no way
/// back from a slot off a cycle), only in quadratic time.
#[test]
fn each_knot_is_a_component_of_its_own() {
    let json = graph(
        &["a", "b", "c", "d", "e"],
        &[("a", "b"), ("c", "d"), ("e", "a")],
    );
    let mut s = slots(&json);
    for (from, to) in [(1, "a"), (3, "c")] {
        s[from].depends_on.push(Dependency {
            on: to.into(),
            condition: Condition::Up,
        });
    }
    let c = super::Graph::new(&s).components();
    assert_eq!(c[0], c[1]);
    assert_eq!(c[2], c[3]);
    let distinct: BTreeSet<usize> = [c[0], c[2], c[4]].into();
    assert_eq!(distinct.len(), 3, "{c:?}");
}

#[test]
fn a_cycle_of_any_graph_starts_at_its_first_node() {
    assert_eq!(super::cycle(vec![vec![1], vec![2], vec![]]), None);
    assert_eq!(
        super::cycle(vec![vec![1], vec![2], vec![0]]),
        Some(vec![0, 1, 2, 0])
    );
    assert_eq!(super::cycle(vec![vec![0]]), Some(vec![0, 0]));
    assert_eq!(
        super::cycle(vec![vec![1], vec![2], vec![1]]),
        Some(vec![1, 2, 1])
    );
    let chain: Vec<Vec<usize>> = (0..20_000)
        .map(|i| if i + 1 < 20_000 { vec![i + 1] } else { vec![] })
        .collect();
    assert_eq!(super::cycle(chain), None);
}
