//! The `nerve` command.

fn main() {
    std::process::exit(nerve_cli::main(std::env::args_os()));
}
