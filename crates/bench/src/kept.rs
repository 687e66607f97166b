//! What an interrupted comparison kept: the sentence `kfdo compare` prints when Ctrl-C
//! stops it in any phase, so that a user knows what the store holds and what is
//! missing without opening it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::store::Store;

/// The phase a comparison was in when it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Phase {
    /// The untimed runs before the timed ones.
    Warmup,
    /// The interleaved timed runs.
    Timing,
    /// One run of each command under the counter source.
    Counting,
}

impl Phase {
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Warmup => "the warm-up runs",
            Phase::Timing => "the timed runs",
            Phase::Counting => "the counter runs",
        }
    }
}

/// What the counters of an interrupted comparison came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CountersKept {
    /// `--counters none`: none were asked for.
    NotAsked,
    /// Counters of `taken` of `of` commands are in the store (`taken` may be 0).
    Taken { taken: usize, of: usize },
}

/// What an interrupted comparison left in the store.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Kept {
    pub store: PathBuf,
    /// The session, marked "interrupted" in the store.
    pub session: i64,
    pub phase: Phase,
    /// Timed runs finished in this session.
    pub runs: usize,
    /// Commands with at least one of those runs.
    pub commands_with_runs: usize,
    pub counters: CountersKept,
}

impl fmt::Display for Kept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "interrupted during {}; kept {} timed run(s) of {} command(s) in {} session {} \
             (marked interrupted)",
            self.phase.describe(),
            self.runs,
            self.commands_with_runs,
            self.store.display(),
            self.session
        )?;
        match self.counters {
            CountersKept::NotAsked => Ok(()),
            CountersKept::Taken { taken: 0, .. } => write!(f, "; counters not taken"),
            CountersKept::Taken { taken, of } => {
                write!(f, "; counters taken for {taken} of {of} command(s)")
            }
        }
    }
}

/// For a second Ctrl-C, which leaves at once without waiting for the command in flight:
/// marks `session` interrupted and says what the store holds (every finished run was
/// committed as it finished).
pub fn abandon(store: &Path, session: i64) -> String {
    let marked = Store::open(store).and_then(|s| {
        s.finish_session(session, "interrupted")?;
        s.session_runs(session)
    });
    match marked {
        Ok(runs) => format!(
            "stopped at once by a second Ctrl-C; kept {runs} timed run(s) in {} session \
             {session} (marked interrupted); the run in flight and counters not yet taken are \
             lost",
            store.display()
        ),
        Err(e) => format!(
            "stopped at once by a second Ctrl-C; the finished runs are in {} session {session}, \
             but it could not be marked interrupted: {e}",
            store.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(phase: Phase, counters: CountersKept) -> String {
        Kept {
            store: "r.db".into(),
            session: 3,
            phase,
            runs: 12,
            commands_with_runs: 2,
            counters,
        }
        .to_string()
    }

    #[test]
    fn says_the_phase_the_runs_the_session_and_the_counters() {
        assert_eq!(
            kept(Phase::Counting, CountersKept::Taken { taken: 0, of: 2 }),
            "interrupted during the counter runs; kept 12 timed run(s) of 2 command(s) in r.db \
             session 3 (marked interrupted); counters not taken"
        );
        assert!(
            kept(Phase::Counting, CountersKept::Taken { taken: 1, of: 2 })
                .ends_with("; counters taken for 1 of 2 command(s)")
        );
        let timing = kept(Phase::Timing, CountersKept::NotAsked);
        assert!(
            timing.starts_with("interrupted during the timed runs; kept 12"),
            "{timing}"
        );
        assert!(!timing.contains("counters"), "{timing}");
    }
}
