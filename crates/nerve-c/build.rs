//! Gives libnerve.so its soname, so programs linked against it look for `libnerve.so` on their
//! run path rather than for the path it had when they were linked.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnerve.so");
}
