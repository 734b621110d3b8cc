//! Unit tests of the span scanner and its lookups.

use super::*;

#[test]
fn spans_and_paths() {
    let text = "{\n  \"slots\": [\n    {\"name\": \"a\", \"log\": {\"keep\": 3}}\n  ]\n}\n";
    let s = Spans::scan(text).unwrap();
    let p = FieldPath::root()
        .key("slots")
        .index(0)
        .key("log")
        .key("keep");
    assert_eq!(p.to_string(), "slots[0].log.keep");
    let span = s.get(&p).unwrap();
    assert_eq!(&text[span.start..span.end], "3");
    assert_eq!(s.pos(span.start), Pos { line: 3, col: 35 });
    assert_eq!(s.place_at(span.start).0, p);
    assert_eq!(s.pos_of(&p), Some(Pos { line: 3, col: 27 }));
}

#[test]
fn duplicate_keys_are_found() {
    let s = Spans::scan(r#"{"a": 1, "b": {"x": 1, "x": 2}, "a": 3}"#).unwrap();
    let d: Vec<String> = s
        .duplicate_keys
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(d, vec!["b.x", "a"]);
}

#[test]
fn odd_keys_are_quoted() {
    let p = FieldPath::root().key("env").key("A B");
    assert_eq!(p.to_string(), "env[\"A B\"]");
}

const MANY: usize = 20;

#[test]
fn a_repeated_key_holds_its_last_value_at_its_first_place() {
    // A small object and a larger one.
    let many: String = (0..MANY).map(|i| format!("\"k{i}\": {i}, ")).collect();
    for lead in ["", many.as_str()] {
        let text = format!(r#"{{{lead}"a": 1, "b": {{"x": 1}}, "a": [3]}}"#);
        let s = Spans::scan(&text).unwrap();
        let a = s.get(&FieldPath::root().key("a")).unwrap();
        assert_eq!(&text[a.start..a.end], "[3]", "{text}");
        let keys: Vec<String> = (s.members(&FieldPath::root()).into_iter())
            .map(|(p, _)| p.to_string())
            .filter(|k| !k.starts_with('k'))
            .collect();
        assert_eq!(keys, ["a", "b"], "{text}");
        let leading = if lead.is_empty() { 0 } else { MANY };
        assert_eq!(s.len(&FieldPath::root()), leading + 2, "{text}");
    }
}
