//! Paired, interleaved comparison of the contenders (the machine is noisy:
//! ratios within one round, medians over rounds), and the churn's memory.
//!
//! ```text
//! paired [--rounds N] [WORKLOAD...]   time ratios against bumpalo (default: every workload, 7 rounds)
//! paired churn-memory [--steps N]     resident memory of the churn, one fresh process per contender
//! paired once WORKLOAD CONTENDER [K]  K runs (default 1; for valgrind --tool=callgrind
//!                                     --toggle-collect=paired::run_once, or /usr/bin/time's page faults)
//! ```
use std::process::Command;
use std::time::Instant;

use strata_bench::suite::{churn_named, contenders, CHURN_CONTENDERS, WORKLOADS};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs every contender once per round, in an order rotated every round;
/// prints the median time and the median of the per-round ratio to bumpalo.
fn compare(workload: &str, rounds: usize) {
    let runs = contenders(workload);
    let base = runs.iter().position(|(n, _)| *n == "bumpalo").expect("bumpalo runs every workload");
    for (_, run) in &runs {
        std::hint::black_box(run()); // warm up: page faults, chunk caches
    }
    let mut times = vec![Vec::new(); runs.len()];
    for round in 0..rounds {
        for k in 0..runs.len() {
            let i = (k + round) % runs.len();
            let start = Instant::now();
            std::hint::black_box((runs[i].1)());
            times[i].push(start.elapsed().as_secs_f64());
        }
    }
    println!("\n{workload} ({rounds} rounds, interleaved)\n");
    println!("| contender | median time (ms) | median ratio to bumpalo |");
    println!("|---|---:|---:|");
    for (i, (name, _)) in runs.iter().enumerate() {
        let ratios = times[i].iter().zip(&times[base]).map(|(t, b)| t / b).collect();
        println!("| {name} | {:.1} | {:.3} |", median(times[i].clone()) * 1e3, median(ratios));
    }
}

/// One run of one contender; callgrind counts only this function.
#[inline(never)]
fn run_once(run: &dyn Fn() -> u64) -> u64 {
    run()
}

fn once(workload: &str, name: &str, times: usize) {
    let runs = contenders(workload);
    let (_, run) = runs.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no contender {name}"));
    for _ in 0..times {
        println!("{}", std::hint::black_box(run_once(run)));
    }
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn churn_child(name: &str, steps: usize) {
    let every = (steps / 5) as u64;
    let mut row = Vec::new();
    churn_named(name, steps, every, &mut |_, arena_bytes| {
        row.push(format!("{:.1} / {:.1}", resident_kib() as f64 / 1024.0, arena_bytes as f64 / 1048576.0))
    })
    .unwrap_or_else(|| panic!("unknown contender {name}"));
    println!("| {name} | {} |", row.join(" | "));
}

fn churn_memory(steps: usize) {
    let every = steps / 5;
    println!("\nchurn: resident MiB / MiB the arena holds (0: not an arena), after N steps (window 10 000 objects)\n");
    let header: Vec<String> = (1..=5).map(|k| format!("{} M", k * every / 1_000_000)).collect();
    println!("| contender | {} |", header.join(" | "));
    println!("|---|{}", "---:|".repeat(5));
    let exe = std::env::current_exe().unwrap();
    for name in CHURN_CONTENDERS {
        let out = Command::new(&exe).args(["churn-child", name, &steps.to_string()]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
}

fn flag(args: &mut Vec<String>, name: &str, default: usize) -> usize {
    match args.iter().position(|a| a == name) {
        Some(i) => {
            let value = args.remove(i + 1).parse().expect("a number");
            args.remove(i);
            value
        }
        None => default,
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("churn-child") => churn_child(&args[1], args[2].parse().unwrap()),
        Some("once") => once(&args[1], &args[2], args.get(3).map_or(1, |k| k.parse().unwrap())),
        Some("churn-memory") => churn_memory(flag(&mut args, "--steps", 5_000_000)),
        _ => {
            let rounds = flag(&mut args, "--rounds", 7);
            let chosen: Vec<&str> =
                if args.is_empty() { WORKLOADS.to_vec() } else { args.iter().map(String::as_str).collect() };
            for workload in chosen {
                compare(workload, rounds);
            }
        }
    }
}
