//! Bad configuration files: one clear `file:line: field: message` line on
//! stderr, exit 2, and nothing run (the fake provider sees no request).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use support::{Fake, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

/// Runs `verdict run` on `config` and checks the one-line error.
fn rejected(config: &str, line: usize, field: &str, message: &str) {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("should not be asked")]));
    let setup = Setup::new();
    std::fs::write(setup.path("corrupt.wasm"), b"\0asm\x0d\0\x01\0garbage").unwrap();
    let config = config.replace("BASE_URL", &fake.base_url());
    let path = setup.write("verdict.toml", &config);
    for json in [false, true] {
        let mut args = vec!["run", "--config", path.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        args.push("Verify A42.");
        let output = support::verdict(&args, &setup.path("cache"));
        let err = support::stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert_eq!(support::stdout(&output), "", "nothing on stdout");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        let expected = format!("error: {}:{line}: {field}: ", path.display());
        assert!(
            err.starts_with(&expected),
            "{err:?} should start with {expected:?}"
        );
        assert!(err.contains(message), "{err:?} should contain {message:?}");
    }
    assert_eq!(fake.requests(), 0, "nothing ran");
}

fn base() -> String {
    base_config("BASE_URL", 6)
}

#[test]
fn unknown_key() {
    let config = base() + &verified(2).replace("max_recovery_attempts", "max_recovery_attempt");
    rejected(
        &config,
        15,
        "loop_policy.max_recovery_attempt",
        "unknown field `max_recovery_attempt`",
    );
}

#[test]
fn threshold_1001() {
    let config = base() + "\n[loop_policy]\nmax_call_signatures = 1001\n";
    rejected(
        &config,
        15,
        "loop_policy.max_call_signatures",
        "1001 exceeds 1000",
    );
}

#[test]
fn allowlist_of_101_names() {
    let names: Vec<String> = (0..101).map(|i| format!("\"read_{i}\"")).collect();
    let config = base() + &format!("\n[loop_policy]\nread_allowlist = [{}]\n", names.join(","));
    rejected(
        &config,
        15,
        "loop_policy.read_allowlist",
        "101 names exceed 100",
    );
}

#[test]
fn missing_wasm() {
    let config = base() + &verified(2).replace("builtin:artifact-ready", "missing.wasm");
    rejected(
        &config,
        19,
        "tenants.acme.completion",
        "missing.wasm does not exist",
    );
}

#[test]
fn corrupt_wasm() {
    let config = base() + &verified(2).replace("builtin:artifact-ready", "corrupt.wasm");
    rejected(
        &config,
        19,
        "tenants.acme.completion",
        "corrupt.wasm is rejected",
    );
}

#[test]
fn wasm_without_the_role() {
    // revision-progress exports only `progress`.
    let config = base() + &verified(2).replace("artifact-ready", "revision-progress");
    rejected(
        &config,
        19,
        "tenants.acme.completion",
        "does not export `completion`",
    );
}

#[test]
fn missing_api_key() {
    let config = base().replace(
        "no_api_key = true",
        "api_key_env = \"VERDICT_TEST_KEY_THAT_IS_NOT_SET\"",
    );
    rejected(
        &config,
        1,
        "connectors.fake",
        "VERDICT_TEST_KEY_THAT_IS_NOT_SET",
    );
}

#[test]
fn an_empty_connector_name() {
    let config = base()
        + "\n[connectors.\"\"]\nprotocol = \"openai-chat\"\nbase_url = \"BASE_URL\"\nno_api_key = true\n";
    rejected(
        &config,
        14,
        "connectors.\"\"",
        "a connector name must not be empty",
    );
}

#[test]
fn an_empty_tenant_name() {
    let config = base() + &verified(2).replace("[tenants.acme]", "[tenants.\"\"]");
    rejected(
        &config,
        17,
        "tenants.\"\"",
        "a tenant name must not be empty",
    );
}
