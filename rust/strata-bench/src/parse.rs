//! The parse-tree workload: a fully parenthesised arithmetic expression,
//! parsed by recursive descent into a tree of nodes allocated one by one,
//! then evaluated.
use allocator_api2::alloc::Allocator;
use allocator_api2::boxed::Box;

use crate::Arena;

/// A node of a tree in an arena.
pub enum Node<'a> {
    /// A number.
    Num(i64),
    /// `(left op right)`.
    Bin(u8, &'a Node<'a>, &'a Node<'a>),
}

/// A node of a tree of boxes.
pub enum BoxNode<A: Allocator> {
    /// A number.
    Num(i64),
    /// `(left op right)`.
    Bin(u8, Box<BoxNode<A>, A>, Box<BoxNode<A>, A>),
}

/// Where the parser puts its nodes.
pub trait Tree {
    /// A reference to (or owner of) a node.
    type Node;
    /// A number leaf.
    fn num(&self, value: i64) -> Self::Node;
    /// An operator node.
    fn bin(&self, op: u8, left: Self::Node, right: Self::Node) -> Self::Node;
    /// The value of the tree.
    fn eval(node: &Self::Node) -> i64;
}

fn apply(op: u8, l: i64, r: i64) -> i64 {
    match op {
        b'+' => l.wrapping_add(r),
        b'-' => l.wrapping_sub(r),
        _ => l.wrapping_mul(r),
    }
}

/// Nodes in an arena.
pub struct InArena<'a, A>(pub &'a A);

impl<'a, A: Arena> Tree for InArena<'a, A> {
    type Node = &'a Node<'a>;
    #[inline(always)]
    fn num(&self, value: i64) -> Self::Node {
        self.0.put(Node::Num(value))
    }
    #[inline(always)]
    fn bin(&self, op: u8, left: Self::Node, right: Self::Node) -> Self::Node {
        self.0.put(Node::Bin(op, left, right))
    }
    fn eval(node: &Self::Node) -> i64 {
        match node {
            Node::Num(v) => *v,
            Node::Bin(op, l, r) => apply(*op, Self::eval(l), Self::eval(r)),
        }
    }
}

/// Nodes in one typed arena.
pub struct InTypedArena<'a>(pub &'a typed_arena::Arena<Node<'a>>);

impl<'a> Tree for InTypedArena<'a> {
    type Node = &'a Node<'a>;
    #[inline(always)]
    fn num(&self, value: i64) -> Self::Node {
        self.0.alloc(Node::Num(value))
    }
    #[inline(always)]
    fn bin(&self, op: u8, left: Self::Node, right: Self::Node) -> Self::Node {
        self.0.alloc(Node::Bin(op, left, right))
    }
    fn eval(node: &Self::Node) -> i64 {
        InArena::<'a, strata_reap::Reap>::eval(node)
    }
}

/// Nodes in boxes of allocator `A`.
pub struct InBoxes<A>(pub A);

impl<A: Allocator + Copy> Tree for InBoxes<A> {
    type Node = Box<BoxNode<A>, A>;
    #[inline(always)]
    fn num(&self, value: i64) -> Self::Node {
        Box::new_in(BoxNode::Num(value), self.0)
    }
    #[inline(always)]
    fn bin(&self, op: u8, left: Self::Node, right: Self::Node) -> Self::Node {
        Box::new_in(BoxNode::Bin(op, left, right), self.0)
    }
    fn eval(node: &Self::Node) -> i64 {
        match &**node {
            BoxNode::Num(v) => *v,
            BoxNode::Bin(op, l, r) => apply(*op, Self::eval(l), Self::eval(r)),
        }
    }
}

/// A fully parenthesised expression of `2^depth - 1` nodes (deterministic).
pub fn expression(depth: u32) -> String {
    fn emit(out: &mut String, depth: u32, seed: &mut u64) {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        if depth == 1 {
            out.push_str(&((*seed >> 40) % 1000).to_string());
            return;
        }
        out.push('(');
        emit(out, depth - 1, seed);
        out.push(b"+-*"[(*seed >> 33) as usize % 3] as char);
        emit(out, depth - 1, seed);
        out.push(')');
    }
    let mut out = String::new();
    emit(&mut out, depth, &mut 7);
    out
}

/// Parses `text` (from [`expression`]) into `tree`; returns the root.
pub fn parse<T: Tree>(tree: &T, text: &[u8]) -> T::Node {
    fn node<T: Tree>(tree: &T, text: &[u8], at: &mut usize) -> T::Node {
        if text[*at] == b'(' {
            *at += 1;
            let left = node(tree, text, at);
            let op = text[*at];
            *at += 1;
            let right = node(tree, text, at);
            *at += 1; // ')'
            return tree.bin(op, left, right);
        }
        let mut value = 0i64;
        while *at < text.len() && text[*at].is_ascii_digit() {
            value = value * 10 + i64::from(text[*at] - b'0');
            *at += 1;
        }
        tree.num(value)
    }
    node(tree, text, &mut 0)
}

/// Parses and evaluates `text` in `tree`.
#[inline(never)]
pub fn parse_and_eval<T: Tree>(tree: &T, text: &[u8]) -> i64 {
    let root = parse(tree, text);
    T::eval(&root)
}
