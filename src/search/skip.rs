//! A search that skips the copies standing behind another of their group
//! ([`crate::index::saved::groups`]), and when it may.

use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocId, Score, SegmentReader};

use super::query::filters::Constraint;
use super::query::FieldMap;
use crate::index::saved::groups::Groups;

/// Whether every copy of a message matches a query that asks
/// `constraints` when one copy does: the constraints are on what the
/// groups agree on, and only the message's text is searched (a
/// replacement text is not part of the copy key).
pub(crate) fn decide(groups: &Groups, constraints: &[Constraint], map: &FieldMap<'_>) -> bool {
    let uniform = groups.uniform();
    !map.searches_replacements()
        && constraints.iter().all(|c| match c {
            Constraint::Roles(_) => uniform.role,
            Constraint::Model(_) => uniform.model,
            Constraint::After(_) | Constraint::Before(_) => uniform.time,
            Constraint::Cwd(_)
            | Constraint::Session(_)
            | Constraint::Branch(_)
            | Constraint::Name(_)
            | Constraint::Family(_) => false,
        })
}

/// `inner` without the copies that stand behind another of their group:
/// each match costs a bit lookup.
pub(crate) struct Skip<C> {
    pub(crate) inner: C,
    pub(crate) groups: Arc<Groups>,
}

pub(crate) struct SkipSegment<S> {
    inner: S,
    groups: Arc<Groups>,
    ord: u32,
    /// The block handed on, reused.
    block: Vec<DocId>,
}

impl<C: Collector> Collector for Skip<C> {
    type Fruit = C::Fruit;
    type Child = SkipSegment<C::Child>;

    fn for_segment(&self, ord: u32, reader: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(SkipSegment {
            inner: self.inner.for_segment(ord, reader)?,
            groups: self.groups.clone(),
            ord,
            block: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.inner.requires_scoring()
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<Self::Child as SegmentCollector>::Fruit>,
    ) -> tantivy::Result<Self::Fruit> {
        self.inner.merge_fruits(fruits)
    }
}

impl<S: SegmentCollector> SegmentCollector for SkipSegment<S> {
    type Fruit = S::Fruit;

    fn collect(&mut self, doc: DocId, score: Score) {
        if !self.groups.is_behind(self.ord, doc) {
            self.inner.collect(doc, score);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        let mut rest = std::mem::take(&mut self.block);
        rest.clear();
        rest.extend(
            docs.iter()
                .copied()
                .filter(|&d| !self.groups.is_behind(self.ord, d)),
        );
        self.inner.collect_block(&rest);
        self.block = rest;
    }

    fn harvest(self) -> Self::Fruit {
        self.inner.harvest()
    }
}
