//! `nerve --include-dir | --lib-dir | --cmake-dir | --rust-dir`: where the C library, its headers
//! and its CMake package are, for building C and C++ nodes
//! (`cmake -Dnerve_DIR="$(nerve --cmake-dir)"`), and the Rust crates Rust nodes build on.
//!
//! They are installed with the Python package (`pip install .`), whose `nerve` command says
//! where that is: a `nerve` built with cargo has no package around it.

use std::path::PathBuf;

use anyhow::Context;

/// Set by the Python package's `nerve` command to the folder of the installed package.
const PACKAGE_VAR: &str = "NERVE_PACKAGE_DIR";

/// Which folder to print.
#[derive(Debug, Clone, Copy, clap::Args)]
#[group(multiple = false)]
pub(crate) struct SdkArgs {
    /// Print the folder of the C headers (nerve.h, node_api.h) and exit.
    #[arg(long)]
    include_dir: bool,
    /// Print the folder of the C library (libnerve.so, pkgconfig/nerve.pc) and exit.
    #[arg(long)]
    lib_dir: bool,
    /// Print the folder of the CMake package (`find_package(nerve)`, target `nerve::nerve`) and exit.
    #[arg(long)]
    cmake_dir: bool,
    /// Print the folder of the Rust crates (`nerve-node = { path = "DIR/crates/nerve-node" }`) and exit.
    #[arg(long)]
    rust_dir: bool,
}

impl SdkArgs {
    /// The folder asked for, below the installed package; `None` when none was asked for.
    pub(crate) fn folder(self) -> Option<&'static str> {
        match (self.include_dir, self.lib_dir, self.cmake_dir, self.rust_dir) {
            (true, ..) => Some("include"),
            (_, true, ..) => Some("lib"),
            (_, _, true, _) => Some("cmake"),
            (.., true) => Some("rust"),
            _ => None,
        }
    }
}

/// The Rust crates installed with the Python package (a Cargo workspace: `crates/nerve-node`
/// and what it uses, and `Cargo.lock`), if this `nerve` is that package's.
pub(crate) fn installed_rust() -> Option<PathBuf> {
    let rust = PathBuf::from(std::env::var_os(PACKAGE_VAR)?).join("rust");
    rust.join("crates/nerve-node/Cargo.toml").is_file().then_some(rust)
}

/// Prints folder `sub` of the installed package.
pub(crate) fn print(sub: &str) -> anyhow::Result<i32> {
    let package = std::env::var_os(PACKAGE_VAR).map(PathBuf::from).context(
        "the C library and headers come with the Python package: install it (`pip install .`) and run its `nerve`",
    )?;
    let folder = package.join(sub);
    anyhow::ensure!(
        folder.is_dir(),
        "{} is missing: the package at {} was installed without its C library; reinstall it with `pip install .`",
        folder.display(),
        package.display()
    );
    println!("{}", folder.display());
    Ok(0)
}
