//! What Pi cost, as the team database holds it: every session row's
//! usage (pushed from its host's local record, [`super::schema`]'s
//! Usage), read with the row's place in its family, for the report of
//! [`crate::read::usage`].
//!
//! A row gives the report what the host's own index gives it: the same
//! key (its path's), the same family key, and its place in the family
//! (`family_age`, its rank in the order the local index sorts a family
//! by), so that each host's entries are counted exactly as the host's
//! own `usage` counts them.

use std::collections::BTreeMap;

use super::{schema, Db, TeamError};
use crate::index::spent::Value;
use crate::read::usage::{Collect, SessionSpend, UsageData};

/// Every session's usage, each with its host.
pub fn usage(db: &Db) -> Result<UsageData, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let rows = db
        .run(db.client.query_typed(
            "SELECT host, path, session_id, session_name, cwd, family, family_age, usage \
             FROM pi_sessions",
            &[],
        ))
        .map_err(|e| db.error("reading what the sessions spent", &e))?;
    let mut out = Collect::default();
    let mut without: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        let host: String = r.get(0);
        let path: String = r.get(1);
        let session_id: String = r.get(2);
        let stored = match r.get::<_, Option<&[u8]>>(7) {
            None => {
                *without.entry(host.clone()).or_default() += 1;
                Some(Value::default())
            }
            Some(bytes) => {
                Value::read_whole(bytes.to_vec())
                    .map(Some)
                    .ok_or_else(|| TeamError::Db {
                        target: db.target.clone(),
                        doing: "reading what the sessions spent".into(),
                        why: format!(
                            "the usage of {path} (host {host}) is not as this pi-index writes it: \
                         push again from {host}"
                        ),
                    })?
            }
        };
        let key = crate::index::schema::session_key(&path);
        let family = r.get::<_, Option<i64>>(5).map(|f| f as u64);
        // The order the local index sorts a family by, as its rank; a
        // session outside a family sorts as it does locally.
        let age = match r.get::<_, Option<i32>>(6) {
            Some(rank) if family.is_some() => (rank.max(0) as u32, 0, key),
            _ => (u32::MAX, i64::MAX, key),
        };
        out.add(
            SessionSpend {
                key,
                host: Some(host),
                session_id,
                path,
                name: r.get(3),
                cwd: r.get(4),
                family,
                age,
                rows: Default::default(),
            },
            stored,
        );
    }
    let mut data = out.finish();
    data.without_usage = without.into_iter().collect();
    Ok(data)
}
