//! `nerve types list|show|rust`: the message, service and action types this machine knows, and
//! Rust code for them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;
use nerve_types::{Kind, NODE_ROOT, Registry, TypeName, arrow_type, cpp_headers, rust_code, type_hash};

/// `nerve types`.
#[derive(Debug, clap::Args)]
pub struct TypesArgs {
    #[command(subcommand)]
    command: TypesCommand,
    /// A folder of interface packages (or one package) searched first, as a dataflow's
    /// `types:`; may be repeated.
    #[arg(long = "types", value_name = "DIR", global = true)]
    folders: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum TypesCommand {
    /// Every type found, with where it is defined: the `--types` folders, NERVE_TYPES_PATH,
    /// installed ROS 2 packages (AMENT_PREFIX_PATH), then the interfaces nerve ships.
    List {
        /// Only this package's types.
        package: Option<String>,
    },
    /// One type: where it is defined, its fields and constants, its Arrow type and ROS 2 hash.
    Show {
        /// `package/msg/Name` or `package/Name` (also `package/srv/Name`, `package/action/Name`).
        name: String,
    },
    /// Rust code for packages of your own: a struct per message, service and action part, sent
    /// with `Node::send_message` and read with `Type::from_arrow` (the packages nerve ships are
    /// in `nerve_node::msg` already).
    Rust {
        /// The packages (`my_msgs`); the packages they use that nerve does not ship come too.
        #[arg(required = true)]
        packages: Vec<String>,
        /// Where the code goes (default: standard output).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The path of the `nerve-msgs` crate in the code that includes it: `::nerve_msgs` for
        /// a crate depending on `nerve-msgs` rather than `nerve-node`.
        #[arg(long, value_name = "PATH", default_value = NODE_ROOT)]
        root: String,
    },
    /// C++17 headers for packages of your own, one per package (`my_msgs.hpp`): a struct per
    /// message, service and action part, sent with `nerve::msg::send` and read with
    /// `nerve::msg::read` (the packages nerve ships are installed: `<nerve/msg/sensor_msgs.hpp>`).
    Cpp {
        /// The packages (`my_msgs`); the packages they use that nerve does not ship come too.
        #[arg(required = true)]
        packages: Vec<String>,
        /// The folder the headers go to (created if need be).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Runs `nerve types …`.
pub fn run(args: &TypesArgs) -> anyhow::Result<i32> {
    let registry = Registry::new(&args.folders);
    let mut out = std::io::stdout().lock();
    match &args.command {
        TypesCommand::List { package } => {
            let all = registry.list()?;
            let shown: Vec<_> = all.iter().filter(|(t, _)| package.as_ref().is_none_or(|p| t.package == *p)).collect();
            if shown.is_empty() {
                let which = package.as_ref().map(|p| format!(" in package `{p}`")).unwrap_or_default();
                writeln!(out, "no types{which}")?;
                return Ok(1);
            }
            let width = shown.iter().map(|(t, _)| t.to_string().len()).max().unwrap_or(0);
            for (t, origin) in shown {
                writeln!(out, "{:<width$}  {origin}", t.to_string())?;
            }
        }
        TypesCommand::Show { name } => {
            let name = TypeName::parse(name)?;
            let origin = registry.origin(&name)?;
            writeln!(out, "{name}  ({})", origin.map_or_else(|| "?".to_owned(), |o| o.to_string()))?;
            // A service or action: its own hash, then each part; a message, or one part or
            // derived type of a service or action (`SetBool_Request`, `Fibonacci_SendGoal`): itself.
            let whole = name.kind != Kind::Msg && name == name.stem();
            let shown = if whole {
                // What a ROS 2 peer checks a service or action against.
                writeln!(out, "hash: {}", type_hash(&registry, &name)?)?;
                registry.parts(&name)?
            } else {
                vec![registry.message(&name)?]
            };
            for part in shown {
                if whole {
                    writeln!(out, "\n{}", part.name)?;
                }
                writeln!(out, "hash: {}", type_hash(&registry, &part.name)?)?;
                writeln!(out, "arrow: {}", arrow_type(&registry, &part.name)?)?;
                for line in part.to_string().lines() {
                    writeln!(out, "  {line}")?;
                }
            }
        }
        TypesCommand::Rust { packages, out: file, root } => {
            let code = rust_code(&registry, packages, root)?;
            match file {
                Some(path) => std::fs::write(path, code).with_context(|| format!("cannot write {}", path.display()))?,
                None => out.write_all(code.as_bytes())?,
            }
        }
        TypesCommand::Cpp { packages, out: dir } => {
            let headers = cpp_headers(&registry, packages)?;
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            for (package, text) in headers {
                let path = dir.join(format!("{package}.hpp"));
                std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
                writeln!(out, "{}", path.display())?;
            }
        }
    }
    Ok(0)
}
