#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use super::*;

const BASE: &str = r#"[connectors.local]
protocol = "openai-chat"
base_url = "http://127.0.0.1:9/v1"
no_api_key = true

[agent]
connector = "local"
model = "m"
max_iterations = 4
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load_text(text: &str) -> Result<ConfigFile, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("art")).unwrap();
    load(&write(dir.path(), "verdict.toml", text))
}

#[test]
fn a_full_file_loads() {
    let text = format!(
        "{BASE}\n[tools]\nworkspace = \"art\"\nbuiltin = [\"read_artifact\"]\n\n[loop_policy]\nmax_recovery_attempts = 3\nread_allowlist = [\"status\"]\n\n[tenants.acme]\nartifact_root = \"art\"\ncompletion = \"builtin:artifact-ready\"\n[tenants.acme.limits]\nfuel = 1000000\n"
    );
    let file = load_text(&text).unwrap();
    let policy = file.config.loop_policy.as_ref().unwrap();
    assert_eq!(policy.max_recovery_attempts, 3);
    assert_eq!(policy.read_allowlist, vec!["status".to_owned()]);
    assert_eq!(
        policy.max_admissions, 1000,
        "unset thresholds keep defaults"
    );
    let tenant = &file.config.tenants["acme"];
    assert_eq!(tenant.limits.fuel, Some(1_000_000));
    assert_eq!(
        file.config.tools.as_ref().unwrap().builtin,
        vec![ToolName::ReadArtifact]
    );
}

#[test]
fn unknown_key_names_file_line_and_field() {
    let text = format!("{BASE}\n[loop_policy]\nmax_recovery_attempts = 1\nthreshold = 3\n");
    let err = load_text(&text).unwrap_err();
    assert_eq!(err.line, Some(13), "{err}");
    assert_eq!(err.field, "loop_policy.threshold", "{err}");
    assert!(err.message.contains("unknown field `threshold`"), "{err}");
    let line = err.to_string();
    assert!(
        line.contains("verdict.toml:13: loop_policy.threshold"),
        "{line}"
    );
    assert!(!line.contains('\n'), "one line: {line}");
}

#[test]
fn threshold_above_1000_is_rejected_with_its_line() {
    let text = format!("{BASE}\n[loop_policy]\n\nmax_admissions = 1001\n");
    let err = load_text(&text).unwrap_err();
    assert_eq!(err.line, Some(13), "{err}");
    assert_eq!(err.field, "loop_policy.max_admissions");
    assert!(err.message.contains("1001 exceeds 1000"), "{err}");
}

#[test]
fn allowlist_of_101_names_is_rejected() {
    let names: Vec<String> = (0..101).map(|i| format!("\"t{i}\"")).collect();
    let text = format!(
        "{BASE}\n[loop_policy]\nread_allowlist = [{}]\n",
        names.join(", ")
    );
    let err = load_text(&text).unwrap_err();
    assert_eq!(err.field, "loop_policy.read_allowlist");
    assert_eq!(err.line, Some(12));
    assert!(err.message.contains("101 names exceed 100"), "{err}");
    // 100 names are fine.
    let text = format!(
        "{BASE}\n[loop_policy]\nread_allowlist = [{}]\n",
        names[..100].join(", ")
    );
    load_text(&text).unwrap();
}

#[test]
fn missing_wasm_and_unknown_builtin_are_rejected() {
    let text = format!(
        "{BASE}\n[loop_policy]\n\n[tenants.acme]\nartifact_root = \"art\"\ncompletion = \"nope.wasm\"\n"
    );
    let err = load_text(&text).unwrap_err();
    assert_eq!(err.field, "tenants.acme.completion");
    assert_eq!(err.line, Some(15));
    assert!(err.message.contains("nope.wasm does not exist"), "{err}");
    let text = text.replace("nope.wasm", "builtin:nope");
    let err = load_text(&text).unwrap_err();
    assert!(err.message.contains("no built-in verifier `nope`"), "{err}");
}

#[test]
fn verifiers_without_a_policy_are_rejected() {
    let text = format!(
        "{BASE}\n[tenants.acme]\nartifact_root = \"art\"\ncompletion = \"builtin:artifact-ready\"\n"
    );
    let err = load_text(&text).unwrap_err();
    assert_eq!(err.field, "tenants.acme.completion");
    assert!(err.message.contains("[loop_policy]"), "{err}");
}

#[test]
fn bad_values_name_their_field() {
    let err = load_text(&BASE.replace("max_iterations = 4", "max_iterations = 0")).unwrap_err();
    assert_eq!(err.field, "agent.max_iterations");
    assert_eq!(err.line, Some(9));
    let err =
        load_text(&BASE.replace("connector = \"local\"", "connector = \"other\"")).unwrap_err();
    assert_eq!(err.field, "agent.connector");
    assert_eq!(err.line, Some(7));
    let err = load_text(&BASE.replace("openai-chat", "carrier-pigeon")).unwrap_err();
    assert_eq!(err.field, "connectors.local.protocol");
    assert_eq!(err.line, Some(2));
    let err = load_text(&format!(
        "{BASE}\n[loop_policy]\nrepeated_read_limit = -1\n"
    ))
    .unwrap_err();
    assert_eq!(err.field, "loop_policy.repeated_read_limit");
    assert_eq!(err.line, Some(12));
    let err = load_text(&format!("{BASE}\n[tools]\nworkspace = \"missing\"\n")).unwrap_err();
    assert_eq!(err.field, "tools.workspace");
}

#[test]
fn json_is_accepted_and_its_errors_have_lines() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{
  "connectors": {"local": {"vendor": "openai", "no_api_key": true}},
  "agent": {"connector": "local", "model": "m"},
  "loop_policy": {"max_recovery_attempts": 1}
}"#;
    let file = load(&write(dir.path(), "c.json", good)).unwrap();
    assert_eq!(file.config.loop_policy.unwrap().max_recovery_attempts, 1);
    let bad = good.replace(
        "\"max_recovery_attempts\": 1",
        "\"max_recovery_attempts\": 1, \"typo\": 2",
    );
    let err = load(&write(dir.path(), "c.json", &bad)).unwrap_err();
    assert_eq!(err.line, Some(4), "{err}");
    assert_eq!(err.field, "loop_policy.typo", "{err}");
    let bad = good.replace("\"max_recovery_attempts\": 1", "\"max_observations\": 1001");
    let err = load(&write(dir.path(), "c.json", &bad)).unwrap_err();
    assert_eq!(err.line, Some(4), "{err}");
    assert_eq!(err.field, "loop_policy.max_observations");
}

#[test]
fn every_example_config_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/config");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!file.config.agent.model.is_empty());
        loaded += 1;
    }
    assert_eq!(loaded, 5);
}
