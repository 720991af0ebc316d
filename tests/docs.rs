//! docs/commands.md against the server: every registered command has a
//! section whose `since`, `complexity` and ACL categories are what
//! `COMMAND DOCS` and `COMMAND INFO` report, whose heading is the synopsis
//! `COMMAND DOCS`' arguments make, and every command the page describes
//! is registered.

mod common;

use std::path::Path;

use common::metadata::{categories_of, categories_supported, docs_of, text};
use common::registry::COMMANDS;
use common::*;
use redis::Value;

struct Section {
    /// The heading after its `#`s: `NAME synopsis`.
    heading: String,
    /// A `- summary: ` line, where the section shows one.
    summary: Option<String>,
    since: String,
    complexity: String,
    categories: String,
}

fn page() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap()
}

/// The heading `## NAME ...` (or `###`) and the three lines after it.
fn section(page: &str, name: &str) -> Option<Section> {
    let mut lines = page.lines().peekable();
    let heading = lines.find(|line| {
        let heading = line.trim_start_matches('#');
        line.starts_with("##") && heading.split_whitespace().next() == Some(name)
    })?;
    while lines.peek() == Some(&"") {
        lines.next();
    }
    let summary = lines
        .next_if(|line| line.starts_with("- summary: "))
        .map(|line| line["- summary: ".len()..].to_string());
    let mut field = |prefix: &str| {
        lines
            .by_ref()
            .find(|line| !line.is_empty())
            .and_then(|line| line.strip_prefix(prefix))
            .map(str::to_string)
    };
    Some(Section {
        heading: heading.trim_start_matches('#').trim().to_string(),
        summary,
        since: field("- since: ")?,
        complexity: field("- complexity: ")?,
        categories: field("- ACL categories: ")?,
    })
}

/// A reply's map (RESP3) or flat key/value array (RESP2), by field name.
fn fields(value: &Value) -> Vec<(String, &Value)> {
    match value {
        Value::Map(pairs) => pairs.iter().map(|(k, v)| (text(k), v)).collect(),
        Value::Array(items) => items
            .chunks(2)
            .map(|pair| (text(&pair[0]), &pair[1]))
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

fn field<'a>(fields: &[(String, &'a Value)], name: &str) -> Option<&'a Value> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
}

fn list(value: Option<&Value>) -> Vec<&Value> {
    match value {
        Some(Value::Array(items) | Value::Set(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

/// One argument of `COMMAND DOCS` as the Redis docs and redis-cli write
/// it: a block's arguments side by side, a oneof's joined by `|` (in
/// `<>` unless optional), a token before its value, `multiple` as
/// `x [x ...]` (the token once, unless `multiple_token`), `optional` in
/// `[]`.
fn synopsis_of(arg: &Value) -> String {
    let fields = fields(arg);
    let get = |name: &str| field(&fields, name).map(text);
    let kind = get("type").unwrap_or_default();
    let flags: Vec<String> = list(field(&fields, "flags"))
        .into_iter()
        .map(text)
        .collect();
    let flag = |name: &str| flags.iter().any(|f| f == name);
    let children: Vec<String> = list(field(&fields, "arguments"))
        .into_iter()
        .map(synopsis_of)
        .collect();
    let value = match kind.as_str() {
        "block" => children.join(" "),
        "oneof" => children.join("|"),
        "pure-token" => get("token").unwrap_or_default(),
        _ => get("display_text")
            .or_else(|| get("name"))
            .unwrap_or_default(),
    };
    let token = get("token").filter(|_| kind != "pure-token");
    let mut rendered = match (&token, flag("multiple")) {
        (Some(token), true) if !flag("multiple_token") => format!("{token} {value} [{value} ...]"),
        (Some(token), multiple) => {
            let one = format!("{token} {value}");
            if multiple {
                format!("{one} [{one} ...]")
            } else {
                one
            }
        }
        (None, true) => format!("{value} [{value} ...]"),
        (None, false) => value,
    };
    if flag("optional") {
        rendered = format!("[{rendered}]");
    } else if kind == "oneof" {
        rendered = format!("<{rendered}>");
    }
    rendered
}

/// `NAME synopsis` from `COMMAND DOCS name`, and its summary.
fn heading_and_summary(con: &mut redis::Connection, name: &str) -> (String, String) {
    let reply: Value = redis::cmd("COMMAND")
        .arg("DOCS")
        .arg(name.to_lowercase())
        .query(con)
        .unwrap();
    let entries = fields(&reply);
    let docs = fields(entries[0].1);
    let arguments: Vec<String> = list(field(&docs, "arguments"))
        .into_iter()
        .map(synopsis_of)
        .collect();
    let summary = field(&docs, "summary").map(text).unwrap_or_default();
    (
        [name.to_string()]
            .into_iter()
            .chain(arguments)
            .collect::<Vec<_>>()
            .join(" "),
        summary,
    )
}

fn after<'a>(docs: &'a [String], field: &str) -> &'a str {
    let at = docs.iter().position(|w| w == field).unwrap();
    &docs[at + 1]
}

#[test]
fn docs_commands_md_says_what_command_docs_and_command_info_report() {
    let server = Server::start();
    let mut con = server.con();
    let page = page();
    let categories = categories_supported(&mut con);
    let mut wrong_headings = Vec::new();
    for spec in &COMMANDS {
        let documented = section(&page, spec.name).unwrap_or_else(|| {
            panic!(
                "docs/commands.md: no section with since/complexity/ACL for {}",
                spec.name
            )
        });
        let (heading, summary) = heading_and_summary(&mut con, spec.name);
        if documented.heading != heading {
            wrong_headings.push(format!(
                "  docs/commands.md: {}\n  COMMAND DOCS:     {heading}",
                documented.heading
            ));
        }
        if let Some(documented) = &documented.summary {
            assert_eq!(*documented, summary, "{} summary", spec.name);
        }
        let docs = docs_of(&mut con, &spec.name.to_lowercase());
        assert_eq!(
            documented.since,
            after(&docs, "since"),
            "{} since",
            spec.name
        );
        assert_eq!(
            documented.complexity,
            after(&docs, "complexity"),
            "{} complexity",
            spec.name
        );
        let listed = categories_of(&mut con, &spec.name.to_lowercase()).join(" ");
        if categories {
            assert_eq!(
                documented.categories, listed,
                "{} ACL categories",
                spec.name
            );
        } else {
            // Redis 7.0 lets no module set categories (docs/operations.md).
            assert_eq!(listed, "", "{}", spec.name);
        }
    }
    assert!(
        wrong_headings.is_empty(),
        "headings that are not the synopsis COMMAND DOCS makes:\n{}",
        wrong_headings.join("\n")
    );
    // And nothing described that the module does not register.
    for line in page.lines().filter(|line| line.starts_with("##")) {
        let word = line
            .trim_start_matches('#')
            .split_whitespace()
            .next()
            .unwrap_or("");
        let command_like =
            word.contains('.') && word.chars().all(|c| c.is_ascii_uppercase() || c == '.');
        if command_like {
            assert!(
                COMMANDS.iter().any(|spec| spec.name == word),
                "docs/commands.md describes {word}, which is not registered"
            );
        }
    }
}
