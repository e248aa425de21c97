//! `cargo bench`: every workload of strata_bench::suite with every contender,
//! under criterion (few samples: each run is a whole workload of 10^6-10^7
//! allocations). For ratios on a noisy machine use the paired binary:
//! `cargo run --release -p strata-bench --bin paired`.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use strata_bench::suite::{contenders, WORKLOADS};

fn workloads(c: &mut Criterion) {
    for workload in WORKLOADS {
        let mut group = c.benchmark_group(*workload);
        group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
        for (name, run) in contenders(workload) {
            group.bench_function(name, |b| b.iter(|| std::hint::black_box(run())));
        }
        group.finish();
    }
}

criterion_group!(benches, workloads);
criterion_main!(benches);
