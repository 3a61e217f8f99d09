//! Finding definitions: the dataflow's folders, `NERVE_TYPES_PATH`, installed ROS 2 packages,
//! and the common interfaces nerve ships.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use include_dir::{Dir, include_dir};

use crate::definition::{BaseType, Message};
use crate::name::{Kind, NameError, TypeName, is_package_name, is_type_name};
use crate::parse::{ParseError, parse_file, parts};

/// The common interfaces, so a robot without ROS installed has them (`interfaces/README.md`).
static SHIPPED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/interfaces");

/// The packages whose definitions nerve ships (`std_msgs`, `sensor_msgs`, …), sorted: what the
/// Rust and C++ code generators write for every user.
pub fn shipped_packages() -> Vec<String> {
    let mut names: Vec<String> = SHIPPED.dirs().map(|d| d.path().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Folders of interface packages, separated by `:`, searched after the dataflow's own.
pub const TYPES_PATH_VAR: &str = "NERVE_TYPES_PATH";

/// Where a definition comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This file.
    File(PathBuf),
    /// The interfaces shipped with nerve.
    Shipped,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Shipped => f.write_str("shipped with nerve"),
        }
    }
}

/// What went wrong finding or reading a type.
#[derive(Debug, thiserror::Error)]
pub enum TypesError {
    /// Not a type name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A definition file has a mistake.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// No folder defines the type.
    #[error(transparent)]
    Unknown(Box<UnknownType>),
    /// A definition file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No folder defines a type of this package.
    #[error("no package `{package}` defines any type; {}", match crate::nearest(package, known.iter().map(String::as_str)) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("the packages found are {}", known.join(", ")),
    })]
    UnknownPackage {
        /// The package asked for.
        package: String,
        /// Every package that defines a type.
        known: Vec<String>,
    },
    /// A message that contains itself could never be sent.
    #[error("`{name}` contains itself: {chain}")]
    Cycle {
        /// The type.
        name: TypeName,
        /// The fields that lead back to it.
        chain: String,
    },
}

/// A type no folder defines, and where it was looked for.
#[derive(Debug, thiserror::Error)]
#[error("unknown type `{name}`{}; {}looked in {}",
    needed_by.as_ref().map(|n| format!(" (the type of {n})")).unwrap_or_default(),
    suggestion.as_ref().map(|s| format!("did you mean `{s}`? ")).unwrap_or_default(),
    looked_in(searched))]
pub struct UnknownType {
    /// The type.
    pub name: TypeName,
    /// The field that names it, as `pkg/msg/Type.field`, if it was not asked for directly.
    pub needed_by: Option<String>,
    /// The folders searched, in order.
    pub searched: Vec<PathBuf>,
    /// A known type whose name is close, if any.
    pub suggestion: Option<TypeName>,
}

fn looked_in(searched: &[PathBuf]) -> String {
    let mut places: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
    places.push("the interfaces shipped with nerve".to_owned());
    places.join(", ")
}

/// The definitions a process can use, found in order in: the folders given (a dataflow's
/// `types:`), the folders of `NERVE_TYPES_PATH`, `share/` of every `AMENT_PREFIX_PATH` entry
/// (installed ROS 2 packages), and the interfaces shipped with nerve. The first that defines a
/// type wins.
///
/// A folder holds packages (`<folder>/<package>/msg/<Type>.msg`), or is one package itself
/// when it has a `msg`, `srv` or `action` folder (then the package is the folder's name).
#[derive(Debug, Default)]
pub struct Registry {
    folders: Vec<PathBuf>,
    parsed: Mutex<HashMap<TypeName, Arc<Message>>>,
}

impl Registry {
    /// `folders`, then the environment's (`NERVE_TYPES_PATH`, `AMENT_PREFIX_PATH`), then the
    /// shipped interfaces.
    #[must_use]
    pub fn new(folders: &[PathBuf]) -> Self {
        let mut all = folders.to_vec();
        if let Some(path) = std::env::var_os(TYPES_PATH_VAR) {
            all.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
        }
        if let Some(path) = std::env::var_os("AMENT_PREFIX_PATH") {
            all.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()).map(|p| p.join("share")));
        }
        Self::with_folders(all)
    }

    /// Exactly `folders`, then the shipped interfaces: no environment.
    #[must_use]
    pub fn with_folders(folders: Vec<PathBuf>) -> Self {
        Self { folders, parsed: Mutex::default() }
    }

    /// Adds definitions read elsewhere (a recording's schema): they stand before any folder's.
    pub fn insert(&self, messages: impl IntoIterator<Item = Arc<Message>>) {
        let mut cache = self.cache();
        for m in messages {
            cache.insert(m.name.clone(), m);
        }
    }

    /// The folders searched before the shipped interfaces, in order.
    #[must_use]
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// The message `name` (a `.msg` type, or a part of a service or action such as
    /// `std_srvs/srv/SetBool_Request`).
    ///
    /// # Errors
    /// The type is defined nowhere, or its file has a mistake.
    pub fn message(&self, name: &TypeName) -> Result<Arc<Message>, TypesError> {
        if let Some(m) = self.cache().get(name) {
            return Ok(m.clone());
        }
        let stem = name.stem();
        let Some((text, origin)) = self.find(&stem)? else {
            return Err(self.unknown(name.clone(), None));
        };
        let file = match &origin {
            Origin::File(path) => path.display().to_string(),
            Origin::Shipped => format!("{}/{} (shipped with nerve)", stem.package, stem.file()),
        };
        let mut messages = parse_file(&stem, &text, &file)?;
        messages.extend(crate::composite::derived(&stem));
        let mut cache = self.cache();
        for m in messages {
            cache.entry(m.name.clone()).or_insert_with(|| Arc::new(m));
        }
        let found = cache.get(name).cloned();
        drop(cache);
        // A part the file does not have (`SetBool_Goal`).
        found.ok_or_else(|| self.unknown(name.clone(), None))
    }

    /// The parts of a service (request, response) or action (goal, result, feedback), or the
    /// message itself for a `.msg` type.
    ///
    /// # Errors
    /// As [`Registry::message`].
    pub fn parts(&self, name: &TypeName) -> Result<Vec<Arc<Message>>, TypesError> {
        parts(name.kind)
            .iter()
            .map(|part| self.message(&if part.is_empty() { name.clone() } else { name.part(part) }))
            .collect()
    }

    /// `name` and every message it contains, each once, contained ones first: what a
    /// complete description of the type needs. Checks that every field's type exists.
    ///
    /// # Errors
    /// A type defined nowhere (naming the field that needs it), a file with a mistake, or a
    /// message that contains itself.
    pub fn resolve(&self, name: &TypeName) -> Result<Vec<Arc<Message>>, TypesError> {
        let mut done = Vec::new();
        self.visit(&self.message(name)?, &mut Vec::new(), &mut done)?;
        Ok(done)
    }

    fn visit(&self, m: &Arc<Message>, path: &mut Vec<String>, done: &mut Vec<Arc<Message>>) -> Result<(), TypesError> {
        if done.iter().any(|d| d.name == m.name) {
            return Ok(());
        }
        for field in &m.fields {
            let BaseType::Message(nested) = &field.ty.base else { continue };
            let needed_by = format!("{}.{}", m.name, field.name);
            if *nested == m.name || path.iter().any(|p| p.starts_with(&format!("{nested}."))) {
                path.push(needed_by);
                return Err(TypesError::Cycle { name: nested.clone(), chain: path.join(" -> ") });
            }
            let inner = self.message(nested).map_err(|e| match e {
                TypesError::Unknown(mut unknown) => {
                    unknown.needed_by.get_or_insert_with(|| needed_by.clone());
                    TypesError::Unknown(unknown)
                }
                other => other,
            })?;
            path.push(needed_by);
            self.visit(&inner, path, done)?;
            path.pop();
        }
        done.push(m.clone());
        Ok(())
    }

    /// Every type defined, by name, with where its definition comes from (the first of each).
    ///
    /// # Errors
    /// A folder that exists but cannot be listed.
    pub fn list(&self) -> Result<BTreeMap<TypeName, Origin>, TypesError> {
        let mut found = BTreeMap::new();
        for folder in &self.folders {
            for (package, root) in packages_in(folder)? {
                for kind in [Kind::Msg, Kind::Srv, Kind::Action] {
                    let dir = root.join(kind.as_str());
                    let Ok(entries) = std::fs::read_dir(&dir) else { continue };
                    for entry in entries.flatten() {
                        let path = entry.path();
                        if let Some(name) = type_of_file(&package, kind, &path) {
                            found.entry(name).or_insert(Origin::File(path));
                        }
                    }
                }
            }
        }
        for package in SHIPPED.dirs() {
            let name = package.path().to_string_lossy().into_owned();
            for kind in [Kind::Msg, Kind::Srv, Kind::Action] {
                for file in package.get_dir(package.path().join(kind.as_str())).map(Dir::files).into_iter().flatten() {
                    if let Some(t) = type_of_file(&name, kind, file.path()) {
                        found.entry(t).or_insert(Origin::Shipped);
                    }
                }
            }
        }
        Ok(found)
    }

    /// Where the definition of `name` comes from (the file of its service or action for a
    /// part); `None` when no folder defines it.
    ///
    /// # Errors
    /// A definition file that exists but cannot be read.
    pub fn origin(&self, name: &TypeName) -> Result<Option<Origin>, TypesError> {
        Ok(self.find(&name.stem())?.map(|(_, origin)| origin))
    }

    fn find(&self, stem: &TypeName) -> Result<Option<(String, Origin)>, TypesError> {
        let relative = stem.file();
        for folder in &self.folders {
            let own = folder.file_name().is_some_and(|n| n == stem.package.as_str()).then(|| folder.join(&relative));
            for path in [Some(folder.join(&stem.package).join(&relative)), own].into_iter().flatten() {
                match std::fs::read_to_string(&path) {
                    Ok(text) => return Ok(Some((text, Origin::File(path)))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(TypesError::Read { path, source }),
                }
            }
        }
        let shipped = SHIPPED.get_file(format!("{}/{relative}", stem.package));
        Ok(shipped.and_then(|f| f.contents_utf8()).map(|text| (text.to_owned(), Origin::Shipped)))
    }

    pub(crate) fn unknown(&self, name: TypeName, needed_by: Option<String>) -> TypesError {
        // Listing every folder costs a few milliseconds, paid only on this error path.
        let known: Vec<String> =
            self.list().map(|all| all.keys().map(ToString::to_string).collect()).unwrap_or_default();
        let given = name.to_string();
        let suggestion = crate::nearest(&given, known.iter().map(String::as_str)).and_then(|s| TypeName::parse(s).ok());
        TypesError::Unknown(Box::new(UnknownType { name, needed_by, searched: self.folders.clone(), suggestion }))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<TypeName, Arc<Message>>> {
        self.parsed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The packages of a folder: itself when it has interface folders, else its subfolders.
fn packages_in(folder: &Path) -> Result<Vec<(String, PathBuf)>, TypesError> {
    let has_interfaces = |dir: &Path| ["msg", "srv", "action"].iter().any(|k| dir.join(k).is_dir());
    if has_interfaces(folder) {
        let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(vec![(name, folder.to_owned())]);
    }
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(TypesError::Read { path: folder.to_owned(), source }),
    };
    let mut packages: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| has_interfaces(p))
        .filter_map(|p| Some((p.file_name()?.to_str()?.to_owned(), p)))
        .filter(|(name, _)| is_package_name(name))
        .collect();
    packages.sort();
    Ok(packages)
}

fn type_of_file(package: &str, kind: Kind, path: &Path) -> Option<TypeName> {
    if path.extension()? != kind.as_str() {
        return None;
    }
    let name = path.file_stem()?.to_str()?;
    is_type_name(name).then(|| TypeName { package: package.to_owned(), kind, name: name.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> TypeName {
        TypeName::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn ships_the_common_interfaces() -> Result<(), TypesError> {
        let registry = Registry::with_folders(Vec::new());
        let all = registry.list()?;
        for package in [
            "std_msgs",
            "builtin_interfaces",
            "geometry_msgs",
            "sensor_msgs",
            "nav_msgs",
            "tf2_msgs",
            "visualization_msgs",
            "std_srvs",
            "action_msgs",
            "unique_identifier_msgs",
            "diagnostic_msgs",
        ] {
            assert!(all.keys().any(|t| t.package == package), "{package} is not shipped");
        }
        // Every shipped definition parses and refers only to shipped types.
        for (t, origin) in &all {
            assert_eq!(*origin, Origin::Shipped);
            for part in registry.parts(t)? {
                registry.resolve(&part.name)?;
            }
        }
        let image = registry.resolve(&name("sensor_msgs/Image"))?;
        let names: Vec<String> = image.iter().map(|m| m.name.to_string()).collect();
        assert_eq!(names, ["builtin_interfaces/msg/Time", "std_msgs/msg/Header", "sensor_msgs/msg/Image"]);
        Ok(())
    }

    #[test]
    fn a_folder_of_packages_or_a_package_folder_comes_before_the_shipped_ones() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = std::env::temp_dir().join(format!("nerve-types-{}", std::process::id()));
        let holder = dir.join("holder");
        std::fs::create_dir_all(holder.join("my_msgs/msg"))?;
        std::fs::write(holder.join("my_msgs/msg/Blob.msg"), "std_msgs/Header header\nuint8[] data\n")?;
        std::fs::create_dir_all(dir.join("std_msgs/msg"))?;
        std::fs::write(dir.join("std_msgs/msg/Empty.msg"), "bool replaced\n")?;
        let registry = Registry::with_folders(vec![holder.clone(), dir.join("std_msgs")]);
        assert_eq!(registry.message(&name("my_msgs/Blob"))?.fields.len(), 2);
        assert_eq!(registry.message(&name("std_msgs/Empty"))?.fields[0].name, "replaced");
        let all = registry.list()?;
        assert_eq!(all[&name("my_msgs/Blob")], Origin::File(holder.join("my_msgs/msg/Blob.msg")));
        assert_eq!(all[&name("std_msgs/msg/String")], Origin::Shipped);
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    #[test]
    fn an_unknown_or_self_containing_type_is_named_with_where_it_was_looked_for()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("nerve-types-bad-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bad_msgs/msg"))?;
        std::fs::write(dir.join("bad_msgs/msg/Outer.msg"), "Inner inner\n")?;
        std::fs::write(dir.join("bad_msgs/msg/Inner.msg"), "Missing gone\n")?;
        std::fs::write(dir.join("bad_msgs/msg/Loop.msg"), "Back back\n")?;
        std::fs::write(dir.join("bad_msgs/msg/Back.msg"), "Loop again\n")?;
        let registry = Registry::with_folders(vec![dir.clone()]);
        let e = registry.resolve(&name("bad_msgs/Outer")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("unknown type `bad_msgs/msg/Missing` (the type of bad_msgs/msg/Inner.gone)")
                && e.contains(&dir.display().to_string()),
            "{e}"
        );
        let e = registry.resolve(&name("bad_msgs/Loop")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("`bad_msgs/msg/Loop` contains itself: bad_msgs/msg/Loop.back -> bad_msgs/msg/Back.again"),
            "{e}"
        );
        let e = registry.message(&name("nope_msgs/Thing")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("unknown type `nope_msgs/msg/Thing`; looked in"), "{e}");
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
