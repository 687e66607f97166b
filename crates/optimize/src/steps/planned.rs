//! A run's plan: the steps a pipeline runs, in order, each with the options of `kfdo
//! optimize` it reads. The progress display counts the list; [`super::engine::Steps`]
//! refuses to run a step the list does not hold, so the list cannot drift from the run;
//! and `plan` refuses, before any work, an option that no step of the list reads.

use std::collections::BTreeSet;

/// An option of `kfdo optimize` that only some runs read (the others, such as `-o`,
/// `--variants` or `--jobs`, every run reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Opt {
    Runs,
    Boots,
    Method,
    Period,
    Counters,
    Cc,
    Cxx,
    LlvmProfdata,
    LlvmProfgen,
    NoPackages,
    NoUml,
    NoKvm,
}

impl Opt {
    /// The command line's spelling.
    pub const fn flag(self) -> &'static str {
        match self {
            Opt::Runs => "--runs",
            Opt::Boots => "--boots",
            Opt::Method => "--method",
            Opt::Period => "--period",
            Opt::Counters => "--counters",
            Opt::Cc => "--cc",
            Opt::Cxx => "--cxx",
            Opt::LlvmProfdata => "--llvm-profdata",
            Opt::LlvmProfgen => "--llvm-profgen",
            Opt::NoPackages => "--no-packages",
            Opt::NoUml => "--no-uml",
            Opt::NoKvm => "--no-kvm",
        }
    }
}

/// One step of the plan: its name (as its log and the progress display say it) and the
/// options it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStep {
    pub name: String,
    pub reads: Vec<Opt>,
}

/// The steps of one run, in order, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepList {
    steps: Vec<PlannedStep>,
    /// Options the pipeline reads to choose its steps (`--no-packages` decides whether
    /// the packages step is in the list).
    chooses: Vec<Opt>,
}

impl StepList {
    /// Adds a step; a step asked for again (a kernel's initramfs, shared by two later
    /// steps) is the same step, found in the cache the second time.
    pub fn push(&mut self, name: impl Into<String>, reads: &[Opt]) {
        let name = name.into();
        match self.steps.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                for o in reads {
                    if !s.reads.contains(o) {
                        s.reads.push(*o);
                    }
                }
            }
            None => self.steps.push(PlannedStep {
                name,
                reads: reads.to_vec(),
            }),
        }
    }

    /// Options read in choosing the steps, not by one step.
    pub fn chooses(&mut self, opts: &[Opt]) {
        self.chooses.extend_from_slice(opts);
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    pub fn steps(&self) -> &[PlannedStep] {
        &self.steps
    }

    pub fn names(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.name.as_str()).collect()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.steps.iter().any(|s| s.name == name)
    }

    /// Every option some step (or the choice of steps) reads.
    pub fn reads(&self) -> BTreeSet<Opt> {
        self.steps
            .iter()
            .flat_map(|s| s.reads.iter().copied())
            .chain(self.chooses.iter().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_asked_for_twice_is_one_step_reading_both_options() {
        let mut l = StepList::default();
        l.push("build baseline", &[Opt::Cc]);
        l.push("record training run", &[Opt::Method, Opt::Period]);
        l.push("build baseline", &[Opt::Cxx, Opt::Cc]);
        l.chooses(&[Opt::NoPackages]);
        assert_eq!(l.names(), ["build baseline", "record training run"]);
        assert_eq!(l.steps()[0].reads, [Opt::Cc, Opt::Cxx]);
        assert_eq!(
            l.reads().into_iter().collect::<Vec<_>>(),
            [Opt::Method, Opt::Period, Opt::Cc, Opt::Cxx, Opt::NoPackages]
        );
        assert!(l.contains("record training run") && !l.contains("report"));
    }
}
