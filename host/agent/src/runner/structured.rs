//! Structured output: whether a final answer matches the run's JSON Schema,
//! and the host requests that repair or format one.

/// The label of the repair request for an answer off the output schema.
const REPAIR_LABEL: &str = "[host repair]";
/// The label of the formatting request after a tool-induced stop.
const FORMAT_LABEL: &str = "[host format]";

/// The repair request for a final answer off the schema.
pub(super) fn repair_instruction(error: &str) -> String {
    format!(
        "{REPAIR_LABEL} Your final answer does not match the required JSON Schema ({error}). \
         Reply with only the corrected JSON."
    )
}

/// The formatting request after a tool-induced stop.
pub(super) fn format_instruction(tool: &str) -> String {
    format!(
        "{FORMAT_LABEL} The run ended after the tool `{tool}`. Reply with only the final \
         answer as JSON matching the required schema."
    )
}

/// Why `text` is not JSON matching the schema, if it is not.
pub(super) fn schema_error(validator: &jsonschema::Validator, text: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => Some(format!("not JSON: {e}")),
        Ok(value) => validator
            .iter_errors(&value)
            .next()
            .map(|e| format!("{} at `{}`", e, e.instance_path)),
    }
}

/// The final answer as JSON, when it matches the schema.
pub(super) fn structured(
    validator: &jsonschema::Validator,
    text: &str,
) -> Option<serde_json::Value> {
    let value = serde_json::from_str(text).ok()?;
    validator.is_valid(&value).then_some(value)
}
