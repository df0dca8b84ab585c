//! Usage analytics: event tracking, batched HTTP publishing, a bounded JSONL fallback buffer (seed 004 section 10).
