//! A node's parameters: typed values declared in the dataflow (`params:`) or by the node's code,
//! read and set while it runs, from the code and from `nerve param`.
//!
//! The node process holds them: `nerve param set` reaches the node's control thread, which runs
//! the on-change callbacks there, exactly as [`Params::set`] does in the node's own code.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use nerve_message::param::{ParamAnswer, ParamOp};
pub use nerve_message::param::{ParamError, ParamValue};

use nerve_shm::sync::lock;
pub use nerve_topic::Refusal;

/// An on-change callback: sees the key and the new value, accepts with `Ok(())` or refuses with
/// `Err(reason)`.
type Callback = dyn Fn(&str, &ParamValue) -> Result<(), Refusal> + Send + Sync;

/// A node's parameters; clones share them.
///
/// ```no_run
/// use nerve_node::{Node, ParamValue};
///
/// let (node, _events) = Node::init_from_env()?;
/// let params = node.params();
/// // Declared in the dataflow (`params: {speed: 1.0}`) or here, with a default.
/// params.declare("speed", ParamValue::Float(0.5))?;
/// params.on_change(|key, value| match (key, value) {
///     ("speed", ParamValue::Float(v)) if *v < 0.0 => Err(format!("speed must be >= 0, got {v}").into()),
///     _ => Ok(()),
/// });
/// assert!(params.set("speed", ParamValue::Float(-1.0)).is_err());
/// params.set("speed", ParamValue::Int(2))?; // an int is taken for a float
/// assert_eq!(params.get("speed"), Some(ParamValue::Float(2.0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Params {
    inner: Arc<Inner>,
}

struct Inner {
    node: String,
    values: Mutex<BTreeMap<String, ParamValue>>,
    callbacks: Mutex<Vec<Arc<Callback>>>,
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params").field("node", &self.inner.node).field("values", &self.list()).finish_non_exhaustive()
    }
}

impl Params {
    /// The parameters of node `node`, starting with those the dataflow declares.
    #[must_use]
    pub fn new(node: &str, declared: BTreeMap<String, ParamValue>) -> Self {
        Self {
            inner: Arc::new(Inner {
                node: node.to_owned(),
                values: Mutex::new(declared),
                callbacks: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The value of `key`, if the node has that parameter.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<ParamValue> {
        lock(&self.inner.values).get(key).cloned()
    }

    /// The value of `key`.
    ///
    /// # Errors
    /// [`ParamError::UnknownKey`], naming the keys there are.
    pub fn require(&self, key: &str) -> Result<ParamValue, ParamError> {
        let values = lock(&self.inner.values);
        values.get(key).cloned().ok_or_else(|| ParamError::UnknownKey {
            node: self.inner.node.clone(),
            key: key.to_owned(),
            known: values.keys().cloned().collect(),
        })
    }

    /// Every parameter and its value, by key.
    #[must_use]
    pub fn list(&self) -> BTreeMap<String, ParamValue> {
        lock(&self.inner.values).clone()
    }

    /// Declares `key` with a default value, and returns its value: the dataflow's, when it
    /// declares the key with the same type, else `default`. No callback runs.
    ///
    /// # Errors
    /// [`ParamError::BadKey`], or [`ParamError::TypeMismatch`] when the dataflow (or an earlier
    /// declaration) gave the key another type.
    pub fn declare(&self, key: &str, default: ParamValue) -> Result<ParamValue, ParamError> {
        nerve_spec::param::check_key(key)
            .map_err(|reason| ParamError::BadKey { node: self.inner.node.clone(), reason: reason.to_string() })?;
        let mut values = lock(&self.inner.values);
        match values.get(key) {
            Some(current) => match default.conform(current) {
                Ok(_) => Ok(current.clone()),
                Err(default) => Err(self.mismatch(key, current, &default)),
            },
            None => {
                values.insert(key.to_owned(), default.clone());
                Ok(default)
            }
        }
    }

    /// Sets `key` to `value` once every on-change callback accepts it, and returns the value
    /// as stored (an int set on a float parameter is stored as a float).
    ///
    /// Callbacks run on the calling thread, without any lock held: they may call [`Params::get`]
    /// (which still sees the old value) and even [`Params::set`].
    ///
    /// # Errors
    /// [`ParamError::UnknownKey`] (declare it first), [`ParamError::TypeMismatch`], or
    /// [`ParamError::Rejected`] with the first refusing callback's reason.
    pub fn set(&self, key: &str, value: ParamValue) -> Result<ParamValue, ParamError> {
        let current = self.require(key)?;
        let value = value.conform(&current).map_err(|given| self.mismatch(key, &current, &given))?;
        let callbacks = lock(&self.inner.callbacks).clone();
        for callback in callbacks {
            let verdict = catch_unwind(AssertUnwindSafe(|| callback(key, &value)))
                .unwrap_or_else(|_| Err("the on-change callback panicked".into()));
            if let Err(Refusal { reason }) = verdict {
                tracing::info!(node = %self.inner.node, key, %value, reason, "parameter change rejected");
                return Err(ParamError::Rejected {
                    node: self.inner.node.clone(),
                    key: key.to_owned(),
                    value: value.to_string(),
                    reason,
                });
            }
        }
        lock(&self.inner.values).insert(key.to_owned(), value.clone());
        tracing::debug!(node = %self.inner.node, key, %value, "parameter set");
        Ok(value)
    }

    /// Adds a callback that every later [`Params::set`] (from the code or `nerve param set`)
    /// runs before the value is stored; the first one to return `Err(`[`Refusal`]`)` refuses
    /// the change and the setter gets its reason (`Err("too fast".into())`). A panic counts as a
    /// refusal.
    pub fn on_change(&self, callback: impl Fn(&str, &ParamValue) -> Result<(), Refusal> + Send + Sync + 'static) {
        lock(&self.inner.callbacks).push(Arc::new(callback));
    }

    /// Answers a tool's request (on the node's control thread).
    pub(crate) fn answer(&self, op: ParamOp) -> ParamAnswer {
        match op {
            ParamOp::List => Ok(self.list()),
            ParamOp::Get { key } => self.require(&key).map(|v| BTreeMap::from([(key, v)])),
            ParamOp::Set { key, value } => self.set(&key, value).map(|v| BTreeMap::from([(key, v)])),
        }
    }

    fn mismatch(&self, key: &str, declared: &ParamValue, given: &ParamValue) -> ParamError {
        ParamError::TypeMismatch {
            node: self.inner.node.clone(),
            key: key.to_owned(),
            expected: declared.a_type(),
            found: given.a_type(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params::new("base", BTreeMap::from([("speed".to_owned(), ParamValue::Float(1.0))]))
    }

    #[test]
    fn callbacks_refuse_with_a_reason_and_may_read() {
        let p = params();
        let reader = p.clone();
        p.on_change(move |key, value| {
            // Reading inside a callback sees the old value and takes no lock for long.
            assert_eq!(reader.get(key), Some(ParamValue::Float(1.0)));
            match value {
                ParamValue::Float(v) if *v < 0.0 => Err(format!("{key} must be >= 0").into()),
                _ => Ok(()),
            }
        });
        let err = p.set("speed", ParamValue::Int(-2)).expect_err("negative");
        assert_eq!(err.to_string(), "node `base` rejected speed = -2.0: speed must be >= 0");
        assert_eq!(p.get("speed"), Some(ParamValue::Float(1.0)));
        assert_eq!(p.set("speed", ParamValue::Int(3)), Ok(ParamValue::Float(3.0)));
        assert_eq!(p.get("speed"), Some(ParamValue::Float(3.0)));
    }

    #[test]
    fn types_and_keys_are_checked() {
        let p = params();
        let err = p.set("speed", ParamValue::String("fast".into())).expect_err("a string");
        assert_eq!(err.to_string(), "node `base`: parameter `speed` is a float, not a string");
        let err = p.set("sped", ParamValue::Float(1.0)).expect_err("a typo");
        assert_eq!(err.to_string(), "node `base` has no parameter `sped` (its parameters: speed)");
        // The dataflow's value wins over the code's default of the same type.
        assert_eq!(p.declare("speed", ParamValue::Int(7)), Ok(ParamValue::Float(1.0)));
        assert!(matches!(p.declare("speed", ParamValue::Bool(true)), Err(ParamError::TypeMismatch { .. })));
        assert!(matches!(p.declare("a-b", ParamValue::Bool(true)), Err(ParamError::BadKey { .. })));
        assert_eq!(p.declare("mode", ParamValue::String("slow".into())), Ok(ParamValue::String("slow".into())));
        assert_eq!(p.list().len(), 2);
    }

    #[test]
    fn a_panicking_callback_refuses() {
        let p = params();
        p.on_change(|_, _| panic!("boom"));
        assert!(matches!(p.set("speed", ParamValue::Float(2.0)), Err(ParamError::Rejected { .. })));
        assert_eq!(p.get("speed"), Some(ParamValue::Float(1.0)));
    }
}
