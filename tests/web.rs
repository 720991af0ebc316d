//! Rate limiting web applications (SPEC "Web applications"): the Python
//! package's ASGI middleware and FastAPI dependency, and the Node
//! package's Express middleware, Fastify plugin, express-rate-limit store
//! and rate-limiter-flexible limiter, each against real servers made
//! here: one with the module, one without it (the package's scripts, as
//! on a managed service), and one stopped (Redis down). Their suites
//! (clients/python/web_tests, clients/node/test/web.test.mjs) check the
//! headers against the GCRA, all-or-nothing limits, keys and TTLs, a slow
//! server they make themselves, and local blocks by the servers' command
//! counts. The frameworks are installed for the tests only, into the build
//! output. docs/guide.md shows both recipes verbatim; they run here. So do
//! docs/web.md's FastAPI and Express apps, taken from its code blocks.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tools::{installed, repository, run};
use common::*;

/// A server with the module, one without it, and the address of one that
/// was started and stopped.
fn servers() -> (Server, Server, String) {
    let mut down = Server::start();
    let down_address = format!("127.0.0.1:{}", down.port);
    down.kill();
    (Server::start(), Server::managed(&[]), down_address)
}

/// docs/guide.md shows `file` verbatim in a `lang` block.
fn assert_shown_in_guide(lang: &str, file: &Path) {
    let guide = std::fs::read_to_string(repository("docs/guide.md")).unwrap();
    let code = std::fs::read_to_string(file).unwrap();
    assert!(
        guide.contains(&format!("```{lang}\n{code}```\n")),
        "docs/guide.md shows {} verbatim",
        file.display()
    );
}

#[test]
fn python_asgi_middleware_and_fastapi_dependency() {
    let package = repository("clients/python");
    let libraries = installed(&package.join("tests/install.sh"), &["newest"]);
    let (server, managed, down) = servers();
    let path: Vec<String> = [package.clone(), package.join("web_tests"), libraries]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let printed = run(
        Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .args(["-W", "ignore::DeprecationWarning", "web_tests"])
            .current_dir(&package)
            .env("PYTHONPATH", path.join(":"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("GUARD_STANDALONE", format!("127.0.0.1:{}", server.port))
            .env("GUARD_PLAIN", format!("127.0.0.1:{}", managed.port))
            .env("GUARD_DOWN", &down)
            .env("REDIS_URL", server.url()),
        "pytest web_tests",
    );
    let summary = printed.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("failed") && !summary.contains("skipped"),
        "{printed}"
    );
    println!("python web: {summary}");
    assert_shown_in_guide("python", &package.join("web_tests/recipe_fastapi.py"));
}

#[test]
fn node_express_fastify_and_the_rate_limit_libraries() {
    let package = repository("clients/node");
    let web = installed(&package.join("test/install.sh"), &["web"]);
    let tools = installed(&package.join("test/install.sh"), &["tools"]);
    // The guide's recipe, compiled under tsc --strict beside the
    // frameworks (so their types and modules resolve).
    // A folder of this process's own: the matrix runs two servers' tests
    // at once on the same install.
    let recipe: PathBuf = web.join(format!("recipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&recipe);
    std::fs::create_dir_all(&recipe).unwrap();
    let source = package.join("test/recipe_express.ts");
    std::fs::copy(&source, recipe.join("recipe_express.ts")).unwrap();
    run(
        Command::new(tools.join("node_modules/.bin/tsc"))
            .current_dir(&recipe)
            .args(["--strict", "--skipLibCheck", "--target", "es2022"])
            .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
            .arg("recipe_express.ts"),
        "tsc --strict recipe_express.ts",
    );
    let (server, managed, down) = servers();
    let printed = run(
        Command::new("node")
            .arg("--test")
            .arg(package.join("test/web.test.mjs"))
            .current_dir(&web)
            .env("GUARD_STANDALONE", format!("127.0.0.1:{}", server.port))
            .env(
                "GUARD_STANDALONE_NO_MODULE",
                format!("127.0.0.1:{}", managed.port),
            )
            .env("GUARD_DOWN", &down)
            .env("GUARD_RECIPE_DIR", &recipe)
            .env("REDIS_URL", server.url()),
        "node --test web.test.mjs",
    );
    assert!(printed.contains("# fail 0"), "{printed}");
    assert!(!printed.contains("# pass 0"), "{printed}");
    std::fs::remove_dir_all(&recipe).unwrap();
    assert_shown_in_guide("ts", &source);
}

/// The fenced blocks of `page` in order, as (language, text).
fn fenced_blocks(page: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in page.lines() {
        let fence = line.trim_start();
        match open.take() {
            Some((lang, text)) if fence == "```" => blocks.push((lang, text)),
            Some((lang, mut text)) => {
                // Blocks inside list items are indented: two spaces.
                text.push_str(line.strip_prefix("  ").unwrap_or(line));
                text.push('\n');
                open = Some((lang, text));
            }
            None => {
                if let Some(lang) = fence.strip_prefix("```") {
                    open = Some((lang.to_string(), String::new()));
                }
            }
        }
    }
    assert!(open.is_none(), "a block is never closed");
    blocks
}

/// The program docs/web.md shows in `lang` blocks (all of them, one after
/// the other) and the `text` block after its last one: what it prints.
fn program_and_output(lang: &str) -> (String, String) {
    let page = std::fs::read_to_string(repository("docs/web.md")).unwrap();
    let blocks = fenced_blocks(&page);
    let last = blocks.iter().rposition(|(l, _)| l == lang).unwrap();
    let program: String = blocks
        .iter()
        .filter(|(l, _)| l == lang)
        .map(|(_, text)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let output = blocks[last..]
        .iter()
        .find(|(l, _)| l == "text")
        .unwrap_or_else(|| panic!("docs/web.md: no text block after the last {lang} block"))
        .1
        .clone();
    (program, output)
}

/// docs/web.md's FastAPI app, as shown, against a fresh server with the
/// module and a stopped one: it prints what the page says.
#[test]
fn docs_web_md_fastapi_app_prints_what_the_page_shows() {
    let package = repository("clients/python");
    let libraries = installed(&package.join("tests/install.sh"), &["newest"]);
    let (program, expected) = program_and_output("python");
    let dir = std::env::temp_dir().join(format!("redis-guard-docs-web-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("web_app.py"), &program).unwrap();
    let (server, _managed, down) = servers();
    let printed = run(
        Command::new("python3")
            .args(["-P", "web_app.py"])
            .current_dir(&dir)
            .env(
                "PYTHONPATH",
                format!("{}:{}", package.display(), libraries.display()),
            )
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("REDIS_URL", server.url())
            .env("REDIS_DOWN_URL", format!("redis://{down}")),
        "docs/web.md's python blocks",
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(printed, expected, "docs/web.md's FastAPI app");
}

/// docs/web.md's Express app, as shown: compiled under tsc --strict as
/// the ES module it is, beside the frameworks, then run as the FastAPI one.
#[test]
fn docs_web_md_express_app_prints_what_the_page_shows() {
    let package = repository("clients/node");
    let web = installed(&package.join("test/install.sh"), &["web"]);
    let tools = installed(&package.join("test/install.sh"), &["tools"]);
    let (program, expected) = program_and_output("ts");
    let dir = web.join(format!("docs-web-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("web_app.mts"), &program).unwrap();
    run(
        Command::new(tools.join("node_modules/.bin/tsc"))
            .current_dir(&dir)
            .args(["--strict", "--skipLibCheck", "--target", "es2022"])
            .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
            .arg("web_app.mts"),
        "tsc --strict docs/web.md's ts blocks",
    );
    let (server, _managed, down) = servers();
    let printed = run(
        Command::new("node")
            .arg("web_app.mjs")
            .current_dir(&dir)
            .env("REDIS_URL", server.url())
            .env("REDIS_DOWN_URL", format!("redis://{down}")),
        "docs/web.md's ts blocks",
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(printed, expected, "docs/web.md's Express app");
}
