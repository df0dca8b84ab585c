//! Configuration: defaults, config.yaml, environment variables and flags, with a documented precedence.
