//! The active branch of a session tree.
//!
//! Since version 2, entries form a tree through `parentId`, and `/tree` in
//! Pi starts a new branch from an earlier entry in the same file. Nothing
//! marks the current branch: Pi takes the last entry in file order as the
//! leaf, and the active branch is the path from it to the root. Every other
//! entry lies on an abandoned branch.

use std::collections::HashMap;

/// The tree links of one entry.
#[derive(Clone, Copy, Debug)]
pub struct Link<'a> {
    /// The entry's `id`.
    pub id: Option<&'a str>,
    /// Its `parentId` (absent or null for a root).
    pub parent: Option<&'a str>,
}

/// For each entry (in file order), whether it lies on the active branch.
///
/// The leaf is the last entry. If it has no id, the file is treated as
/// linear and everything is active; entries without an id are active too,
/// since they cannot be placed in the tree. A `parentId` naming no entry
/// ends the path; a cycle is walked at most once. When an id occurs twice,
/// the later entry is the one a `parentId` names, as in Pi's own index.
pub fn active(links: &[Link<'_>]) -> Vec<bool> {
    let mut flags: Vec<bool> = links.iter().map(|l| l.id.is_none()).collect();
    let Some(leaf) = links.last() else {
        return flags;
    };
    if leaf.id.is_none() {
        return vec![true; links.len()];
    }
    // foldhash, seeded per process: every entry of a build's files passes
    // through this map, and SipHash was a measurable share of the parse
    // ([docs/performance.md](../../docs/performance.md#paying-for-usage)).
    let mut by_id: HashMap<&str, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(links.len(), Default::default());
    for (i, l) in links.iter().enumerate() {
        if let Some(id) = l.id {
            by_id.insert(id, i);
        }
    }
    let mut at = links.len() - 1;
    loop {
        if flags[at] && links[at].id.is_some() {
            break; // a cycle
        }
        flags[at] = true;
        match links[at].parent.and_then(|p| by_id.get(p)) {
            Some(&next) => at = next,
            None => break,
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l<'a>(id: &'a str, parent: Option<&'a str>) -> Link<'a> {
        Link {
            id: Some(id),
            parent,
        }
    }

    #[test]
    fn the_last_entry_is_the_leaf() {
        // a <- b <- c, then a branch from a: a <- d
        let links = [
            l("a", None),
            l("b", Some("a")),
            l("c", Some("b")),
            l("d", Some("a")),
        ];
        assert_eq!(active(&links), vec![true, false, false, true]);
    }

    #[test]
    fn cycles_and_dangling_parents_end_the_walk() {
        let links = [l("a", Some("b")), l("b", Some("a"))];
        assert_eq!(active(&links), vec![true, true]);
        let links = [l("a", None), l("b", Some("zz"))];
        assert_eq!(active(&links), vec![false, true]);
    }

    #[test]
    fn entries_without_ids_are_active() {
        let links = [
            Link {
                id: None,
                parent: None,
            },
            l("b", None),
            l("c", None),
        ];
        assert_eq!(active(&links), vec![true, false, true]);
        let links = [
            l("a", None),
            Link {
                id: None,
                parent: None,
            },
        ];
        assert_eq!(active(&links), vec![true, true]);
        assert!(active(&[]).is_empty());
    }
}
