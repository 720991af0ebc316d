//! docs/commands.md against the server: every registered command has a
//! section whose `since`, `complexity` and ACL categories are what
//! `COMMAND DOCS` and `COMMAND INFO` report, and every command the page
//! describes is registered.

mod common;

use std::path::Path;

use common::metadata::{categories_of, categories_supported, docs_of};
use common::registry::COMMANDS;
use common::*;

struct Section {
    since: String,
    complexity: String,
    categories: String,
}

fn page() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap()
}

/// The heading `## NAME ...` (or `###`) and the three lines after it.
fn section(page: &str, name: &str) -> Option<Section> {
    let mut lines = page.lines();
    lines.find(|line| {
        let heading = line.trim_start_matches('#');
        line.starts_with("##") && heading.split_whitespace().next() == Some(name)
    })?;
    let mut field = |prefix: &str| {
        lines
            .by_ref()
            .find(|line| !line.is_empty())
            .and_then(|line| line.strip_prefix(prefix))
            .map(str::to_string)
    };
    Some(Section {
        since: field("- since: ")?,
        complexity: field("- complexity: ")?,
        categories: field("- ACL categories: ")?,
    })
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
    for spec in &COMMANDS {
        let documented = section(&page, spec.name).unwrap_or_else(|| {
            panic!(
                "docs/commands.md: no section with since/complexity/ACL for {}",
                spec.name
            )
        });
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
