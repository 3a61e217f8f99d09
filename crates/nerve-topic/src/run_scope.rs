//! Run scoping: which endpoints a topic, service or action name meets.
//!
//! Every name used inside a run belongs to that run, so two runs of one dataflow never talk to
//! each other: a process that `nerve run` started has the run's name in its environment
//! ([`nerve_message::env::RUN`]), and its endpoints meet only endpoints of the same run. The
//! names the run shares (the dataflow's `share:`, [`nerve_message::env::SHARE`]) and every name
//! of a process outside any run are global. An endpoint can also say whose name it means
//! ([`RunScope`]): global, or a given run's (how a script outside reaches into a run).
//!
//! Endpoints meet by a *key*: a global name is its own key; name `N` of run `R` has the key
//! `~R/N`. Names cannot hold `~`, so no global name is ever some run's key, and the key is
//! what the registry, the Zenoh key expressions and the listings carry ([`split_key`] reads it
//! back).

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError, RwLock};

use crate::error::TopicError;
use crate::name;

/// What starts the key of a run's name: `~<run>/<name>`.
const RUN_MARK: char = '~';

/// Whose name an endpoint's name is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RunScope {
    /// The run of this process ([`membership`]) unless the run shares the name; global in a
    /// process outside any run.
    #[default]
    Inherit,
    /// Global: shared with every run's shared names and with processes outside any run.
    Shared,
    /// Run `name`'s (its `--name`, else its run id), from anywhere.
    Run(String),
}

/// A process's part in a run: the run's name and the names it shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    run: String,
    share: BTreeSet<String>,
}

impl Membership {
    /// Run `run`, sharing `share`.
    ///
    /// # Errors
    /// [`TopicError::BadOption`] for a run name that cannot scope names,
    /// [`TopicError::BadName`] for a shared name that is not a name.
    pub fn new<S: AsRef<str>>(run: &str, share: impl IntoIterator<Item = S>) -> Result<Self, TopicError> {
        check_run(run, "run")?;
        let share = share.into_iter().map(|s| name::canonical(s.as_ref())).collect::<Result<_, _>>()?;
        Ok(Self { run: run.to_owned(), share })
    }

    /// The run the environment names ([`nerve_message::env::RUN`], sharing
    /// [`nerve_message::env::SHARE`]), if any.
    ///
    /// # Errors
    /// As [`Membership::new`], naming the variable.
    pub fn from_env() -> Result<Option<Self>, TopicError> {
        use nerve_message::env::{RUN, SHARE};
        let Some(run) = std::env::var(RUN).ok().filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        check_run(&run, RUN)?;
        let share = std::env::var(SHARE).unwrap_or_default();
        let names = share.split(',').filter(|s| !s.is_empty());
        let bad = |e: TopicError| TopicError::BadOption {
            option: SHARE.to_owned(),
            value: share.clone(),
            why: e.to_string(),
        };
        Self::new(&run, names).map(Some).map_err(bad)
    }

    /// The run's name.
    #[must_use]
    pub fn run(&self) -> &str {
        &self.run
    }

    /// Whose `name` is in this run: global when the run shares it, else the run's.
    #[must_use]
    pub fn scope_of(&self, name: &str) -> RunScope {
        let shared = name::canonical(name).is_ok_and(|n| self.share.contains(&n));
        if shared { RunScope::Shared } else { RunScope::Run(self.run.clone()) }
    }
}

fn check_run(run: &str, option: &str) -> Result<(), TopicError> {
    nerve_spec::topic_name::check_run_name(run).map_err(|why| TopicError::BadOption {
        option: option.to_owned(),
        value: run.to_owned(),
        why: format!("bad run name: {why}"),
    })
}

/// The run this process joined with [`join`]; the environment's otherwise.
static JOINED: RwLock<Option<Arc<Membership>>> = RwLock::new(None);

/// Makes this process part of a run until the returned guard is dropped: what a `path: dynamic`
/// node started by hand does while it is connected, as it has no run in its environment.
/// Endpoints created meanwhile keep the run's scope after; those created after the guard is
/// dropped are the environment's again (a process that leaves a run is outside it).
#[must_use = "the process leaves the run when the guard is dropped"]
pub fn join(membership: Membership) -> Joined {
    let membership = Arc::new(membership);
    *JOINED.write().unwrap_or_else(PoisonError::into_inner) = Some(membership.clone());
    Joined(membership)
}

/// This process's part in a run it [`join`]ed, until dropped.
#[derive(Debug)]
pub struct Joined(Arc<Membership>);

impl Drop for Joined {
    fn drop(&mut self) {
        let mut joined = JOINED.write().unwrap_or_else(PoisonError::into_inner);
        // A later join (another dynamic node of another run) stays.
        if joined.as_ref().is_some_and(|current| Arc::ptr_eq(current, &self.0)) {
            *joined = None;
        }
    }
}

/// The run this process belongs to: the one it [`join`]ed, else the one its environment names.
///
/// # Errors
/// As [`Membership::from_env`].
pub fn membership() -> Result<Option<Arc<Membership>>, TopicError> {
    if let Some(joined) = JOINED.read().unwrap_or_else(PoisonError::into_inner).clone() {
        return Ok(Some(joined));
    }
    Ok(Membership::from_env()?.map(Arc::new))
}

/// An endpoint's name, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The name, canonical: what the endpoint reports and its messages carry as their id.
    pub name: String,
    /// What endpoints meet by: the name itself when global, `~<run>/<name>` when a run's.
    pub key: String,
}

/// Resolves `name` in `scope`.
///
/// # Errors
/// [`TopicError::BadName`] for a bad name, [`TopicError::BadOption`] for a bad run name (given,
/// or in the environment).
pub fn resolve(name: &str, scope: &RunScope) -> Result<Resolved, TopicError> {
    let name = name::canonical(name)?;
    let run = match scope {
        RunScope::Shared => None,
        RunScope::Run(run) => {
            check_run(run, "run")?;
            Some(run.clone())
        }
        RunScope::Inherit => match membership()?.map(|m| m.scope_of(&name)) {
            Some(RunScope::Run(run)) => Some(run),
            _ => None,
        },
    };
    let key = match run {
        Some(run) => format!("{RUN_MARK}{run}/{name}"),
        None => name.clone(),
    };
    Ok(Resolved { name, key })
}

/// A key back as (run, name): `(None, name)` for a global name.
#[must_use]
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    key.strip_prefix(RUN_MARK)
        .and_then(|rest| rest.split_once('/'))
        .map_or((None, key), |(run, name)| (Some(run), name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_name_gets_a_key_no_global_name_has() -> Result<(), TopicError> {
        let ours = resolve("/camera/image", &RunScope::Run("r1".into()))?;
        assert_eq!(ours, Resolved { name: "camera/image".into(), key: "~r1/camera/image".into() });
        assert_eq!(split_key(&ours.key), (Some("r1"), "camera/image"));
        let global = resolve("r1/camera/image", &RunScope::Shared)?;
        assert_eq!(global.key, "r1/camera/image");
        assert_eq!(split_key(&global.key), (None, "r1/camera/image"));
        assert!(name::canonical(&ours.key).is_err(), "a key of a run is not a name anyone can use");
        Ok(())
    }

    #[test]
    fn a_run_shares_only_what_it_lists() -> Result<(), TopicError> {
        let run = Membership::new("sim-2", ["/map", "localize"])?;
        assert_eq!(run.scope_of("map"), RunScope::Shared);
        assert_eq!(run.scope_of("localize"), RunScope::Shared);
        assert_eq!(run.scope_of("map/extra"), RunScope::Run("sim-2".into()));
        Ok(())
    }

    #[test]
    fn bad_run_names_are_refused_by_name() {
        let err = resolve("x", &RunScope::Run("a/b".into())).expect_err("a `/` in a run name");
        assert_eq!(
            err.to_string(),
            "run: `a/b`: bad run name: `/` is not allowed (use letters, digits, `_`, `-` and `.`)"
        );
        assert!(Membership::new("ok", ["bad name"]).is_err());
    }
}
