//! One version for the module, both client packages and the changelog:
//! Cargo.toml's, as `MODULE LIST` reports it (`major.minor.patch` as one
//! number), the Python and npm packages' and CHANGELOG.md's top entry.

mod common;

use std::path::Path;

use common::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The first quoted value after `prefix` on a line that starts with it.
fn quoted_after(text: &str, prefix: &str) -> String {
    let line = text
        .lines()
        .find(|line| line.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix}"));
    line.split('"').nth(1).unwrap().to_string()
}

#[test]
fn every_part_reports_the_same_version() {
    let version = env!("CARGO_PKG_VERSION");
    let number: i64 = version
        .split('.')
        .map(|part| part.parse::<i64>().unwrap())
        .fold(0, |acc, part| acc * 100 + part);

    let server = Server::start();
    let modules: Vec<Vec<redis::Value>> = redis::cmd("MODULE")
        .arg("LIST")
        .query(&mut server.con())
        .unwrap();
    let guard = modules
        .iter()
        .find_map(|fields| {
            let words: Vec<String> = fields
                .iter()
                .map(|v| redis::from_redis_value::<String>(v).unwrap_or_default())
                .collect();
            let at = |name: &str| words.iter().position(|w| w == name).map(|i| &fields[i + 1]);
            (redis::from_redis_value::<String>(at("name")?).ok()? == "guard")
                .then(|| redis::from_redis_value::<i64>(at("ver").unwrap()).unwrap())
        })
        .expect("MODULE LIST shows guard");
    assert_eq!(guard, number, "MODULE LIST ver for {version}");

    assert_eq!(
        quoted_after(&read("clients/python/pyproject.toml"), "version ="),
        version
    );
    assert_eq!(
        quoted_after(
            &read("clients/python/redis_guard/__init__.py"),
            "__version__ ="
        ),
        version
    );
    let node: Vec<String> = read("clients/node/package.json")
        .lines()
        .find(|l| l.trim_start().starts_with("\"version\""))
        .unwrap()
        .split('"')
        .map(str::to_string)
        .collect();
    assert_eq!(node[3], version, "clients/node/package.json");

    let changelog = read("CHANGELOG.md");
    let top = changelog
        .lines()
        .find_map(|line| {
            line.strip_prefix("## ")
                .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        })
        .expect("CHANGELOG.md has a version entry");
    assert_eq!(top, version, "CHANGELOG.md's newest entry");
}
