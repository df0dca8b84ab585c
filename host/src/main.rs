fn main() -> std::process::ExitCode {
    skills_mcp::cli::main()
}
