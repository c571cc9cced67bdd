//! The one list of wire protocols: [`Protocol`] and the dispatch to each
//! protocol's two sides, [`ClientProtocol`] and (feature `fake`) the fake
//! server's `FakeProtocol`. Adding a protocol is one folder beside the others
//! (and its `mod` line) and one entry here.

use serde::{Deserialize, Serialize};

use crate::protocols::client::ClientProtocol;
#[cfg(feature = "fake")]
use crate::protocols::fake::FakeProtocol;
use crate::protocols::{anthropic, gemini, openai_chat, openai_responses};

/// Declares [`Protocol`] and its dispatch from one list of entries, each a
/// variant (with its doc) and the protocol's value, which implements both
/// sides.
macro_rules! protocols {
    ($($(#[doc = $doc:literal])* $variant:ident => $wire:expr,)+) => {
        /// A provider wire protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        #[non_exhaustive]
        pub enum Protocol {
            $($(#[doc = $doc])* $variant,)+
        }

        impl Protocol {
            /// All protocols.
            pub const ALL: [Protocol; [$(stringify!($variant)),+].len()] =
                [$(Protocol::$variant),+];

            /// The connector's side: endpoint, encoder and decoders.
            pub(crate) fn client(self) -> &'static dyn ClientProtocol {
                match self {
                    $(Self::$variant => &$wire,)+
                }
            }

            /// The fake provider's side: routes, request reader and renderers.
            #[cfg(feature = "fake")]
            pub(crate) fn fake(self) -> &'static dyn FakeProtocol {
                match self {
                    $(Self::$variant => &$wire,)+
                }
            }
        }
    };
}

protocols! {
    /// OpenAI Chat Completions (and OpenAI-compatible servers).
    OpenAiChat => openai_chat::OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses => openai_responses::OpenAiResponses,
    /// Anthropic Messages.
    Anthropic => anthropic::Anthropic,
    /// Google Gemini `generateContent`.
    Gemini => gemini::Gemini,
}

impl Protocol {
    /// The vendor's public API base URL.
    pub fn default_base_url(self) -> &'static str {
        self.client().endpoint().base_url
    }

    /// The environment variable holding the vendor's key by default.
    pub fn default_env_var(self) -> &'static str {
        self.client().endpoint().env_var
    }

    /// The endpoint URL for `model` under `base` (no trailing slash).
    pub fn url(self, base: &str, model: &str, stream: bool) -> String {
        self.client().url(base.trim_end_matches('/'), model, stream)
    }
}
