//! A general-purpose table of abbreviations and spelling variants common in software requests.
//!
//! Used by the ranker's analyser ([`crate::text::analyze`]) identically on the catalogue and on
//! requests, so both sides meet on one form. Entries are general vocabulary of software
//! engineering (none is tied to a particular skill or query):
//! - [`ALIASES`]: a word replaced by its canonical word before stemming (`k8s` -> `kubernetes`);
//! - [`PHRASES`]: a sequence of (stemmed) words that also yields its usual abbreviation
//!   (`pull request` -> `pr`), so a request saying either form finds text saying the other.

/// `(alias, canonical)`: lowercase surface words.
pub const ALIASES: &[(&str, &str)] = &[
    ("k8s", "kubernetes"),
    ("kube", "kubernetes"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("golang", "go"),
    ("postgres", "postgresql"),
    ("psql", "postgresql"),
    ("mongo", "mongodb"),
    ("db", "database"),
    ("dbs", "database"),
    ("repo", "repository"),
    ("repos", "repository"),
    ("config", "configuration"),
    ("configs", "configuration"),
    ("conf", "configuration"),
    ("env", "environment"),
    ("envs", "environment"),
    ("deps", "dependency"),
    ("dep", "dependency"),
    ("doc", "documentation"),
    ("docs", "documentation"),
    ("perf", "performance"),
    ("authn", "authentication"),
    ("authz", "authorization"),
    ("i18n", "internationalization"),
    ("l10n", "localization"),
    ("a11y", "accessibility"),
    ("gh", "github"),
    ("msg", "message"),
    ("msgs", "message"),
    ("img", "image"),
    ("imgs", "image"),
    ("pic", "picture"),
    ("pics", "picture"),
    ("dev", "development"),
    ("prod", "production"),
    ("infra", "infrastructure"),
    ("admin", "administration"),
    ("async", "asynchronous"),
    ("sync", "synchronization"),
    ("spec", "specification"),
    ("specs", "specification"),
    ("stats", "statistics"),
    ("viz", "visualization"),
    ("dataviz", "visualization"),
    ("regex", "regexp"),
    ("vuln", "vulnerability"),
    ("vulns", "vulnerability"),
    ("eval", "evaluation"),
    ("evals", "evaluation"),
    ("param", "parameter"),
    ("params", "parameter"),
    ("arg", "argument"),
    ("args", "argument"),
    ("func", "function"),
    ("fn", "function"),
    ("lib", "library"),
    ("libs", "library"),
    ("pkg", "package"),
    ("pkgs", "package"),
    ("util", "utility"),
    ("utils", "utility"),
    ("optimise", "optimize"),
    ("optimised", "optimized"),
    ("optimising", "optimizing"),
    ("optimisation", "optimization"),
    ("visualise", "visualize"),
    ("visualisation", "visualization"),
    ("analyse", "analyze"),
    ("analysed", "analyzed"),
    ("analysing", "analyzing"),
    ("organise", "organize"),
    ("organisation", "organization"),
    ("summarise", "summarize"),
    ("summarised", "summarized"),
    ("normalise", "normalize"),
    ("customise", "customize"),
    ("initialise", "initialize"),
    ("serialise", "serialize"),
    ("colour", "color"),
    ("colours", "color"),
    ("behaviour", "behavior"),
    ("licence", "license"),
    ("licences", "license"),
    ("catalogue", "catalog"),
    ("centre", "center"),
];

/// `(stemmed words, abbreviation)`: a phrase (consecutive non-stop words, after stemming) that
/// also yields the abbreviation as a term.
pub const PHRASES: &[(&[&str], &str)] = &[
    (&["pull", "request"], "pr"),
    (&["merg", "request"], "mr"),
    (&["continu", "integr"], "ci"),
    (&["continu", "deliveri"], "cd"),
    (&["continu", "deploy"], "cd"),
    (&["machin", "learn"], "ml"),
    (&["deep", "learn"], "dl"),
    (&["larg", "languag", "model"], "llm"),
    (&["languag", "model"], "llm"),
    (&["artifici", "intellig"], "ai"),
    (&["natur", "languag", "process"], "nlp"),
    (&["user", "interfac"], "ui"),
    (&["user", "experi"], "ux"),
    (&["command", "line"], "cli"),
    (&["softwar", "develop", "kit"], "sdk"),
    (&["oper", "system"], "os"),
    (&["virtual", "machin"], "vm"),
    (&["infrastructur", "code"], "iac"),
    (&["search", "engin", "optim"], "seo"),
    (&["singl", "sign"], "sso"),
    (&["json", "web", "token"], "jwt"),
    (&["retriev", "augment", "generat"], "rag"),
    (&["amazon", "web", "servic"], "aws"),
    (&["googl", "cloud", "platform"], "gcp"),
    (&["test", "driven", "develop"], "tdd"),
    (&["optic", "charact", "recognit"], "ocr"),
    (&["end", "end"], "e2e"),
    (&["role", "base", "access", "control"], "rbac"),
    (&["applic", "program", "interfac"], "api"),
    (&["server", "side", "render"], "ssr"),
    (&["singl", "page", "applic"], "spa"),
    (&["content", "deliveri", "network"], "cdn"),
    (&["object", "relat", "map"], "orm"),
    (&["domain", "driven", "design"], "ddd"),
    (&["site", "reliabl", "engin"], "sre"),
    (&["key", "perform", "indic"], "kpi"),
    (&["two", "factor", "authent"], "2fa"),
    (&["multi", "factor", "authent"], "mfa"),
    (&["text", "speech"], "tts"),
    (&["speech", "text"], "stt"),
    (&["person", "identifi", "inform"], "pii"),
    (&["graphic", "process", "unit"], "gpu"),
];

/// The canonical form of a lowercase surface word, if it is an alias.
pub fn canonical(word: &str) -> Option<&'static str> {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == word)
        .map(|(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_lowercase_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for (a, c) in ALIASES {
            assert_eq!(*a, a.to_lowercase());
            assert_eq!(*c, c.to_lowercase());
            assert!(seen.insert(*a), "duplicate alias {a}");
        }
        assert_eq!(canonical("k8s"), Some("kubernetes"));
        assert_eq!(canonical("kubernetes"), None);
    }

    #[test]
    fn phrases_are_stemmed_forms() {
        for (words, abbr) in PHRASES {
            assert!(words.len() >= 2, "{abbr}");
            for w in *words {
                assert_eq!(
                    crate::text::stem(w),
                    *w,
                    "phrase word {w} of {abbr} is not a stem"
                );
            }
        }
    }
}
