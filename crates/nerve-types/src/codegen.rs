//! What the Rust and C++ code generators share: which messages they write (the packages asked
//! for and the packages they use that nerve does not ship, those it ships being referred to where
//! they are generated already), and how a generated type holds each field.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::definition::{Array, BaseType, FieldType, Message, Primitive};
use crate::name::{Kind, TypeName};
use crate::registry::{Registry, TypesError};

/// The messages of a set of packages, by package and kind, each package's service and action
/// parts included.
pub(crate) struct Packages {
    /// Every package generated: those asked for and those they need that nerve does not ship.
    pub wanted: BTreeSet<String>,
    /// Their messages, by package and kind, in the registry's order.
    pub messages: BTreeMap<(String, Kind), Vec<Arc<Message>>>,
}

impl Packages {
    /// The messages of `packages` and of the packages they use that nerve does not ship.
    ///
    /// # Errors
    /// An unknown package, a definition with a mistake, or a type it needs defined nowhere.
    pub fn collect(registry: &Registry, packages: &[String]) -> Result<Self, TypesError> {
        let listed = registry.list()?;
        let shipped = Registry::with_folders(Vec::new()).list()?;
        let mut wanted: BTreeSet<String> = BTreeSet::new();
        let mut queue: Vec<String> = packages.to_vec();
        let mut messages: BTreeMap<(String, Kind), Vec<Arc<Message>>> = BTreeMap::new();
        while let Some(package) = queue.pop() {
            if !wanted.insert(package.clone()) {
                continue;
            }
            let stems: Vec<&TypeName> = listed.keys().filter(|t| t.package == package).collect();
            if stems.is_empty() {
                let known: BTreeSet<&str> = listed.keys().map(|t| t.package.as_str()).collect();
                return Err(TypesError::UnknownPackage {
                    package,
                    known: known.into_iter().map(str::to_owned).collect(),
                });
            }
            for stem in stems {
                for m in registry.parts(stem)? {
                    for name in registry.resolve(&m.name)?.iter().map(|d| &d.name) {
                        let own_shipped = shipped.keys().any(|t| t.package == name.package);
                        if !wanted.contains(&name.package) && !own_shipped && !packages.contains(&name.package) {
                            queue.push(name.package.clone());
                        }
                    }
                    messages.entry((stem.package.clone(), stem.kind)).or_default().push(m);
                }
            }
        }
        Ok(Self { wanted, messages })
    }
}

/// How a generated type holds a field, which each language spells its own way.
pub(crate) enum Holding {
    /// One value.
    One,
    /// Exactly N values: `T[N]`.
    Fixed(usize),
    /// A sequence of numbers, read in place in a received message's shared memory.
    Numbers,
    /// Any other sequence (booleans, strings, messages).
    List,
}

/// How a generated type holds a field of type `ty`.
pub(crate) fn holding(ty: &FieldType) -> Holding {
    match (ty.array, &ty.base) {
        (Array::Single, _) => Holding::One,
        (Array::Fixed(n), _) => Holding::Fixed(n),
        // Arrow packs booleans in bits: they cannot be read in place as `bool`s.
        (Array::Bounded(_) | Array::Unbounded, BaseType::Primitive(p)) if *p != Primitive::Bool => Holding::Numbers,
        (Array::Bounded(_) | Array::Unbounded, _) => Holding::List,
    }
}
