//! Reloading: the settings read again, the catalog rebuilt off the async
//! workers and swapped in (`SIGHUP`, `POST /v1/admin/reload`).

use crate::catalog::Catalog;
use crate::state::AppState;
use std::sync::Arc;

/// Re-reads the settings and swaps the catalog; requests in flight keep
/// the catalog they started with.
pub(crate) async fn reload(state: &Arc<AppState>) -> Result<usize, String> {
    let Some(reloader) = state.reloader.clone() else {
        return Err("this server has no configuration to reload".into());
    };
    let _serial = state.reload_lock.lock().await;
    let worker = state.clone();
    let built = tokio::task::spawn_blocking(move || {
        let settings = reloader()?;
        let previous = worker.catalog.load_full();
        Catalog::build(&worker.host, &settings, Some(&previous), &worker.metrics)
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("the reload task failed: {e}"))
    .and_then(|r| r);
    match built {
        Ok(catalog) => {
            let n = catalog.tenants.len();
            state.catalog.store(Arc::new(catalog));
            state.metrics.reloads.inc();
            tracing::info!(tenants = n, "configuration reloaded");
            Ok(n)
        }
        Err(message) => {
            state.metrics.reload_failures.inc();
            tracing::warn!(%message, "reload refused; the running configuration stays");
            Err(message)
        }
    }
}
