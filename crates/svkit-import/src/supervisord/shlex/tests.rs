//! `shlex`'s splitting, supervisord's `environment=` and shell syntax, as
//! Python and supervisord read them.

use super::*;

#[test]
fn split_as_python_shlex() {
    assert_eq!(
        split(r#"php -d "memory_limit = 1G" 'a b'c \$x "q\"t" "\n""#).unwrap(),
        [
            "php",
            "-d",
            "memory_limit = 1G",
            "a bc",
            "$x",
            "q\"t",
            "\\n"
        ]
    );
    assert!(split("a 'b").is_err());
    assert_eq!(split("  ").unwrap(), Vec::<String>::new());
}

#[test]
fn env_pairs_as_supervisord() {
    assert_eq!(
        env_pairs(r#"KEY="a,b",K2=v, URL=http://x:80/y,E="""#).unwrap(),
        [
            ("KEY".into(), "a,b".into()),
            ("K2".into(), "v".into()),
            ("URL".into(), "http://x:80/y".into()),
            ("E".into(), String::new()),
        ]
    );
    let e = env_pairs("A=b c").unwrap_err();
    assert!(e.contains("after A=…, found `c`"), "{e}");
    assert!(env_pairs("A=$HOME").is_err());
    assert!(env_pairs("A").is_err());
    assert!(env_pairs("A='x").is_err());
    // The lexer's tokens are strings: a quoted `=` or `,` reads as the
    // sign itself, a sign may be a key or a value, and one a comma
    // does not end the list.
    assert_eq!(
        env_pairs(r#"A "=" 1 "," B=2,"#).unwrap(),
        [("A".into(), "1".into()), ("B".into(), "2".into())]
    );
    assert_eq!(
        env_pairs("A==,B=(").unwrap(),
        [("A".into(), "=".into()), ("B".into(), "(".into())]
    );
    let e = env_pairs("A=1;B=2").unwrap_err();
    assert!(e.contains("after A=…, found `;`"), "{e}");
}

#[test]
fn env_pairs_read_as_tokens_first() {
    // A text that does not read as tokens is that error, wherever it
    // is, before any pair out of place.
    assert_eq!(
        env_pairs(r#"A=1 B=2,C="x"#).unwrap_err(),
        "no closing quotation (a `\"` opened)"
    );
    assert_eq!(
        env_pairs("A B,C=\\").unwrap_err(),
        "no escaped character after a final `\\`"
    );
    assert_eq!(
        env_pairs(
            r#"H=a"b c"'d\'e, F="a\"b\\c\d" # x, Y=1
          ,D=ßé-(y):z"#
        )
        .unwrap(),
        [
            ("H".into(), "ab cd\\e".into()),
            ("F".into(), r#"a"b\c\d"#.into()),
            ("D".into(), "ßé-(y):z".into()),
        ]
    );
}

#[test]
fn unquoted_words_are_the_runs_between_blanks() {
    assert_eq!(split(" a\tb  c ").unwrap(), ["a", "b", "c"]);
}

#[test]
fn shell_syntax_is_seen_outside_quotes() {
    assert!(!shellish("nginx -g 'daemon off;'").any());
    assert!(shellish("a | b").list);
    assert!(shellish("a && b").list);
    let r = shellish("a >> /log 2>&1");
    assert!(r.redirections && !r.list);
    assert!(shellish("echo \"$HOME\"").expansions);
    assert!(!shellish("echo '$HOME'").expansions);
    assert!(!shellish("price 5$").expansions);
}
