//! Index build against its floor, per corpus (bundled, combined, 10k generated):
//! - `floor_walk_read`: a plain native `std::fs` walk of the root (listing with sizes) and a
//!   read of every file the engine asks for: the I/O any implementation must do;
//! - `native`: the engine as a Rust library (walk, `add_root`, reads, `add_files`, `finish`);
//! - `component`: the same calls, same sequential reads and batches, through the wasmtime
//!   component in a fresh instance (instantiation included);
//! - `catalog`: the real build, `Catalog::open` (cap-std walk, parallel reads, batches).
//!
//! Goal (issue 7): the build through the component is within 1.5x of `floor_walk_read`.
//! `cargo bench -p skills-mcp --bench index_build`; `-- --test` runs each once.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use skills_mcp::catalog::{Catalog, CatalogOptions, RootSpec};

fn index_build(c: &mut Criterion) {
    // Compiled on first use, so a filtered run of the native benches never starts wasmtime.
    let rt = std::cell::OnceCell::new();
    for corpus in support::corpora() {
        let to_read = support::files_to_read(&corpus);
        let mut g = c.benchmark_group(format!("index_build/{}", corpus.name));
        if corpus.name != "bundled" {
            g.sample_size(10).measurement_time(Duration::from_secs(10));
        }
        g.bench_function("floor_walk_read", |b| {
            b.iter(|| black_box(support::floor_walk_read(&corpus.root, &to_read)))
        });
        g.bench_function("native", |b| {
            b.iter(|| black_box(support::native_index(&corpus).len()))
        });
        g.bench_function("component", |b| {
            b.iter(|| {
                black_box(
                    support::component::component_index(
                        rt.get_or_init(support::component::runtime),
                        &corpus,
                    )
                    .1,
                )
            })
        });
        g.bench_function("catalog", |b| {
            b.iter(|| {
                black_box(
                    Catalog::open(vec![RootSpec::new(&corpus.root)], CatalogOptions::default())
                        .expect("Catalog::open"),
                )
            })
        });
        g.finish();
    }
}

criterion_group!(benches, index_build);
criterion_main!(benches);
