//! Parsing one console line.

use std::path::PathBuf;

/// What a console line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A task for the agent.
    Task(String),
    /// `/context loop`.
    ContextLoop,
    /// `/policy show`.
    PolicyShow,
    /// `/policy set FILE`.
    PolicySet(PathBuf),
    /// `/policy off`.
    PolicyOff,
    /// `/save FILE`.
    Save(PathBuf),
    /// `/load FILE`.
    Load(PathBuf),
    /// `/verifier reload`.
    VerifierReload,
    /// `/tools`.
    Tools,
    /// `/help`.
    Help,
    /// `/quit`.
    Quit,
    /// An empty line.
    Nothing,
}

/// The console's help text.
pub const HELP: &str = "\
commands:
  TEXT               run a task (one execution at a time)
  /context loop      phase, stopping reason, recovery, diagnostic JSON
  /policy show       the policy the next execution uses
  /policy set FILE   override the loop policy from a JSON or TOML file (idle only; in memory)
  /policy off        run without a loop policy (idle only)
  /save FILE         save the conversation
  /load FILE         load a saved conversation (idle only)
  /verifier reload   reload the tenant's .wasm for the next execution (idle only)
  /tools             the agent's tools, each with its effect and where it came from
  /quit              leave";

/// Parses `line`; an unknown or malformed command is an error message.
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Command::Nothing);
    }
    if !line.starts_with('/') {
        return Ok(Command::Task(line.to_owned()));
    }
    let mut words = line.split_whitespace();
    let head = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.collect();
    let file = |rest: &[&str], usage: &str| match rest {
        [path] => Ok(PathBuf::from(path)),
        _ => Err(format!("usage: {usage}")),
    };
    match (head, rest.as_slice()) {
        ("/context", ["loop"]) => Ok(Command::ContextLoop),
        ("/context", _) => Err("usage: /context loop".into()),
        ("/policy", ["show"]) => Ok(Command::PolicyShow),
        ("/policy", ["off"]) => Ok(Command::PolicyOff),
        ("/policy", ["set", path @ ..]) => file(path, "/policy set FILE").map(Command::PolicySet),
        ("/policy", _) => Err("usage: /policy show | /policy set FILE | /policy off".into()),
        ("/save", path) => file(path, "/save FILE").map(Command::Save),
        ("/load", path) => file(path, "/load FILE").map(Command::Load),
        ("/verifier", ["reload"]) => Ok(Command::VerifierReload),
        ("/verifier", _) => Err("usage: /verifier reload".into()),
        ("/tools", []) => Ok(Command::Tools),
        ("/tools", _) => Err("usage: /tools".into()),
        ("/help", []) => Ok(Command::Help),
        ("/quit" | "/exit", []) => Ok(Command::Quit),
        _ => Err(format!("unknown command {head} (try /help)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(parse("  "), Ok(Command::Nothing));
        assert_eq!(
            parse("Verify A42."),
            Ok(Command::Task("Verify A42.".into()))
        );
        assert_eq!(parse("/context loop"), Ok(Command::ContextLoop));
        assert_eq!(parse("/policy show"), Ok(Command::PolicyShow));
        assert_eq!(parse("/policy off"), Ok(Command::PolicyOff));
        assert_eq!(
            parse("/policy set p.json"),
            Ok(Command::PolicySet("p.json".into()))
        );
        assert_eq!(parse("/save c.json"), Ok(Command::Save("c.json".into())));
        assert_eq!(parse("/load c.json"), Ok(Command::Load("c.json".into())));
        assert_eq!(parse("/verifier reload"), Ok(Command::VerifierReload));
        assert_eq!(parse("/tools"), Ok(Command::Tools));
        assert_eq!(parse("/quit"), Ok(Command::Quit));
        assert_eq!(parse("/help"), Ok(Command::Help));
    }

    #[test]
    fn malformed_commands_say_their_usage() {
        assert_eq!(parse("/policy set"), Err("usage: /policy set FILE".into()));
        assert_eq!(parse("/save a b"), Err("usage: /save FILE".into()));
        assert_eq!(parse("/context"), Err("usage: /context loop".into()));
        assert!(
            parse("/frobnicate")
                .unwrap_err()
                .contains("unknown command")
        );
    }
}
