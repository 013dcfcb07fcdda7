//! Every corpus file parses (no GPU needed), and printing its AST gives a script that parses
//! back to the same text: the parser and `Display` agree on the whole corpus.

use ferrite_tests::amber::parser;
use std::path::Path;

#[test]
fn corpus_parses_and_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("amber");
    let mut n = 0;
    // The generated subgroup files outside the default run (scripts/amber-run --subgroups-full)
    // are parsed here too, so that a parser change cannot break them unnoticed.
    let full =
        std::fs::read_dir(dir.join("subgroups-full")).expect("tests/amber/subgroups-full exists");
    for e in std::fs::read_dir(&dir)
        .expect("tests/amber exists")
        .chain(full)
    {
        let p = e.expect("dir entry").path();
        if p.extension().is_none_or(|x| x != "amber") {
            continue;
        }
        let name = p.display().to_string();
        let src = std::fs::read_to_string(&p).expect("read");
        let script = parser::parse(&name, &src).unwrap_or_else(|e| panic!("{e}"));
        assert!(!script.stmts.is_empty(), "{name} is empty");
        let printed = script.to_string();
        let again =
            parser::parse(&name, &printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
        assert_eq!(again.to_string(), printed, "{name}");
        n += 1;
    }
    assert!(n >= 120, "only {n} corpus files");
}
