//! Model-based random test: boxes and vectors in a reap against a model of
//! what each must hold. Every byte of the live objects is checked (all of
//! them every 16 steps, the newest and a random one every step), so a reap
//! that hands out overlapping or reused-too-early memory fails here.
use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use strata_reap::Reap;

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One live object in the reap and the byte pattern it must hold.
enum Object<'r> {
    Boxed(Box<[u8; 40], &'r Reap>, u8),
    Wide(Box<Wide, &'r Reap>, u8),
    Bytes(Vec<u8, &'r Reap>, u8),
}

#[repr(align(128))]
struct Wide([u8; 200]);

fn pattern(seed: u8, i: usize) -> u8 {
    seed.wrapping_add((i as u8).wrapping_mul(31))
}

impl Object<'_> {
    /// What the object takes in the reap: its size rounded up to 8.
    fn bytes(&self) -> usize {
        match self {
            Object::Boxed(..) => 40,
            Object::Wide(..) => std::mem::size_of::<Wide>(),
            Object::Bytes(v, _) => v.capacity().div_ceil(8) * 8,
        }
    }

    fn check(&self) {
        match self {
            Object::Boxed(b, s) => assert!(b.iter().enumerate().all(|(i, &x)| x == pattern(*s, i))),
            Object::Wide(w, s) => {
                assert_eq!(&**w as *const Wide as usize % 128, 0);
                assert!(w.0.iter().enumerate().all(|(i, &x)| x == pattern(*s, i)))
            }
            Object::Bytes(v, s) => assert!(v.iter().enumerate().all(|(i, &x)| x == pattern(*s, i))),
        }
    }
}

fn make<'r>(reap: &'r Reap, rng: &mut Rng) -> Object<'r> {
    let seed = rng.next() as u8;
    match rng.below(3) {
        0 => Object::Boxed(Box::new_in(std::array::from_fn(|i| pattern(seed, i)), reap), seed),
        1 => Object::Wide(Box::new_in(Wide(std::array::from_fn(|i| pattern(seed, i))), reap), seed),
        _ => {
            let bound = if rng.below(10) == 0 { 20_000 } else { 300 };
            let len = rng.below(bound) as usize;
            let mut v = Vec::with_capacity_in(rng.below(4) as usize, reap);
            v.extend((0..len).map(|i| pattern(seed, i)));
            Object::Bytes(v, seed)
        }
    }
}

fn step<'r>(reap: &'r Reap, live: &mut std::vec::Vec<Object<'r>>, rng: &mut Rng) {
    match rng.below(10) {
        0..=4 => live.push(make(reap, rng)),
        5..=7 if !live.is_empty() => {
            let i = rng.below(live.len() as u64) as usize;
            live.swap_remove(i);
        }
        _ if !live.is_empty() => {
            // Grow or shrink a vector in place or by moving.
            let i = rng.below(live.len() as u64) as usize;
            if let Object::Bytes(v, s) = &mut live[i] {
                let new_len = rng.below(3000) as usize;
                if new_len < v.len() {
                    v.truncate(new_len);
                    v.shrink_to_fit();
                } else {
                    let s = *s;
                    let start = v.len();
                    v.extend((start..new_len).map(|j| pattern(s, j)));
                }
            }
        }
        _ => {}
    }
}

fn run(seed: u64, steps: usize) {
    let reap = Reap::new();
    let mut rng = Rng(seed);
    let mut live = std::vec::Vec::new();
    for n in 0..steps {
        step(&reap, &mut live, &mut rng);
        // The newest and a random object every step, all of them often.
        if let Some(last) = live.last() {
            last.check();
            live[rng.below(live.len() as u64) as usize].check();
        }
        if n % 16 == 0 {
            live.iter().for_each(Object::check);
        }
    }
    live.iter().for_each(Object::check);
    assert_eq!(reap.stats().bytes_live, live.iter().map(Object::bytes).sum::<usize>());
    drop(live);
    assert_eq!(reap.stats().bytes_live, 0, "every object was given back");
}

#[test]
fn random_boxes_and_vectors_keep_every_byte() {
    for seed in 1..=8u64 {
        run(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1500);
    }
}

/// The same model with the C library's checked mode on (every call recorded,
/// the inline window closed): the Rust fast path must take the slow path.
/// Checked mode is read once per process, hence the child process.
#[test]
fn random_model_in_checked_mode() {
    if std::env::var_os("STRATA_REAP_CHECK").is_some() {
        run(42, 1500);
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "random_model_in_checked_mode", "--test-threads=1"])
        .env("STRATA_REAP_CHECK", "1")
        .status()
        .unwrap();
    assert!(status.success());
}
