//! The command line: serve, search, get, list, asset, validate and friends.

/// Entry point of the `skills-mcp` binary.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
