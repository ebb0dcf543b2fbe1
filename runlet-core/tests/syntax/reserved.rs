//! Every reserved word as a binding (an error), as a field after `.` and as an object key (both
//! fine), and as a loop variable or caught error (errors).

use runlet::diag::codes;
use runlet::syntax::parse;
use runlet::syntax::token::Keyword;

use crate::support::render_report;

fn codes_of(source: &str) -> Vec<runlet::diag::Code> {
    parse(source).diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn reserved_words_cannot_be_bindings() {
    let mut report = String::new();
    for keyword in Keyword::ALL {
        let word = keyword.as_str();
        let source = format!("{word} = 1\nreturn 0\n");
        let parse = parse(&source);
        assert_eq!(codes_of(&source), [codes::RESERVED_WORD_AS_BINDING], "{source}");
        report.push_str(&render_report(&source, &parse.diagnostics));
    }
    insta::assert_snapshot!(report);
}

#[test]
fn a_reserved_word_declared_as_a_name_is_read_as_that_name_where_it_is_used() {
    // One diagnostic, whose rename fix covers the declaration and every use, even for words that
    // start a construct (`for`, `if`, `not`, `fail`, …) when what follows cannot continue it.
    for keyword in Keyword::ALL {
        let word = keyword.as_str();
        let source = format!("{word} = 1\ntotal = {word} + 1\nreturn [{word}, total]\n");
        let diagnostics = parse(&source).diagnostics;
        assert_eq!(diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), [codes::RESERVED_WORD_AS_BINDING]);
        let renamed = runlet::diag::apply_fixes(&source, &diagnostics[0].fixes).expect("the fix applies");
        let name = format!("{word}_value");
        assert_eq!(renamed, format!("{name} = 1\ntotal = {name} + 1\nreturn [{name}, total]\n"));
        assert_eq!(codes_of(&renamed), [], "{renamed}");
    }
}

#[test]
fn reserved_words_cannot_be_loop_variables_or_caught_errors() {
    for keyword in Keyword::ALL {
        let word = keyword.as_str();
        if keyword != Keyword::In && keyword != Keyword::For {
            let source = format!("ys = for {word} in xs {{ return 1 }}\nreturn ys\n");
            assert_eq!(codes_of(&source), [codes::RESERVED_WORD_AS_BINDING], "{source}");
            let source = format!("r = boundary {{ return 1 }} catch {word} {{ return 2 }}\nreturn r\n");
            assert_eq!(codes_of(&source), [codes::RESERVED_WORD_AS_BINDING], "{source}");
        }
    }
}

#[test]
fn reserved_words_are_fields_and_keys() {
    for keyword in Keyword::ALL {
        let word = keyword.as_str();
        for source in [
            format!("x = a.{word}\nreturn x\n"),
            format!("x = a.{word}.{word}({word}: 1)\nreturn x\n").replace(&format!("({word}: 1)"), "()"),
            format!("x = {{ {word}: 1 }}\nreturn x\n"),
            format!("x = {{ \"{word}\": 1, [\"{word}\"]: 2 }}\nreturn x\n"),
            format!("x = a[\"{word}\"]\nreturn x\n"),
        ] {
            assert_eq!(codes_of(&source), [], "{source}");
        }
    }
}

#[test]
fn reserved_words_are_not_shorthand_fields() {
    for keyword in Keyword::ALL {
        let source = format!("x = {{ {} }}\nreturn x\n", keyword.as_str());
        assert_eq!(codes_of(&source), [codes::UNEXPECTED_TOKEN], "{source}");
    }
}
