//! A deterministic generator of large skill corpora (for the 10,000-skill benches).
//!
//! The layout mirrors the real collections: several "packs" of Agent Skills folders
//! (`packs/<pack>/skills/<name>/SKILL.md`, with `references/*.md`, `scripts/` and `assets/` in
//! some of them and a `README.md` per pack), and a hierarchical tree
//! (`_root.md`, `topics/<area>/_index.md`, `topics/<area>/<topic>/_index.md`,
//! `topics/<area>/<topic>/<leaf>.md`, with declared assets and scripts in some leaves).
//! Descriptions and bodies are drawn from a fixed word list; bodies are 1-20 KB, log-uniform
//! (median about 4.5 KB, like the real corpus's 5.8 KB). The same seed and count always give
//! the same bytes.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Bump when the output changes, so cached corpora are regenerated.
pub const GEN_VERSION: u32 = 1;

/// SplitMix64: tiny, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform in `0.0..1.0`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

/// Technical vocabulary the descriptions, keywords and bodies are drawn from.
pub const WORDS: &[&str] = &[
    "api",
    "rest",
    "graphql",
    "grpc",
    "http",
    "endpoint",
    "auth",
    "oauth",
    "jwt",
    "session",
    "token",
    "cookie",
    "cors",
    "csrf",
    "rate",
    "limit",
    "cache",
    "redis",
    "memcached",
    "cdn",
    "database",
    "postgres",
    "mysql",
    "sqlite",
    "mongodb",
    "schema",
    "migration",
    "index",
    "query",
    "transaction",
    "replication",
    "backup",
    "restore",
    "shard",
    "partition",
    "orm",
    "react",
    "vue",
    "svelte",
    "angular",
    "component",
    "hook",
    "state",
    "props",
    "router",
    "form",
    "validation",
    "accessibility",
    "layout",
    "css",
    "tailwind",
    "theme",
    "animation",
    "typescript",
    "javascript",
    "python",
    "rust",
    "golang",
    "java",
    "kotlin",
    "swift",
    "ruby",
    "php",
    "elixir",
    "scala",
    "bash",
    "shell",
    "powershell",
    "docker",
    "container",
    "image",
    "kubernetes",
    "helm",
    "terraform",
    "ansible",
    "pulumi",
    "aws",
    "gcp",
    "azure",
    "lambda",
    "serverless",
    "queue",
    "kafka",
    "rabbitmq",
    "stream",
    "event",
    "webhook",
    "cron",
    "scheduler",
    "worker",
    "pipeline",
    "ci",
    "cd",
    "github",
    "gitlab",
    "actions",
    "build",
    "release",
    "deploy",
    "rollback",
    "canary",
    "feature",
    "flag",
    "monitoring",
    "metrics",
    "logging",
    "tracing",
    "opentelemetry",
    "prometheus",
    "grafana",
    "alert",
    "incident",
    "postmortem",
    "oncall",
    "runbook",
    "security",
    "vulnerability",
    "cve",
    "dependency",
    "audit",
    "license",
    "secret",
    "vault",
    "encryption",
    "tls",
    "certificate",
    "firewall",
    "network",
    "dns",
    "proxy",
    "nginx",
    "load",
    "balancer",
    "latency",
    "throughput",
    "performance",
    "profiling",
    "benchmark",
    "memory",
    "leak",
    "cpu",
    "concurrency",
    "async",
    "thread",
    "lock",
    "deadlock",
    "test",
    "unit",
    "integration",
    "e2e",
    "playwright",
    "cypress",
    "jest",
    "pytest",
    "fixture",
    "mock",
    "coverage",
    "lint",
    "format",
    "refactor",
    "review",
    "commit",
    "branch",
    "merge",
    "rebase",
    "changelog",
    "semver",
    "documentation",
    "readme",
    "tutorial",
    "diagram",
    "markdown",
    "pdf",
    "docx",
    "spreadsheet",
    "excel",
    "csv",
    "json",
    "yaml",
    "xml",
    "parser",
    "regex",
    "template",
    "scaffold",
    "generator",
    "cli",
    "terminal",
    "tmux",
    "editor",
    "vim",
    "plugin",
    "extension",
    "sdk",
    "library",
    "package",
    "npm",
    "pip",
    "cargo",
    "maven",
    "gradle",
    "monorepo",
    "workspace",
    "microservice",
    "architecture",
    "design",
    "pattern",
    "domain",
    "ddd",
    "cqrs",
    "saga",
    "idempotency",
    "retry",
    "timeout",
    "circuit",
    "breaker",
    "resilience",
    "chaos",
    "data",
    "analytics",
    "warehouse",
    "etl",
    "dbt",
    "spark",
    "pandas",
    "numpy",
    "notebook",
    "jupyter",
    "plot",
    "chart",
    "visualization",
    "dashboard",
    "report",
    "statistics",
    "regression",
    "classification",
    "clustering",
    "model",
    "training",
    "inference",
    "llm",
    "prompt",
    "embedding",
    "vector",
    "retrieval",
    "rag",
    "agent",
    "tool",
    "evaluation",
    "dataset",
    "labeling",
    "finetune",
    "transformer",
    "tokenizer",
    "gpu",
    "cuda",
    "quantization",
    "mobile",
    "ios",
    "android",
    "flutter",
    "native",
    "push",
    "notification",
    "email",
    "sms",
    "payment",
    "stripe",
    "invoice",
    "billing",
    "subscription",
    "checkout",
    "cart",
    "order",
    "inventory",
    "shipping",
    "search",
    "ranking",
    "recommendation",
    "seo",
    "marketing",
    "campaign",
    "copywriting",
    "pitch",
    "startup",
    "market",
    "sizing",
    "pricing",
    "sales",
    "crm",
    "customer",
    "support",
    "ticket",
    "onboarding",
    "hiring",
    "interview",
    "legal",
    "contract",
    "compliance",
    "gdpr",
    "privacy",
    "policy",
    "finance",
    "budget",
    "forecast",
    "accounting",
    "tax",
    "science",
    "biology",
    "chemistry",
    "genomics",
    "protein",
    "molecule",
    "physics",
    "simulation",
    "geospatial",
    "map",
    "weather",
    "audio",
    "video",
    "transcode",
    "ffmpeg",
    "3d",
    "shader",
    "game",
    "unity",
    "godot",
    "blockchain",
    "solidity",
    "wallet",
    "slack",
    "discord",
    "jira",
    "notion",
    "linear",
    "calendar",
    "meeting",
    "summary",
    "translation",
    "localization",
    "i18n",
    "unicode",
    "timezone",
    "date",
    "currency",
];

/// Verbs for skill names and descriptions.
const VERBS: &[&str] = &[
    "build",
    "write",
    "review",
    "debug",
    "optimize",
    "migrate",
    "configure",
    "deploy",
    "test",
    "audit",
    "design",
    "generate",
    "analyze",
    "monitor",
    "document",
    "refactor",
    "secure",
    "scale",
    "automate",
    "validate",
    "convert",
    "summarize",
    "profile",
    "scaffold",
    "plan",
];

/// What was generated.
#[derive(Debug, Clone, Copy, Default)]
pub struct GenStats {
    pub skills: usize,
    pub agent_skills: usize,
    pub hierarchical: usize,
    pub files: usize,
    pub bytes: u64,
}

/// Generates (once) a corpus of `count` skills under `base` and returns its folder.
///
/// The corpus goes to `base/gen-<count>-s<seed>-v<GEN_VERSION>`; it is built in a temporary
/// sibling folder and renamed into place, so concurrent runs never see a half-written corpus.
pub fn ensure_corpus(base: &Path, count: usize, seed: u64) -> io::Result<PathBuf> {
    let dir = base.join(format!("gen-{count}-s{seed}-v{GEN_VERSION}"));
    if dir.is_dir() {
        return Ok(dir);
    }
    fs::create_dir_all(base)?;
    let tmp = base.join(format!(
        ".tmp-gen-{count}-s{seed}-v{GEN_VERSION}-{}",
        std::process::id()
    ));
    if tmp.exists() {
        fs::remove_dir_all(&tmp)?;
    }
    let started = std::time::Instant::now();
    let stats = generate(&tmp, count, seed)?;
    match fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another process won the race: keep its copy.
        Err(_) if dir.is_dir() => fs::remove_dir_all(&tmp)?,
        Err(e) => return Err(e),
    }
    eprintln!(
        "generated {} skills ({} Agent Skills, {} hierarchical; {} files, {:.1} MB) in {} in {:.1} s",
        stats.skills,
        stats.agent_skills,
        stats.hierarchical,
        stats.files,
        stats.bytes as f64 / 1e6,
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(dir)
}

struct Writer {
    root: PathBuf,
    stats: GenStats,
}

impl Writer {
    fn write(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, bytes)?;
        self.stats.files += 1;
        self.stats.bytes += bytes.len() as u64;
        Ok(())
    }
}

/// Writes a corpus of exactly `count` skills into `root` (created; must not exist).
pub fn generate(root: &Path, count: usize, seed: u64) -> io::Result<GenStats> {
    fs::create_dir_all(root)?;
    let mut rng = Rng::new(seed);
    let mut w = Writer {
        root: root.to_owned(),
        stats: GenStats::default(),
    };

    // 70% Agent Skills folders, 30% hierarchical files (category nodes included).
    let hier_target = count * 3 / 10;
    let agent_target = count - hier_target;

    // Hierarchical tree: _root.md, then areas of topics of leaves.
    let mut hier = 0usize;
    if hier_target > 0 {
        let text = skill_md(&mut rng, None, None, &[], &[], "Global rules");
        w.write("_root.md", text.as_bytes())?;
        hier += 1;
    }
    let mut area_no = 0usize;
    while hier < hier_target {
        let area = format!("{}-{area_no}", rng.pick(WORDS));
        area_no += 1;
        let kw = keywords(&mut rng);
        let text = skill_md(&mut rng, None, Some(&kw), &[], &[], &area);
        w.write(&format!("topics/{area}/_index.md"), text.as_bytes())?;
        hier += 1;
        let topics = rng.range(3, 8);
        for t in 0..topics {
            if hier >= hier_target {
                break;
            }
            let topic = format!("{}-{t}", rng.pick(WORDS));
            // Some category nodes have no keywords (allowed for _index.md).
            let kw = if rng.chance(0.3) {
                Vec::new()
            } else {
                keywords(&mut rng)
            };
            let text = skill_md(&mut rng, None, Some(&kw), &[], &[], &topic);
            w.write(&format!("topics/{area}/{topic}/_index.md"), text.as_bytes())?;
            hier += 1;
            let leaves = rng.range(4, 14);
            for l in 0..leaves {
                if hier >= hier_target {
                    break;
                }
                let leaf = format!("{}-{}-{l}", rng.pick(VERBS), rng.pick(WORDS));
                let dir = format!("topics/{area}/{topic}/{leaf}");
                let mut assets = Vec::new();
                let mut scripts = Vec::new();
                if rng.chance(0.25) {
                    let name = format!("assets/{}.json", rng.pick(WORDS));
                    let body = asset_json(&mut rng);
                    w.write(&format!("{dir}/{name}"), body.as_bytes())?;
                    assets.push(name);
                }
                if rng.chance(0.15) {
                    let name = format!("scripts/{}.sh", rng.pick(VERBS));
                    let body = script_sh(&mut rng);
                    w.write(&format!("{dir}/{name}"), body.as_bytes())?;
                    scripts.push(name);
                }
                let kw = keywords(&mut rng);
                let text = skill_md(&mut rng, None, Some(&kw), &assets, &scripts, &leaf);
                w.write(&format!("{dir}.md"), text.as_bytes())?;
                hier += 1;
            }
        }
    }
    w.stats.hierarchical = hier;

    // Agent Skills packs of 150-600 skills each.
    let mut agent = 0usize;
    let mut pack_no = 0usize;
    while agent < agent_target {
        let pack = format!("{}__{}-skills", rng.pick(WORDS), rng.pick(WORDS));
        let pack = format!("{pack}-{pack_no}");
        pack_no += 1;
        let readme = format!(
            "# {pack}\n\nA collection of skills.\n\n{}\n",
            paragraph(&mut rng, 60)
        );
        w.write(&format!("packs/{pack}/README.md"), readme.as_bytes())?;
        w.write(
            &format!("packs/{pack}/LICENSE"),
            b"MIT License\n\nPermission is hereby granted, free of charge...\n",
        )?;
        let size = rng.range(150, 600).min(agent_target - agent);
        for s in 0..size {
            let name = format!(
                "{}-{}-{}-{s}",
                rng.pick(VERBS),
                rng.pick(WORDS),
                rng.pick(WORDS)
            );
            let dir = format!("packs/{pack}/skills/{name}");
            if rng.chance(0.3) {
                let r = format!("# Reference\n\n{}\n", {
                    let size = rng_size(&mut rng, 1024, 8 * 1024);
                    body(&mut rng, size)
                });
                w.write(
                    &format!("{dir}/references/{}.md", rng.pick(WORDS)),
                    r.as_bytes(),
                )?;
            }
            if rng.chance(0.2) {
                let body = script_sh(&mut rng);
                w.write(
                    &format!("{dir}/scripts/{}.py", rng.pick(VERBS)),
                    body.as_bytes(),
                )?;
            }
            if rng.chance(0.1) {
                let body = asset_json(&mut rng);
                w.write(
                    &format!("{dir}/assets/{}.json", rng.pick(WORDS)),
                    body.as_bytes(),
                )?;
            }
            if rng.chance(0.05) {
                // A small binary asset.
                let bytes: Vec<u8> = (0..rng.range(256, 4096))
                    .map(|_| rng.next_u64() as u8)
                    .collect();
                w.write(&format!("{dir}/assets/logo.png"), &bytes)?;
            }
            let text = skill_md(&mut rng, Some(&name), None, &[], &[], &name);
            w.write(&format!("{dir}/SKILL.md"), text.as_bytes())?;
            agent += 1;
        }
    }
    w.stats.agent_skills = agent;
    w.stats.skills = agent + hier;
    Ok(w.stats)
}

/// Log-uniform size in `lo..=hi` bytes.
fn rng_size(rng: &mut Rng, lo: usize, hi: usize) -> usize {
    let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
    (l + (h - l) * rng.unit()).exp() as usize
}

fn keywords(rng: &mut Rng) -> Vec<String> {
    let n = rng.range(3, 7);
    let mut kw: Vec<String> = Vec::with_capacity(n);
    while kw.len() < n {
        let w = rng.pick(WORDS);
        if !kw.iter().any(|k| k == w) {
            kw.push(w.to_owned());
        }
    }
    kw
}

fn description(rng: &mut Rng) -> String {
    let mut d = String::new();
    let _ = write!(
        d,
        "{} {} {} for {}",
        capitalise(rng.pick(VERBS)),
        rng.pick(WORDS),
        rng.pick(WORDS),
        rng.pick(WORDS)
    );
    for _ in 0..rng.range(4, 16) {
        d.push(' ');
        d.push_str(rng.pick(WORDS));
    }
    let _ = write!(
        d,
        ". Use when the user asks to {} a {} {} or mentions {}.",
        rng.pick(VERBS),
        rng.pick(WORDS),
        rng.pick(WORDS),
        rng.pick(WORDS)
    );
    d
}

fn capitalise(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn paragraph_in(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let words = rng.range(lo, hi);
    paragraph(rng, words)
}

fn paragraph(rng: &mut Rng, words: usize) -> String {
    let mut p = String::with_capacity(words * 8);
    let mut sentence = 0;
    for i in 0..words {
        let w = rng.pick(WORDS);
        if sentence == 0 {
            p.push_str(&capitalise(w));
        } else {
            p.push_str(w);
        }
        sentence += 1;
        if sentence > 6 && rng.chance(0.15) || i + 1 == words {
            p.push_str(". ");
            sentence = 0;
        } else {
            p.push(' ');
        }
    }
    p.truncate(p.trim_end().len());
    p
}

/// A Markdown body of about `size` bytes: headings, paragraphs, lists and code blocks.
fn body(rng: &mut Rng, size: usize) -> String {
    let mut b = String::with_capacity(size + 512);
    while b.len() < size {
        let _ = writeln!(
            b,
            "## {} {}\n",
            capitalise(rng.pick(VERBS)),
            rng.pick(WORDS)
        );
        match rng.below(4) {
            0 => {
                for _ in 0..rng.range(3, 7) {
                    let _ = writeln!(b, "- {}", paragraph_in(rng, 5, 16));
                }
                b.push('\n');
            }
            1 => {
                let _ = writeln!(
                    b,
                    "```bash\n{} --{} {}\n{} {} | {}\n```\n",
                    rng.pick(WORDS),
                    rng.pick(WORDS),
                    rng.pick(WORDS),
                    rng.pick(VERBS),
                    rng.pick(WORDS),
                    rng.pick(WORDS)
                );
                let _ = writeln!(b, "{}\n", paragraph_in(rng, 20, 60));
            }
            _ => {
                let _ = writeln!(b, "{}\n", paragraph_in(rng, 30, 120));
            }
        }
    }
    b
}

fn skill_md(
    rng: &mut Rng,
    name: Option<&str>,
    keywords: Option<&[String]>,
    assets: &[String],
    scripts: &[String],
    title: &str,
) -> String {
    let size = rng_size(rng, 1024, 20 * 1024);
    let mut s = String::with_capacity(size + 1024);
    s.push_str("---\n");
    if let Some(name) = name {
        let _ = writeln!(s, "name: {name}");
    }
    let _ = writeln!(s, "description: {}", description(rng));
    if let Some(kw) = keywords.filter(|k| !k.is_empty()) {
        let _ = writeln!(s, "keywords: [{}]", kw.join(", "));
    }
    if name.is_some() && rng.chance(0.3) {
        s.push_str("license: MIT\n");
    }
    if name.is_some() && rng.chance(0.2) {
        let _ = writeln!(
            s,
            "metadata:\n  category: {}\n  tags: [{}, {}]",
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS)
        );
    }
    if keywords.is_some() && rng.chance(0.1) {
        let _ = writeln!(s, "priority: {}", rng.range(1, 5));
    }
    if keywords.is_some() && rng.chance(0.05) {
        s.push_str("inherit: false\n");
    }
    if !assets.is_empty() {
        s.push_str("assets:\n");
        for a in assets {
            let _ = writeln!(
                s,
                "  - file: {a}\n    description: {}\n    type: config",
                paragraph(rng, 8)
            );
        }
    }
    if !scripts.is_empty() {
        s.push_str("scripts:\n");
        for sc in scripts {
            let _ = writeln!(
                s,
                "  - file: {sc}\n    description: {}\n    execution: claude\n    args:\n      - name: target\n        description: {}",
                paragraph(rng, 8),
                paragraph(rng, 5)
            );
        }
    }
    s.push_str("---\n\n");
    let _ = writeln!(s, "# {}\n", capitalise(title));
    let _ = writeln!(s, "{}\n", paragraph_in(rng, 20, 50));
    let target = size.saturating_sub(s.len());
    s.push_str(&body(rng, target));
    s
}

fn asset_json(rng: &mut Rng) -> String {
    let mut s = String::from("{\n");
    let n = rng.range(3, 30);
    for i in 0..n {
        let _ = write!(s, "  \"{}_{i}\": \"{}\"", rng.pick(WORDS), rng.pick(WORDS));
        s.push_str(if i + 1 == n { "\n" } else { ",\n" });
    }
    s.push_str("}\n");
    s
}

fn script_sh(rng: &mut Rng) -> String {
    let mut s = String::from("#!/usr/bin/env bash\nset -euo pipefail\n");
    for _ in 0..rng.range(5, 40) {
        let _ = writeln!(s, "echo \"{}\"", paragraph_in(rng, 3, 10));
    }
    s
}
