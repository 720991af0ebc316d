//! What tests run besides servers: scripts that install something into
//! the build output and print its folder (client libraries, peers), and
//! commands whose failure fails the test with their output.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `script args...`, which installs into the build output (once) and
/// prints the folder; that folder.
pub fn installed(script: &Path, args: &[&str]) -> PathBuf {
    let output = Command::new(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "{} {args:?} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// The file at `path` inside the repository.
pub fn repository(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Runs `command`; its standard output, or a panic with everything it printed.
pub fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}
