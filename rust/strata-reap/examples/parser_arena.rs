//! A parser arena: every node of a syntax tree lives in one reap, borrowed
//! for as long as the tree is used, and the whole tree goes at once when the
//! reap is cleared for the next input.
//!
//! `cargo run --release --example parser_arena`
use strata_reap::Reap;

/// `(a op b)`, numbers and the four operators; nodes borrow the reap.
enum Expr<'r> {
    Num(i64),
    Bin(u8, &'r Expr<'r>, &'r Expr<'r>),
}

struct Parser<'s, 'r> {
    input: &'s [u8],
    at: usize,
    reap: &'r Reap,
}

impl<'s, 'r> Parser<'s, 'r> {
    fn skip_spaces(&mut self) {
        while self.input.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    fn expr(&mut self) -> Result<&'r Expr<'r>, String> {
        self.skip_spaces();
        match self.input.get(self.at) {
            Some(b'(') => {
                self.at += 1;
                let left = self.expr()?;
                self.skip_spaces();
                let op = *self.input.get(self.at).ok_or("operator expected")?;
                if !b"+-*/".contains(&op) {
                    return Err(format!("not an operator: {:?} at {}", op as char, self.at));
                }
                self.at += 1;
                let right = self.expr()?;
                self.skip_spaces();
                if self.input.get(self.at) != Some(&b')') {
                    return Err(format!("')' expected at {}", self.at));
                }
                self.at += 1;
                Ok(self.reap.alloc(Expr::Bin(op, left, right)))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.input.get(self.at).is_some_and(u8::is_ascii_digit) {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.input[start..self.at]).unwrap();
                Ok(self.reap.alloc(Expr::Num(text.parse().map_err(|e| format!("{e}"))?)))
            }
            _ => Err(format!("number or '(' expected at {}", self.at)),
        }
    }
}

fn eval(e: &Expr) -> i64 {
    match e {
        Expr::Num(n) => *n,
        Expr::Bin(op, l, r) => {
            let (l, r) = (eval(l), eval(r));
            match op {
                b'+' => l.wrapping_add(r),
                b'-' => l.wrapping_sub(r),
                b'*' => l.wrapping_mul(r),
                _ => l.checked_div(r).unwrap_or(0),
            }
        }
    }
}

/// A balanced expression of `depth` levels over the numbers 1, 2, 3, …
fn balanced(depth: u32, next: &mut i64, out: &mut String) {
    if depth == 0 {
        *next += 1;
        out.push_str(&next.to_string());
        return;
    }
    out.push('(');
    balanced(depth - 1, next, out);
    out.push_str(if depth % 2 == 0 { " + " } else { " - " });
    balanced(depth - 1, next, out);
    out.push(')');
}

fn main() {
    let mut reap = Reap::new();
    for round in 0..20u32 {
        let mut text = String::new();
        balanced(10 + round % 4, &mut 0, &mut text);
        let value = {
            let tree = Parser { input: text.as_bytes(), at: 0, reap: &reap }.expr().expect("a valid expression");
            eval(tree)
        };
        let stats = reap.stats();
        if round % 5 == 0 {
            println!(
                "round {round}: {} bytes of input, {} bytes of nodes, value {value}, {} KiB held",
                text.len(),
                stats.bytes_live,
                stats.bytes_held / 1024
            );
        }
        reap.clear(); // every node at once; the chunks stay for the next input
    }
    let err = Parser { input: b"(1 + x)", at: 0, reap: &reap }.expr().err();
    println!("a bad input: {}", err.unwrap_or_default());
}
