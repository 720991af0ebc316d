//! What the server says about its commands: `COMMAND INFO`'s ACL
//! categories and `COMMAND DOCS`, flattened to words.

use redis::{Connection, Value};

use super::server::server_kind;

pub fn categories_supported(con: &mut Connection) -> bool {
    let (kind, version) = server_kind(con);
    kind == "valkey" || version >= [7, 2, 0]
}

/// A command's ACL categories as `COMMAND INFO` reports them (`@write`):
/// what the server enforces. (`ACL CAT write` would do too, but Valkey
/// 8.0 leaves module commands out of that listing while enforcing them.)
pub fn categories_of(con: &mut Connection, command: &str) -> Vec<String> {
    let info: Vec<Vec<Value>> = redis::cmd("COMMAND")
        .arg("INFO")
        .arg(command)
        .query(con)
        .unwrap();
    match info[0].get(6) {
        Some(Value::Array(categories)) => categories
            .iter()
            .map(|c| redis::from_redis_value::<String>(c).unwrap())
            .collect(),
        other => panic!("{command}: no ACL categories in COMMAND INFO: {other:?}"),
    }
}

/// `COMMAND DOCS name`, flattened.
pub fn docs_of(con: &mut redis::Connection, name: &str) -> Vec<String> {
    flatten(
        &redis::cmd("COMMAND")
            .arg("DOCS")
            .arg(name)
            .query(con)
            .unwrap(),
    )
}

pub fn flatten(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) | Value::Set(items) => items.iter().flat_map(flatten).collect(),
        Value::Map(pairs) => pairs
            .iter()
            .flat_map(|(k, v)| [flatten(k), flatten(v)].concat())
            .collect(),
        other => vec![text(other)],
    }
}

/// A reply as text: bulk and simple strings, integers.
pub fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        other => format!("{other:?}"),
    }
}
