//! Type names: `sensor_msgs/msg/Image`, also written `sensor_msgs/Image`.

use std::fmt;

/// The kind of interface file a type is defined in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A message (`.msg`).
    Msg,
    /// A service (`.srv`): a request and a response.
    Srv,
    /// An action (`.action`): a goal, a result and feedback.
    Action,
}

impl Kind {
    /// The folder and file extension of this kind (`msg`, `srv`, `action`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Msg => "msg",
            Self::Srv => "srv",
            Self::Action => "action",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "msg" => Some(Self::Msg),
            "srv" => Some(Self::Srv),
            "action" => Some(Self::Action),
            _ => None,
        }
    }
}

/// A full type name, `package/kind/Name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeName {
    /// The package (`sensor_msgs`).
    pub package: String,
    /// Which file kind defines it.
    pub kind: Kind,
    /// The type's own name (`Image`; `SetBool_Request` for a part of a service).
    pub name: String,
}

/// Why a string is not a type name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a type name ({why}); write `package/msg/Name` or `package/Name`")]
pub struct NameError {
    /// The string given.
    pub name: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl TypeName {
    /// A message type of `package`.
    #[must_use]
    pub fn msg(package: &str, name: &str) -> Self {
        Self { package: package.to_owned(), kind: Kind::Msg, name: name.to_owned() }
    }

    /// Reads `package/kind/Name` or `package/Name` (a message).
    ///
    /// # Errors
    /// [`NameError`] naming what is wrong.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        let bad = |why| NameError { name: s.to_owned(), why };
        let parts: Vec<&str> = s.split('/').collect();
        let (package, kind, name) = match parts[..] {
            [package, name] => (package, Kind::Msg, name),
            [package, kind, name] => {
                (package, Kind::parse(kind).ok_or(bad("the middle part must be msg, srv or action"))?, name)
            }
            _ => return Err(bad("it needs a package and a name")),
        };
        if !is_package_name(package) {
            return Err(bad("a package name is lowercase letters, digits and `_`, starting with a letter"));
        }
        if !is_type_name(name) {
            return Err(bad("a type name starts with an uppercase letter, then letters, digits and `_`"));
        }
        Ok(Self { package: package.to_owned(), kind, name: name.to_owned() })
    }

    /// The same type's part `suffix` (`Request`, `Goal`...): `std_srvs/srv/SetBool_Request`.
    #[must_use]
    pub fn part(&self, suffix: &str) -> Self {
        Self { package: self.package.clone(), kind: self.kind, name: format!("{}_{suffix}", self.name) }
    }

    /// The message, service or action whose file defines this type: itself, or the service
    /// or action of a part (`std_srvs/srv/SetBool` for `std_srvs/srv/SetBool_Request`).
    #[must_use]
    pub fn stem(&self) -> Self {
        let name = match self.kind {
            Kind::Msg => &self.name[..],
            Kind::Srv | Kind::Action => self.name.split_once('_').map_or(&self.name[..], |(stem, _)| stem),
        };
        Self { package: self.package.clone(), kind: self.kind, name: name.to_owned() }
    }

    /// The file that defines this type, relative to a package folder (`msg/Image.msg`); a
    /// part of a service or action lives in its service's or action's file.
    #[must_use]
    pub fn file(&self) -> String {
        format!("{}/{}.{}", self.kind.as_str(), self.stem().name, self.kind.as_str())
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.package, self.kind.as_str(), self.name)
    }
}

/// ROS 2's rule for package names.
pub(crate) fn is_package_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// ROS 2's rule for type names (a part of a service or action adds `_Request` and the like).
pub(crate) fn is_type_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_spellings_and_names_what_is_wrong() -> Result<(), NameError> {
        assert_eq!(TypeName::parse("sensor_msgs/Image")?, TypeName::parse("sensor_msgs/msg/Image")?);
        assert_eq!(TypeName::parse("std_srvs/srv/SetBool")?.to_string(), "std_srvs/srv/SetBool");
        assert_eq!(TypeName::parse("std_srvs/srv/SetBool")?.part("Request").file(), "srv/SetBool.srv");
        for (bad, why) in [
            ("Image", "package and a name"),
            ("sensor_msgs/foo/Image", "msg, srv or action"),
            ("Sensor/Image", "package name"),
            ("sensor_msgs/image", "type name"),
        ] {
            let e = TypeName::parse(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(bad) && e.contains(why), "{e}");
        }
        Ok(())
    }
}
