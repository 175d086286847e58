//! Which agent of the Pi family wrote a session: Pi itself, or Oh My Pi
//! (`can1357/oh-my-pi`, the fork that keeps Pi's version-3 format under
//! `~/.omp/agent/sessions` and starts every file with a title slot).
//!
//! A file says so itself when it carries what only Oh My Pi writes (see
//! [`super::fingerprint::Header::written_by`]); otherwise the directory
//! it was found in does (see [`crate::discover::Location::agents`]), and
//! a file that nothing marks is Pi's.

use std::fmt;
use std::str::FromStr;

/// An agent whose sessions pi-index reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    /// Pi (`pi`, `@earendil-works/pi-coding-agent`).
    #[default]
    Pi,
    /// Oh My Pi (`omp`, `@oh-my-pi/pi-coding-agent`).
    Omp,
}

impl Agent {
    /// Every agent, in the order their session directories are read.
    pub const ALL: [Agent; 2] = [Agent::Pi, Agent::Omp];

    /// The agent's short name, as stored and printed in JSON: `pi`, `omp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Pi => "pi",
            Agent::Omp => "omp",
        }
    }

    /// The agent's name in prose: `Pi`, `Oh My Pi`.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Pi => "Pi",
            Agent::Omp => "Oh My Pi",
        }
    }

    /// The program that resumes one of its sessions: `pi`, `omp`.
    pub fn command(self) -> &'static str {
        match self {
            Agent::Pi => "pi",
            Agent::Omp => "omp",
        }
    }

    /// The flag of [`Agent::command`] that resumes the session file named
    /// after it: Pi's `--session FILE`, Oh My Pi's `--resume FILE` (the
    /// flag its help names; it opens a path as Pi's does).
    pub fn resume_flag(self) -> &'static str {
        match self {
            Agent::Pi => "--session",
            Agent::Omp => "--resume",
        }
    }

    /// The agent stored as `s` ([`Agent::as_str`]); anything else (an index
    /// or database row written before agents were recorded) is Pi's.
    pub fn from_stored(s: Option<&str>) -> Agent {
        s.and_then(|s| s.parse().ok()).unwrap_or_default()
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Agent {
    type Err = String;
    fn from_str(s: &str) -> Result<Agent, String> {
        Agent::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| format!("unknown agent {s:?} (expected pi or omp)"))
    }
}

impl serde::Serialize for Agent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Agent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Agent, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_round_trip_and_old_rows_are_pi() {
        for a in Agent::ALL {
            assert_eq!(a.as_str().parse::<Agent>().unwrap(), a);
            assert_eq!(Agent::from_stored(Some(a.as_str())), a);
        }
        assert_eq!(Agent::from_stored(None), Agent::Pi);
        assert_eq!(Agent::from_stored(Some("codex")), Agent::Pi);
        assert_eq!(
            (Agent::Omp.command(), Agent::Omp.resume_flag()),
            ("omp", "--resume")
        );
        assert_eq!(Agent::Omp.name(), "Oh My Pi");
    }
}
