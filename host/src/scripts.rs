//! Server-side script execution in a sandbox: no shell, clean environment, process-group timeout, capped output (seed 004 sections 8.4 and 12.2).
