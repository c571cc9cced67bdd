//! `[mcp.NAME]` servers through the CLI: `verdict mcp list` against the
//! real reference server from npm (installed by `scripts/mcp-dev.sh`),
//! effects from annotations, overrides and a tenant that refuses hints;
//! bad sections refused before anything starts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{Setup, base_config};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// server-everything's entry point; `None` (the test says SKIPPED) when it
/// cannot be installed, unless `VERDICT_REQUIRE_MCP=1`.
fn everything() -> Option<PathBuf> {
    let script = root().join("scripts/mcp-dev.sh");
    let installed = Command::new("bash")
        .arg(&script)
        .arg("install")
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var("VERDICT_REQUIRE_MCP").as_deref() != Ok("1"),
            "scripts/mcp-dev.sh install failed and VERDICT_REQUIRE_MCP=1"
        );
        eprintln!("SKIPPED: the MCP servers could not be installed (npm?)");
        return None;
    }
    let out = Command::new("bash")
        .arg(&script)
        .args(["bin", "server-everything"])
        .output()
        .unwrap();
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn list(setup: &Setup, config: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let path = setup.write("verdict.toml", config);
    let mut args = vec!["mcp", "list", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = support::verdict(&args, &setup.path("cache"));
    (
        output.status.code(),
        support::stdout(&output),
        support::stderr(&output),
    )
}

fn row<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{out}"))
        .split_whitespace()
        .collect()
}

#[test]
fn mcp_list_prints_each_tool_with_its_effect_and_source() {
    let Some(server) = everything() else { return };
    let setup = Setup::new();
    let config = format!(
        r#"{}
[mcp.everything]
command = "node"
args = ["{}", "stdio"]

[mcp.everything.tools.echo]
effect = "write"
"#,
        base_config("http://127.0.0.1:9", 4),
        server.display()
    );
    let (code, out, err) = list(&setup, &config, &[]);
    assert_eq!(code, Some(0), "{err}");
    // The override wins over echo's readOnlyHint.
    assert_eq!(
        row(&out, "everything__echo")[1..4],
        ["write", "mcp", "everything"]
    );
    assert!(row(&out, "everything__echo").ends_with(&["override"]));
    // Annotations decide the others.
    let gzip = row(&out, "everything__gzip-file-as-resource");
    assert_eq!(gzip[1], "idempotent_write", "{out}");
    assert!(gzip.ends_with(&["annotation"]), "{out}");
    let toggle = row(&out, "everything__toggle-simulated-logging");
    assert_eq!(toggle[1], "write", "{out}");

    // JSON: the same, one array.
    let (code, out, err) = list(&setup, &config, &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let echo = rows.iter().find(|r| r["tool"] == "echo").unwrap();
    assert_eq!(echo["effect"], "write");
    assert_eq!(echo["source"], "override");

    // A tenant that refuses hints: every tool unknown but the override.
    let tenant = format!(
        "{config}\n[tenants.acme]\nartifact_root = \"workspace\"\ntrust_mcp_annotations = false\n"
    );
    let (code, out, err) = list(&setup, &tenant, &["--tenant", "acme"]);
    assert_eq!(code, Some(0), "{err}");
    let gzip = row(&out, "everything__gzip-file-as-resource");
    assert_eq!(gzip[1], "unknown", "{out}");
    assert!(gzip.ends_with(&["default"]), "{out}");
    assert_eq!(row(&out, "everything__echo")[1], "write", "{out}");
}

#[test]
fn bad_mcp_sections_are_refused_naming_the_field() {
    let setup = Setup::new();
    let base = base_config("http://127.0.0.1:9", 4);
    let cases = [
        (
            "[mcp.web]\nurl = \"ftp://127.0.0.1:1/mcp\"\n",
            "mcp.web.url",
            "http:// or https://",
        ),
        (
            "[mcp.web]\nurl = \"http://127.0.0.1:1/mcp\"\ncommand = \"x\"\n",
            "mcp.web.command",
            "reached over HTTP",
        ),
        (
            "[mcp.t]\ncommand = \"x\"\ntoken_env = \"T\"\n",
            "mcp.t.token_env",
            "only a server with `url`",
        ),
        ("[mcp.nocmd]\nargs = []\n", "mcp.nocmd", "needs `command`"),
        (
            "[mcp.\"a.b\"]\ncommand = \"x\"\n",
            "mcp.a.b",
            "letters, digits",
        ),
        (
            "[mcp.t]\ncommand = \"x\"\ntimeout_ms = 0\n",
            "mcp.t.timeout_ms",
            "outside 1..=",
        ),
        (
            "[mcp.t]\ncommand = \"x\"\n[mcp.t.tools.a]\neffect = \"sometimes\"\n",
            "effect",
            "unknown variant",
        ),
    ];
    for (section, field, message) in cases {
        let (code, out, err) = list(&setup, &format!("{base}\n{section}"), &[]);
        assert_eq!(code, Some(2), "{section}: {err}");
        assert_eq!(out, "");
        assert!(
            err.contains(field),
            "{section}: {err:?} should name {field}"
        );
        assert!(
            err.contains(message),
            "{section}: {err:?} should say {message}"
        );
    }
    // An HTTP server whose token variable is not set: named, at its section.
    let (code, _, err) = list(
        &setup,
        &format!(
            "{base}\n[mcp.web]\nurl = \"http://127.0.0.1:9/mcp\"\ntoken_env = \"VERDICT_NO_SUCH_MCP_TOKEN\"\n"
        ),
        &[],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("mcp.web") && err.contains("VERDICT_NO_SUCH_MCP_TOKEN"),
        "{err}"
    );
    // A server that does not start: the error names its section.
    let (code, _, err) = list(
        &setup,
        &format!("{base}\n[mcp.gone]\ncommand = \"/nonexistent/mcp-server\"\n"),
        &[],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("mcp.gone") && err.contains("cannot start"),
        "{err}"
    );
}

#[test]
fn mcp_list_against_an_http_server() {
    let Some(server) = everything() else { return };
    let preload = root().join("host/mcp/tests/fixtures/loopback.cjs");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(&server)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let up = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let setup = Setup::new();
    let config = format!(
        "{}\n[mcp.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ x-tenant = \"acme\" }}\n",
        base_config("http://127.0.0.1:9", 4),
    );
    let (code, out, err) = if up {
        list(&setup, &config, &[])
    } else {
        (
            None,
            String::new(),
            "server-everything did not listen".into(),
        )
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, Some(0), "{err}");
    let echo = row(&out, "web__echo");
    assert_eq!(echo[1..4], ["read", "mcp", "web"], "{out}");
    assert!(echo.ends_with(&["annotation"]), "{out}");
    assert_eq!(
        row(&out, "web__gzip-file-as-resource")[1],
        "idempotent_write"
    );
}
