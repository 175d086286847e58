//! What is indexed of a session: the role of each document, and the
//! opt-in kinds of text chosen at build time.

use std::fmt;
use std::str::FromStr;

/// The role of an indexed document: who said it, or what kind of text it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// A user message's text.
    User,
    /// An assistant message's text blocks.
    Assistant,
    /// An assistant message's thinking blocks (opt-in kind `thinking`).
    Thinking,
    /// Tool calls, tool results and bash executions (opt-in kind `tools`).
    Tool,
    /// Compaction and branch summaries (opt-in kind `summary`).
    Summary,
    /// Extension messages (opt-in kind `custom`).
    Custom,
    /// `system` messages: the system prompt's sections and the tools it
    /// declares (opt-in kind `system`; Pi 0.86+). Last, so that the ranks
    /// stored by older releases keep their meaning.
    System,
}

impl Role {
    /// Every role, in the order documents of one line are emitted.
    pub const ALL: [Role; 7] = [
        Role::User,
        Role::Assistant,
        Role::Thinking,
        Role::Tool,
        Role::Summary,
        Role::Custom,
        Role::System,
    ];

    /// The role's name as stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Thinking => "thinking",
            Role::Tool => "tool",
            Role::Summary => "summary",
            Role::Custom => "custom",
            Role::System => "system",
        }
    }

    /// Position of this role among the documents of one line (also how
    /// the index stores it).
    pub fn rank(self) -> u64 {
        self as u64
    }

    /// The role of a [`Role::rank`].
    pub fn from_rank(rank: u64) -> Option<Role> {
        Role::ALL.get(usize::try_from(rank).ok()?).copied()
    }
}

impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!("unknown role {s:?} (expected user, assistant, thinking, tool, summary, custom or system)")
            })
    }
}

/// The opt-in kinds of text chosen at build time. User and assistant text
/// is always indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Kinds {
    /// Index thinking blocks.
    pub thinking: bool,
    /// Index tool calls, tool results and bash executions.
    pub tools: bool,
    /// Index compaction and branch summaries.
    pub summary: bool,
    /// Index custom (extension) messages.
    pub custom: bool,
    /// Index `system` messages (the system prompt and tool declarations,
    /// repeated in every session: rarely worth searching).
    pub system: bool,
}

impl Kinds {
    /// Every opt-in kind.
    pub const ALL: Kinds = Kinds {
        thinking: true,
        tools: true,
        summary: true,
        custom: true,
        system: true,
    };

    /// Parse `thinking,tools,summary,custom,system`, `all` or `none` (comma
    /// separated, any order, repeats allowed).
    pub fn parse(list: &str) -> Result<Kinds, String> {
        let mut k = Kinds::default();
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "thinking" => k.thinking = true,
                "tools" | "tool" => k.tools = true,
                "summary" | "summaries" => k.summary = true,
                "custom" => k.custom = true,
                "system" => k.system = true,
                "all" => k = Kinds::ALL,
                "none" => {}
                other => {
                    return Err(format!(
                        "unknown kind {other:?}: use thinking, tools, summary, custom, system, all or none"
                    ))
                }
            }
        }
        Ok(k)
    }

    /// Whether documents of `role` are produced under these kinds.
    pub fn includes(self, role: Role) -> bool {
        match role {
            Role::User | Role::Assistant => true,
            Role::Thinking => self.thinking,
            Role::Tool => self.tools,
            Role::Summary => self.summary,
            Role::Custom => self.custom,
            Role::System => self.system,
        }
    }

    /// The canonical list, as accepted by [`Kinds::parse`] (`none` when empty).
    pub fn to_list(self) -> String {
        let mut v = Vec::new();
        if self.thinking {
            v.push("thinking");
        }
        if self.tools {
            v.push("tools");
        }
        if self.summary {
            v.push("summary");
        }
        if self.custom {
            v.push("custom");
        }
        if self.system {
            v.push("system");
        }
        if v.is_empty() {
            "none".into()
        } else {
            v.join(",")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        assert_eq!(Kinds::parse("").unwrap(), Kinds::default());
        assert_eq!(Kinds::parse("all").unwrap(), Kinds::ALL);
        let k = Kinds::parse("tools, thinking").unwrap();
        assert!(k.tools && k.thinking && !k.summary && !k.custom);
        assert_eq!(k.to_list(), "thinking,tools");
        assert_eq!(Kinds::parse(&Kinds::ALL.to_list()).unwrap(), Kinds::ALL);
        assert!(Kinds::parse("bogus").is_err());
    }

    #[test]
    fn roles_round_trip() {
        for r in Role::ALL {
            assert_eq!(r.as_str().parse::<Role>().unwrap(), r);
            assert_eq!(Role::from_rank(r.rank()), Some(r));
        }
        assert_eq!(Role::from_rank(7), None);
    }
}
