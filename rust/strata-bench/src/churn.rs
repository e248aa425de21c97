//! The churn workload: a long-lived arena holds a window of objects; each
//! step drops the oldest and allocates a new one, of a size from a cycle of
//! 16..=128 bytes. A reap reuses the freed memory, so it stays flat; a bump
//! arena cannot free single objects, so it grows with every step.
/// Objects alive at once.
pub const WINDOW: usize = 10_000;

/// One object of the churn: a box of 16, 32, 64 or 128 bytes.
pub enum Object<B16, B32, B64, B128> {
    /// 16 bytes.
    S16(B16),
    /// 32 bytes.
    S32(B32),
    /// 64 bytes.
    S64(B64),
    /// 128 bytes.
    S128(B128),
}

/// `churn!(steps, probe_every, probe, |v| make)`: runs `steps` steps of
/// churn, boxing each new array `v` with `make`; `probe` is called
/// every `probe_every` steps (for memory measurements). Returns a checksum.
#[macro_export]
macro_rules! churn {
    ($steps:expr, $probe_every:expr, $probe:expr, |$v:ident| $make:expr) => {{
        use $crate::churn::Object;
        let mut window = ::std::collections::VecDeque::with_capacity($crate::churn::WINDOW + 1);
        let mut sum = 0u64;
        for step in 0..$steps as u64 {
            let object = match step % 4 {
                0 => Object::S16({
                    let $v = [step; 2];
                    $make
                }),
                1 => Object::S32({
                    let $v = [step; 4];
                    $make
                }),
                2 => Object::S64({
                    let $v = [step; 8];
                    $make
                }),
                _ => Object::S128({
                    let $v = [step; 16];
                    $make
                }),
            };
            window.push_back(object);
            if window.len() > $crate::churn::WINDOW {
                if let Some(Object::S16(b)) = window.pop_front() {
                    sum = sum.wrapping_add(b[1]);
                }
            }
            if $probe_every != 0 && (step + 1) % $probe_every == 0 {
                $probe(step + 1);
            }
        }
        ::std::hint::black_box(&window);
        sum
    }};
}
