//! bench/RESULTS.md, which two programs write: `make bench` the whole page
//! but one section, and `make bench-clients` only that section, so each
//! run keeps what the other measured.

use std::path::PathBuf;

const BEGIN: &str = "<!-- bench-clients: written by `make bench-clients` -->";
const END: &str = "<!-- /bench-clients -->";

fn path() -> PathBuf {
    super::tools::repository("bench/RESULTS.md")
}

/// The clients' section of the page now, markers included ("" if none).
fn clients_section(page: &str) -> &str {
    match (page.find(BEGIN), page.find(END)) {
        (Some(start), Some(end)) if start < end => &page[start..end + END.len()],
        _ => "",
    }
}

/// Writes `page` as the whole of RESULTS.md, with the clients' section
/// it had, at the end.
pub fn write_page(page: &str) {
    let before = std::fs::read_to_string(path()).unwrap_or_default();
    let kept = clients_section(&before);
    let page = if kept.is_empty() {
        page.to_string()
    } else {
        format!("{}\n\n{kept}\n", page.trim_end())
    };
    std::fs::write(path(), page).unwrap();
}

/// Puts `section` between the markers in RESULTS.md, the rest unchanged.
pub fn write_clients_section(section: &str) {
    let page = std::fs::read_to_string(path()).unwrap_or_default();
    let new = format!("{BEGIN}\n{}\n{END}", section.trim_end());
    let old = clients_section(&page);
    let page = if old.is_empty() {
        format!("{}\n\n{new}\n", page.trim_end())
    } else {
        page.replacen(old, &new, 1)
    };
    std::fs::write(path(), page).unwrap();
}
