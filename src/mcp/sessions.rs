//! rmcp's in-memory sessions of the HTTP transport, expired when idle
//! and capped in number ([`Sessions`]), and what one client may hold of
//! the HTTP server ([`Limits`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use rmcp::transport::WorkerTransport;

/// What one client may hold of the HTTP server.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A session with no request for this long is closed.
    pub idle: Duration,
    /// Most sessions alive at once.
    pub max_sessions: usize,
    /// Time for a request's headers, and again for its body, to arrive.
    pub request_timeout: Duration,
}

impl Default for Limits {
    /// 10 minutes idle, 64 sessions, 5 s per request part.
    fn default() -> Limits {
        Limits {
            idle: Duration::from_secs(600),
            max_sessions: 64,
            request_timeout: Duration::from_secs(5),
        }
    }
}

/// rmcp's in-memory sessions, expired when idle and capped in number.
pub struct Sessions {
    inner: LocalSessionManager,
    /// Each live session's last request.
    used: Mutex<HashMap<SessionId, Instant>>,
    limits: Limits,
}

impl Sessions {
    /// No session yet.
    pub fn new(limits: Limits) -> Sessions {
        let mut inner = LocalSessionManager::default();
        // rmcp's worker stops on its own when idle this long too.
        inner.session_config.keep_alive = Some(limits.idle);
        Sessions {
            inner,
            used: Mutex::new(HashMap::new()),
            limits,
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sessions alive.
    pub fn live(&self) -> usize {
        self.used().len()
    }

    /// Whether `id` is alive; a request for it counts as use.
    fn touch(&self, id: &SessionId) -> bool {
        let now = Instant::now();
        match self.used().get_mut(id) {
            Some(at) if now.duration_since(*at) < self.limits.idle => {
                *at = now;
                true
            }
            _ => false,
        }
    }

    /// Close the sessions idle for too long.
    pub async fn expire(&self) {
        let now = Instant::now();
        let idle: Vec<SessionId> = self
            .used()
            .iter()
            .filter(|(_, at)| now.duration_since(**at) >= self.limits.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in idle {
            self.end(&id).await;
        }
    }

    async fn end(&self, id: &SessionId) {
        self.used().remove(id);
        // An error is a worker already gone: nothing left to free.
        let _ = self.inner.close_session(id).await;
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.expire().await;
        loop {
            let oldest = {
                let used = self.used();
                if used.len() < self.limits.max_sessions.max(1) {
                    break;
                }
                used.iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(id, _)| id.clone())
            };
            match oldest {
                Some(id) => self.end(&id).await,
                None => break,
            }
        }
        let (id, transport) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.touch(id) {
            return self.inner.has_session(id).await;
        }
        if self.used().contains_key(id) {
            self.end(id).await;
        }
        Ok(false)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.end(id).await;
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No session store: a session not in memory is gone.
        Ok(RestoreOutcome::NotSupported)
    }
}
