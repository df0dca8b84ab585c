//! Tests: what a newcomer installs. The build's check for the `wasm32-wasip2` target (with a
//! fake `rustc` and `rustup` over a fake sysroot), the bundled skills embedded in the binary
//! and served from anywhere, shell completions and the man page, and help text that explains
//! itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

use crate::common::{bin, bundled_skills, stdout};

#[allow(dead_code)]
#[path = "../host/build/wasm_target.rs"]
mod wasm_target;

use wasm_target::{Outcome, Tools, ensure};

const TARGET: &str = "wasm32-wasip2";

// ---- the wasm32-wasip2 target ----

/// Copy `from` to `to` (mode 755) by a `cp` process, not by this one: a file this process has
/// open for writing can be inherited by a child that another test forks at that moment, until
/// that child execs, and running the file then fails with "Text file busy" (`ETXTBSY`).
fn copy_executable(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let status = Command::new("cp")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(status.success(), "cp {} {}", from.display(), to.display());
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake toolchain: `<dir>/toolchains/<name>` as sysroot, a `rustc` printing it, and a
/// `rustup` that logs its arguments to `<dir>/rustup.log` and then does what `script` says.
struct Fake {
    dir: TempDir,
    sysroot: PathBuf,
}

impl Fake {
    fn new(name: &str, rustup_script: &str) -> Self {
        let dir = TempDir::new().unwrap();
        let sysroot = dir.path().join("toolchains").join(name);
        std::fs::create_dir_all(sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/lib")).unwrap();
        let fake = Self { dir, sysroot };
        fake.script(
            "rustc",
            &format!("#!/bin/sh\necho '{}'\n", fake.sysroot.display()),
        );
        fake.script(
            "rustup",
            &format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\n{rustup_script}\n",
                fake.dir.path().join("rustup.log").display()
            ),
        );
        fake
    }

    fn script(&self, name: &str, text: &str) {
        let source = self.dir.path().join(format!("{name}.txt"));
        std::fs::write(&source, text).unwrap();
        copy_executable(&source, &self.dir.path().join(name));
    }

    fn tools(&self, toolchain: Option<&str>) -> Tools {
        Tools {
            rustc: Some(self.dir.path().join("rustc").into()),
            toolchain: toolchain.map(str::to_owned),
            rustup: Some(self.dir.path().join("rustup").into()),
        }
    }

    /// What rustup was asked, one call a line.
    fn rustup_calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("rustup.log")).unwrap_or_default()
    }

    /// A rustup script that installs the target into the sysroot.
    fn installs(sysroot_of: &str) -> String {
        format!("mkdir -p '{sysroot_of}/lib/rustlib/{TARGET}/lib'")
    }
}

#[test]
fn a_present_target_needs_nothing() {
    let fake = Fake::new("1.95.0-x86_64-unknown-linux-gnu", "exit 1");
    std::fs::create_dir_all(fake.sysroot.join("lib/rustlib/wasm32-wasip2/lib")).unwrap();
    assert_eq!(ensure(TARGET, &fake.tools(None)), Ok(Outcome::Present));
    assert_eq!(fake.rustup_calls(), "");
}

#[test]
fn a_missing_target_is_installed_through_rustup_for_the_building_toolchain() {
    let name = "1.95.0-x86_64-unknown-linux-gnu";
    let fake = Fake::new(name, "");
    let sysroot = fake.sysroot.display().to_string();
    fake.script(
        "rustup",
        &format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\n{}\n",
            fake.dir.path().join("rustup.log").display(),
            Fake::installs(&sysroot)
        ),
    );
    // RUSTUP_TOOLCHAIN names the toolchain when rustup runs the build.
    let outcome = ensure(TARGET, &fake.tools(Some("1.95.0"))).unwrap();
    let Outcome::Installed(note) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        note.contains("rustup target add wasm32-wasip2 --toolchain 1.95.0"),
        "{note}"
    );
    assert_eq!(
        fake.rustup_calls(),
        "target add wasm32-wasip2 --toolchain 1.95.0\n"
    );
    assert!(fake.sysroot.join("lib/rustlib/wasm32-wasip2/lib").is_dir());

    // Without RUSTUP_TOOLCHAIN, the sysroot's folder in `toolchains/` names it.
    std::fs::remove_dir_all(fake.sysroot.join("lib/rustlib/wasm32-wasip2")).unwrap();
    assert!(matches!(
        ensure(TARGET, &fake.tools(None)),
        Ok(Outcome::Installed(_))
    ));
    assert!(
        fake.rustup_calls()
            .ends_with(&format!("target add wasm32-wasip2 --toolchain {name}\n")),
        "{}",
        fake.rustup_calls()
    );
}

#[test]
fn a_target_rustup_cannot_install_fails_with_one_line_naming_the_command() {
    let fake = Fake::new(
        "1.95.0-x86_64-unknown-linux-gnu",
        "echo 'error: could not download: network unreachable' >&2; exit 1",
    );
    let e = ensure(TARGET, &fake.tools(Some("1.95.0"))).unwrap_err();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("run `rustup target add wasm32-wasip2 --toolchain 1.95.0`"),
        "{e}"
    );
    assert!(e.contains("network unreachable"), "{e}");

    // rustup says it worked but the target is still missing: also an error.
    let fake = Fake::new("1.95.0-x86_64-unknown-linux-gnu", "exit 0");
    let e = ensure(TARGET, &fake.tools(Some("1.95.0"))).unwrap_err();
    assert!(e.contains("run `rustup target add"), "{e}");

    // No rustup at all.
    let fake = Fake::new("1.95.0-x86_64-unknown-linux-gnu", "");
    let mut tools = fake.tools(Some("1.95.0"));
    tools.rustup = Some(fake.dir.path().join("no-such-rustup").into());
    let e = ensure(TARGET, &tools).unwrap_err();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("run `rustup target add wasm32-wasip2 --toolchain 1.95.0`"),
        "{e}"
    );
}

#[test]
fn a_toolchain_outside_rustup_names_what_to_install() {
    let dir = TempDir::new().unwrap();
    let sysroot = dir.path().join("usr");
    std::fs::create_dir_all(&sysroot).unwrap();
    let fake = Fake::new("ignored", "exit 1");
    fake.script(
        "rustc",
        &format!("#!/bin/sh\necho '{}'\n", sysroot.display()),
    );
    let e = ensure(TARGET, &fake.tools(None)).unwrap_err();
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("not managed by rustup"), "{e}");
    assert!(e.contains(&sysroot.display().to_string()), "{e}");
    assert_eq!(fake.rustup_calls(), "");
}

// ---- the bundled skills, from anywhere ----

/// Run `binary` from `cwd` with an empty home and `cache` as the cache folder.
fn run_from(binary: &Path, cwd: &Path, home: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("SKILLS_MCP_CACHE_DIR", cache)
        .env("SKILLS_MCP_INDEX_CACHE", "off")
        .env_remove("SKILLS_DIR")
        .env_remove("XDG_CACHE_HOME")
        .stdin(Stdio::null())
        .output()
        .expect("run the copied binary")
}

/// Every file below `dir`, relative, with its mode.
fn files(dir: &Path, prefix: &str, out: &mut Vec<(String, u32)>) {
    use std::os::unix::fs::PermissionsExt as _;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.file_type().unwrap().is_dir() {
            files(&e.path(), &format!("{rel}/"), out);
        } else {
            out.push((rel, e.metadata().unwrap().permissions().mode() & 0o777));
        }
    }
}

#[test]
fn the_installed_binary_serves_its_bundled_skills_from_any_folder() {
    let tmp = TempDir::new().unwrap();
    let (home, cache, cwd) = (
        tmp.path().join("home"),
        tmp.path().join("cache"),
        tmp.path().join("elsewhere"),
    );
    for d in [&home, &cwd] {
        std::fs::create_dir_all(d).unwrap();
    }
    // The binary, copied away from the build tree (as `cargo install` does).
    let binary = tmp.path().join("bin/skills-mcp");
    std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
    copy_executable(Path::new(env!("CARGO_BIN_EXE_skills-mcp")), &binary);
    let source = bundled_skills();
    let source_arg = source.display().to_string();

    for args in [
        &["list", "--json"][..],
        &["search", "react authentication form", "--json"],
        &["get", "create a react authentication component with login"],
        &["asset", "ui/react/auth", "assets/auth-flow.svg"],
    ] {
        let installed = run_from(&binary, &cwd, &home, &cache, args);
        let mut from_source = vec!["--no-default-roots", "--root", source_arg.as_str()];
        from_source.extend_from_slice(args);
        let reference = bin().args(&from_source).output().unwrap();
        assert!(installed.status.success(), "{args:?}: {installed:?}");
        assert_eq!(stdout(&installed), stdout(&reference), "{args:?}");
        assert!(!stdout(&installed).is_empty());
    }

    // The served root is the unpacked copy in the cache folder, not the source tree.
    let validate = run_from(&binary, &cwd, &home, &cache, &["validate"]);
    assert!(validate.status.success(), "{validate:?}");
    let report = stdout(&validate);
    let unpacked: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("bundled-")
        })
        .collect();
    assert_eq!(unpacked.len(), 1, "{unpacked:?}");
    let unpacked = &unpacked[0];
    assert!(report.contains(&unpacked.display().to_string()), "{report}");
    assert!(!report.contains(&source_arg), "{report}");

    // The same files, read-only.
    let (mut got, mut want) = (Vec::new(), Vec::new());
    files(unpacked, "", &mut got);
    files(&source, "", &mut want);
    let names = |v: &[(String, u32)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    got.sort();
    want.sort();
    assert_eq!(names(&got), names(&want));
    assert!(got.iter().all(|(_, mode)| mode & 0o222 == 0), "{got:?}");
    for (rel, _) in &got {
        assert_eq!(
            std::fs::read(unpacked.join(rel)).unwrap(),
            std::fs::read(source.join(rel)).unwrap(),
            "{rel}"
        );
    }

    // A copy that was changed, or grew a file, is unpacked again before it is served.
    use std::os::unix::fs::PermissionsExt as _;
    let (victim, _) = got
        .iter()
        .find(|(n, _)| n.ends_with("SKILL.md") || n.ends_with(".md"))
        .unwrap();
    std::fs::set_permissions(unpacked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim_path = unpacked.join(victim);
    std::fs::set_permissions(
        victim_path.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&victim_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(
        &victim_path,
        "---\ndescription: tampered\nkeywords: [x]\n---\n",
    )
    .unwrap();
    std::fs::write(
        unpacked.join("extra.md"),
        "---\ndescription: extra\nkeywords: [y]\n---\n",
    )
    .unwrap();
    let again = run_from(&binary, &cwd, &home, &cache, &["list", "--json"]);
    let reference = bin()
        .args([
            "--no-default-roots",
            "--root",
            source_arg.as_str(),
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&again), stdout(&reference));
    assert_eq!(
        std::fs::read(&victim_path).unwrap(),
        std::fs::read(source.join(victim)).unwrap()
    );
    assert!(!unpacked.join("extra.md").exists());
}

// ---- completions, man page, help text ----

const VERBS: [&str; 10] = [
    "serve",
    "search",
    "get",
    "list",
    "asset",
    "validate",
    "example-config",
    "run",
    "completions",
    "man",
];

#[test]
fn completions_for_every_shell_name_the_verbs() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}: {o:?}");
        let text = stdout(&o);
        assert!(text.contains("skills-mcp"), "{shell}");
        for verb in VERBS {
            assert!(text.contains(verb), "{shell} completion lacks {verb}");
        }
        // Each shell spells a long option its own way (fish: `-l log-level`).
        assert!(
            text.contains("--log-level") || text.contains("-l log-level"),
            "{shell}"
        );
    }
    let o = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_man_page_is_roff_and_names_every_verb() {
    let o = bin().arg("man").output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let page = stdout(&o);
    assert!(
        page.starts_with(".ie") || page.starts_with(".TH"),
        "{}",
        &page[..80.min(page.len())]
    );
    assert!(
        page.lines().any(|l| l.starts_with(".TH skills-mcp")),
        "{page}"
    );
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS"] {
        assert!(page.contains(section), "{section}");
    }
    for verb in VERBS {
        assert!(
            page.contains(&format!("skills\\-mcp\\-{}", verb.replace('-', "\\-")))
                || page.contains(verb),
            "{verb}"
        );
    }
}

#[test]
fn help_text_and_man_page_name_no_seed_or_spec_section() {
    let mut texts = vec![stdout(&bin().arg("man").output().unwrap())];
    texts.push(stdout(&bin().arg("--help").output().unwrap()));
    for verb in VERBS {
        texts.push(stdout(&bin().args([verb, "--help"]).output().unwrap()));
    }
    for text in &texts {
        assert!(!text.is_empty());
        let lower = text.to_lowercase();
        for word in ["seed", "section 5", "8.1", "8.2", "8.3", "8.4", "spec's"] {
            assert!(!lower.contains(word), "{word:?} in:\n{text}");
        }
    }
}

// ---- the system services some tests need (common::require_service) ----

/// The tests of this binary that need a service, as the harness names them.
const NEEDS_POSTGRES: &str = "usage::two_servers_on_one_postgres_under_load_give_exact_counts";
const NEEDS_NGINX: &str = "fleet::a_fleet_behind_nginx_restarts_without_a_failed_request";

/// This very test binary running `tests` alone (exact names), with no service on its search
/// path (`SKILLS_MCP_TEST_SERVICE_PATH` naming an empty folder), `CI` set or not; stdout and
/// stderr into one file, in the order they were written.
fn run_without_services(tests: &[&str], ci: bool) -> (Option<i32>, String) {
    let empty = TempDir::new().unwrap();
    let log = empty.path().join("log");
    let file = std::fs::File::create(&log).unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.arg("--exact")
        .args(tests)
        .arg("--test-threads=1")
        .env(crate::common::SERVICE_PATH_VAR, empty.path().join("bin"))
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file);
    if ci {
        cmd.env("CI", "1");
    }
    let status = cmd.status().expect("run the test binary");
    (status.code(), std::fs::read_to_string(&log).unwrap())
}

#[test]
fn a_test_without_its_service_is_skipped_aloud_with_the_install_command() {
    let (code, out) = run_without_services(&[NEEDS_POSTGRES, NEEDS_NGINX], false);
    assert_eq!(code, Some(0), "{out}");
    // On the real stderr (the harness swallows `eprintln!` of a passing test), naming the test,
    // why, and the command.
    assert!(
        out.contains(&format!(
            "SKIPPED {NEEDS_POSTGRES}: PostgreSQL 15 or later is needed (no `pg_config` on the search path); install: apt-get install postgresql\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "SKIPPED {NEEDS_NGINX}: nginx is needed (no `nginx` on the search path); install: apt-get install nginx-light\n"
        )),
        "{out}"
    );
    assert!(out.contains("test result: ok. 2 passed"), "{out}");
    // Said again at the end, after the harness's summary, with one command for all.
    let result = out.find("test result:").unwrap();
    let summary = out
        .find("SKIPPED 2 test(s) for want of a system service")
        .unwrap_or_else(|| panic!("no summary: {out}"));
    assert!(summary > result, "{out}");
    assert!(
        out[summary..].contains("install: apt-get install nginx-light postgresql\n"),
        "{out}"
    );
    for (test, needs) in [
        (NEEDS_NGINX, "nginx"),
        (NEEDS_POSTGRES, "PostgreSQL 15 or later"),
    ] {
        assert!(
            out[summary..].contains(&format!("  {test}: needs {needs}\n")),
            "{out}"
        );
    }
}

#[test]
fn a_test_without_its_service_fails_when_ci_is_set() {
    let (code, out) = run_without_services(&[NEEDS_POSTGRES], true);
    assert_eq!(code, Some(101), "{out}");
    assert!(
        out.contains(&format!(
            "SKIPPED {NEEDS_POSTGRES}: PostgreSQL 15 or later is needed (no `pg_config` on the search path); install: apt-get install postgresql (CI is set: a missing service fails the run)"
        )),
        "{out}"
    );
    assert!(
        out.contains("test result: FAILED. 0 passed; 1 failed"),
        "{out}"
    );
    assert!(!out.contains("for want of a system service"), "{out}");
}

#[test]
fn postgres_is_found_by_pg_config_version_15_or_later_with_its_server_tools() {
    let dir = TempDir::new().unwrap();
    let bindir = dir.path().join("pg/bin");
    std::fs::create_dir_all(&bindir).unwrap();
    let fake = |version: &str| {
        let source = dir.path().join("pg_config.txt");
        std::fs::write(
            &source,
            format!(
                "#!/bin/sh\necho 'PostgreSQL {version}'\necho '{}'\n",
                bindir.display()
            ),
        )
        .unwrap();
        let exe = dir.path().join("pg_config");
        copy_executable(&source, &exe);
        crate::common::postgres_bindir(&exe)
    };
    // Only the client library: no server tools in its bindir.
    let e = fake("16.4").unwrap_err();
    assert!(e.contains("which has no `initdb`"), "{e}");
    for tool in ["initdb", "pg_ctl", "postgres"] {
        std::fs::write(bindir.join(tool), "").unwrap();
    }
    let e = fake("14.13 (Debian 14.13-1)").unwrap_err();
    assert!(
        e.contains("says \"PostgreSQL 14.13 (Debian 14.13-1)\""),
        "{e}"
    );
    let e = fake("devel").unwrap_err();
    assert!(e.contains("says \"PostgreSQL devel\""), "{e}");
    // As root, initdb runs as the `postgres` user: without one PostgreSQL is not usable.
    let runnable = !rustix::process::geteuid().is_root()
        || Command::new("id")
            .args(["-u", "postgres"])
            .output()
            .is_ok_and(|o| o.status.success());
    for version in ["15.20 (Debian 15.20-0+deb12u1)", "17.2"] {
        match fake(version) {
            Ok(found) => assert!(runnable && found == bindir, "{}", found.display()),
            Err(e) => assert!(!runnable && e.contains("no `postgres` user"), "{e}"),
        }
    }
}
