//! The notices a server sends that change what the toolset offers:
//! `notifications/tools/list_changed`, seen by a watch on the transport
//! itself, so the mark is set before any answer the server sent after it
//! reaches its caller (rmcp runs its own notification handlers on tasks
//! of their own, which could come later).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Set when the server said its tool list changed; taken by a refresh.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolsChanged(Arc<AtomicBool>);

impl ToolsChanged {
    /// Marks the list changed.
    pub(crate) fn mark(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether it changed since the last take, clearing the mark.
    pub(crate) fn take(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }
}

/// A transport whose incoming `tools/list_changed` notices mark
/// [`ToolsChanged`] (and are passed on as they are).
pub(crate) struct Watched<T> {
    inner: T,
    changed: ToolsChanged,
}

impl<T> Watched<T> {
    pub(crate) fn new(inner: T, changed: ToolsChanged) -> Self {
        Self { inner, changed }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let changed = self.changed.clone();
        let next = self.inner.receive();
        async move {
            let message = next.await;
            if let Some(JsonRpcMessage::Notification(notice)) = &message
                && matches!(
                    notice.notification,
                    ServerNotification::ToolListChangedNotification(_)
                )
            {
                changed.mark();
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
