//! A long-lived service with churn: one reap per connection holds that
//! connection's sessions in a map; requests create and drop entries for as
//! long as the connection lives. Dropped entries give their memory back to
//! the reap, so what it holds stays flat however long the service runs —
//! a bump arena (bumpalo, bump-scope) would grow with every request.
//!
//! `cargo run --release --example service_churn`
use strata_reap::allocator_api2::{boxed::Box, vec::Vec};
use strata_reap::Reap;

use std::collections::VecDeque;

/// One session's state, in the connection's reap.
struct Session<'r> {
    id: u64,
    name: Box<[u8], &'r Reap>,
    history: Vec<u32, &'r Reap>,
}

/// A small deterministic generator (no dependency).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn main() {
    let connection = Reap::new();
    let mut live: VecDeque<Session> = VecDeque::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut held_after_warmup = 0;
    for request in 1..=200_000u64 {
        // Open a session; keep about 1000 alive; the oldest ones end.
        let name_len = 8 + (rng.next() % 56) as usize;
        let mut name = Vec::with_capacity_in(name_len, &connection);
        name.extend((0..name_len).map(|i| b'a' + (i % 26) as u8));
        let mut history = Vec::new_in(&connection);
        history.extend((0..rng.next() % 32).map(|i| i as u32));
        live.push_back(Session { id: request, name: name.into_boxed_slice(), history });
        if live.len() > 1000 {
            let ended = live.pop_front().unwrap();
            assert!(ended.id + 1000 == request && !ended.name.is_empty());
            drop(ended); // its name and history go back to the reap
        }
        if let Some(s) = live.back_mut() {
            s.history.push(request as u32); // sessions grow too
        }
        if request == 20_000 {
            held_after_warmup = connection.stats().bytes_held;
        }
        if request % 50_000 == 0 {
            let stats = connection.stats();
            println!("request {request}: {} live bytes, {} KiB held", stats.bytes_live, stats.bytes_held / 1024);
        }
    }
    let held = connection.stats().bytes_held;
    println!("held after 20 000 requests: {} KiB; after 200 000: {} KiB", held_after_warmup / 1024, held / 1024);
    assert!(held <= held_after_warmup * 2, "the connection's reap should stay flat under churn");
}
