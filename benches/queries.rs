//! Per-request costs, native (the guest crate as a Rust library) against the component (the
//! same engine through wasmtime, one reused instance), per corpus:
//! - `search/{native,component}`: the whole query list (`short` requests of the dev set on
//!   the combined corpus, a built-in list elsewhere), `search(q, 10)` each;
//! - `get_skill/{native,component}`: route each request and resolve the best candidate
//!   (reads its file(s) through the host);
//! - `instantiate` (once, bundled): a new instance from the runtime's `InstancePre`.
//!
//! Goal (issue 7): a query through the component within 2x the native one.
//! `cargo bench -p skills-mcp --bench queries`; `-- --test` runs each once.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skills_engine::Index;
use support::component;

fn queries(c: &mut Criterion) {
    let rt = component::runtime();
    {
        let bundled = support::bundled();
        let mut g = c.benchmark_group("instantiate");
        g.bench_function("instance_pre", |b| {
            b.iter(|| black_box(component::instance(&rt, &bundled)))
        });
        g.finish();
    }

    for corpus in support::corpora() {
        let qs = support::queries(&corpus);
        let native: Index = support::native_index(&corpus);
        let files = support::FsFiles(vec![corpus.root.clone()]);
        let (mut guest, index) = component::component_index(&rt, &corpus);

        let mut g = c.benchmark_group(format!("search/{}", corpus.name));
        g.throughput(Throughput::Elements(qs.len() as u64));
        g.bench_function("native", |b| {
            b.iter(|| {
                for q in &qs {
                    black_box(native.search(q, 10).expect("search"));
                }
            })
        });
        g.bench_function("component", |b| {
            b.iter(|| {
                for q in &qs {
                    black_box(guest.search(index, q, 10).expect("search"));
                }
            })
        });
        g.finish();

        let mut g = c.benchmark_group(format!("get_skill/{}", corpus.name));
        g.throughput(Throughput::Elements(qs.len() as u64));
        g.bench_function("native", |b| {
            b.iter(|| {
                for q in &qs {
                    black_box(support::native_get_skill(&native, &files, q));
                }
            })
        });
        g.bench_function("component", |b| {
            b.iter(|| {
                for q in &qs {
                    black_box(component::get_skill(&mut guest, index, q));
                }
            })
        });
        g.finish();
    }
}

criterion_group!(benches, queries);
criterion_main!(benches);
