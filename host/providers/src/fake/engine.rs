//! Picks the turn that answers a request; shared by the HTTP fake and the
//! in-process scripted model.

use std::sync::Mutex;

use crate::fake::script::{Script, ScriptedTurn};
use crate::model::{Message, ModelRequest};

/// Why no turn could answer a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptMiss {
    /// No conversation accepts the request, or its turns are used up.
    Exhausted,
    /// The next turn's matcher rejected the request.
    Mismatch {
        /// Which turn (0-based) of which conversation.
        conversation: usize,
        /// Turn index.
        turn: usize,
        /// The matcher, as text.
        expected: String,
    },
}

impl std::fmt::Display for ScriptMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exhausted => f.write_str("fake provider: script exhausted"),
            Self::Mismatch {
                conversation,
                turn,
                expected,
            } => write!(
                f,
                "fake provider: request does not match turn {turn} of conversation {conversation}: expected {expected}"
            ),
        }
    }
}

struct State {
    script: Script,
    next: Vec<usize>,
}

/// The script plus how far each conversation has got.
pub(crate) struct ScriptEngine {
    state: Mutex<State>,
}

impl ScriptEngine {
    /// Start at the first turn of every conversation.
    pub fn new(script: Script) -> Self {
        let next = vec![0; script.conversations.len()];
        Self {
            state: Mutex::new(State { script, next }),
        }
    }

    /// The turn answering `request` and its global number, consuming it.
    /// A mismatch consumes the turn too, so a wrong loop fails fast.
    pub fn next_turn(&self, request: &ModelRequest) -> Result<(ScriptedTurn, usize), ScriptMiss> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let first_user = request.messages.iter().find_map(|m| match m {
            Message::User { text } => Some(text.as_str()),
            _ => None,
        });
        let State { script, next } = &mut *state;
        let found = script.conversations.iter().enumerate().find(|(i, c)| {
            let accepts = match &c.first_user_contains {
                Some(key) => first_user.is_some_and(|t| t.contains(key.as_str())),
                None => true,
            };
            accepts && next.get(*i).is_some_and(|n| *n < c.turns.len())
        });
        let Some((index, conversation)) = found else {
            return Err(ScriptMiss::Exhausted);
        };
        let turn_index = next[index];
        next[index] += 1;
        let turn = conversation.turns[turn_index].clone();
        if let Some(matcher) = &turn.when
            && !matcher.matches(request)
        {
            return Err(ScriptMiss::Mismatch {
                conversation: index,
                turn: turn_index,
                expected: format!("{matcher:?}"),
            });
        }
        let global: usize = next.iter().sum();
        Ok((turn, global))
    }

    /// Turns not served yet, over all conversations.
    pub fn remaining(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .script
            .conversations
            .iter()
            .zip(&state.next)
            .map(|(c, n)| c.turns.len().saturating_sub(*n))
            .sum()
    }
}
