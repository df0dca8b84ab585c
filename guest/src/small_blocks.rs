//! Small blocks kept for reuse in front of the component's allocator.
//!
//! A search allocates and frees a few hundred small blocks (the request's words and slots,
//! the hits' strings and matched words), and Talc spends about 140 instructions on an
//! allocation and 90 on a free through the component (finding and splitting a free chunk,
//! binning it, merging it back). [`SmallBlocks`] keeps up to [`KEEP`] freed blocks of each
//! small size class in a list of its own and hands them out again in a few instructions;
//! everything else (large or over-aligned blocks, a class whose list is empty or full) goes
//! to the allocator behind it.
//!
//! A small block is always taken from the allocator behind with its class's largest size
//! (the chunk size Talc would give the request anyway) and alignment [`ALIGN`], and given
//! back with that same layout, so any block of a class can serve any request of it. At most
//! `KEEP` blocks a class are held back: 64 KiB in all.
//!
//! The component runs on one thread (`wasm32-wasip2` without shared memory); the lists are
//! not synchronised, which is why this is the global allocator only there.

#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::null_mut;

/// Bytes a class spans: Talc's chunk unit on wasm32.
const UNIT: usize = 16;
/// Size classes kept: blocks of up to `CLASSES * UNIT - TAIL` bytes.
const CLASSES: usize = 16;
/// Talc's per-chunk tail (one word): a class holds the requests whose size plus it rounds
/// up to the class's multiple of `UNIT`.
const TAIL: usize = core::mem::size_of::<usize>();
/// Largest alignment a kept block serves (the block is taken with it).
const ALIGN: usize = 8;
/// Most freed blocks kept per class.
const KEEP: u32 = 64;

/// Class of a request (`0..CLASSES`), or `None` when it goes to the allocator behind.
#[inline(always)]
fn class_of(layout: Layout) -> Option<usize> {
    let c = (layout.size() + TAIL).div_ceil(UNIT);
    (layout.align() <= ALIGN && c <= CLASSES).then(|| c.max(1) - 1)
}

/// The layout every block of class `c` (below [`CLASSES`]) is taken and given back with.
#[inline(always)]
fn class_layout(c: usize) -> Layout {
    // SAFETY: sizes 12, 28, .. 252 on wasm32 (8, 24, .. 248 natively), alignment 8, a power
    // of two: far from overflowing `isize`.
    unsafe { Layout::from_size_align_unchecked((c + 1) * UNIT - TAIL, ALIGN) }
}

/// Freed blocks of one class: a singly linked list through their first word.
#[derive(Clone, Copy)]
struct List {
    head: *mut u8,
    len: u32,
}

/// The global allocator of the component: [`KEEP`] freed blocks of each small class kept in
/// front of `A`.
pub struct SmallBlocks<A> {
    inner: A,
    lists: UnsafeCell<[List; CLASSES]>,
}

// SAFETY: used as the allocator of a single-threaded program only (see the module docs);
// tests use it from one thread.
unsafe impl<A: Sync> Sync for SmallBlocks<A> {}

impl<A> SmallBlocks<A> {
    pub const fn new(inner: A) -> Self {
        Self {
            inner,
            lists: UnsafeCell::new(
                [List {
                    head: null_mut(),
                    len: 0,
                }; CLASSES],
            ),
        }
    }

    /// Blocks currently kept in class `c` (tests).
    #[cfg(test)]
    fn kept(&self, c: usize) -> u32 {
        // SAFETY: one thread; no reference into the lists outlives a call.
        unsafe { (*self.lists.get())[c].len }
    }
}

unsafe impl<A: GlobalAlloc> GlobalAlloc for SmallBlocks<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(c) = class_of(layout) else {
            // SAFETY: the caller's contract, passed on.
            return unsafe { self.inner.alloc(layout) };
        };
        // SAFETY: one thread, and no reference into the lists outlives this call; a kept
        // block is a live allocation of class `c` from `inner`, at least a word long and
        // word-aligned, whose first word is the next kept block.
        unsafe {
            let list = &mut (*self.lists.get())[c];
            let p = list.head;
            if p.is_null() {
                return self.inner.alloc(class_layout(c));
            }
            list.head = p.cast::<*mut u8>().read();
            list.len -= 1;
            p
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(c) = class_of(layout) else {
            // SAFETY: the caller's contract, passed on.
            return unsafe { self.inner.dealloc(ptr, layout) };
        };
        // SAFETY: as in `alloc`; `ptr` was allocated here with a layout of class `c`, so it
        // is a block of `class_layout(c)` from `inner`.
        unsafe {
            let list = &mut (*self.lists.get())[c];
            if list.len >= KEEP {
                return self.inner.dealloc(ptr, class_layout(c));
            }
            ptr.cast::<*mut u8>().write(list.head);
            list.head = ptr;
            list.len += 1;
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded up to `layout.align()`, does not
        // overflow `isize`.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class_of(layout), class_of(new)) {
            // The block already has the room.
            (Some(a), Some(b)) if a == b => ptr,
            // SAFETY: both from `inner` with the caller's layouts.
            (None, None) => unsafe { self.inner.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: `ptr` is valid for `layout.size()` bytes, the new block for
                // `new_size`; they are distinct allocations.
                unsafe {
                    let p = self.alloc(new);
                    if !p.is_null() {
                        core::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    p
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    fn fill(p: *mut u8, n: usize, v: u8) {
        // SAFETY: `p` is a live block of at least `n` bytes.
        unsafe { core::ptr::write_bytes(p, v, n) }
    }

    fn all(p: *const u8, n: usize, v: u8) -> bool {
        // SAFETY: `p` is a live block of at least `n` bytes.
        unsafe { core::slice::from_raw_parts(p, n).iter().all(|&b| b == v) }
    }

    #[test]
    fn classes_follow_talcs_chunks() {
        let l = |size, align| Layout::from_size_align(size, align).unwrap();
        let w = TAIL;
        assert_eq!(class_of(l(0, 1)), Some(0));
        assert_eq!(class_of(l(UNIT - w, 8)), Some(0));
        assert_eq!(class_of(l(UNIT - w + 1, 8)), Some(1));
        assert_eq!(class_of(l(CLASSES * UNIT - w, 4)), Some(CLASSES - 1));
        assert_eq!(class_of(l(CLASSES * UNIT - w + 1, 4)), None);
        assert_eq!(class_of(l(8, 16)), None, "over-aligned requests go behind");
        for c in 0..CLASSES {
            assert_eq!(class_of(class_layout(c)), Some(c));
        }
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_class() {
        let a = SmallBlocks::new(System);
        let l = Layout::from_size_align(20, 4).unwrap();
        // SAFETY: layouts are valid and every block is freed with its own.
        unsafe {
            let p = a.alloc(l);
            fill(p, 20, 7);
            a.dealloc(p, l);
            assert_eq!(a.kept(class_of(l).unwrap()), 1);
            let q = a.alloc(Layout::from_size_align(17, 1).unwrap());
            assert_eq!(p, q, "the same class reuses the kept block");
            assert_eq!(a.kept(class_of(l).unwrap()), 0);
            a.dealloc(q, Layout::from_size_align(17, 1).unwrap());
        }
    }

    #[test]
    fn at_most_keep_blocks_are_held_back() {
        let a = SmallBlocks::new(System);
        let l = Layout::from_size_align(40, 8).unwrap();
        // SAFETY: as above.
        unsafe {
            let ps: Vec<*mut u8> = (0..KEEP + 10).map(|_| a.alloc(l)).collect();
            for &p in &ps {
                a.dealloc(p, l);
            }
            assert_eq!(a.kept(class_of(l).unwrap()), KEEP);
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_across_classes_and_sizes() {
        let a = SmallBlocks::new(System);
        // SAFETY: as above; each step passes the current layout.
        unsafe {
            let mut l = Layout::from_size_align(3, 1).unwrap();
            let mut p = a.alloc(l);
            fill(p, 3, 1);
            // within the class, to the next classes, past the largest, and back down
            for (n, v) in [
                (10, 2u8),
                (60, 3),
                (250, 4),
                (5000, 5),
                (9000, 6),
                (100, 7),
                (2, 8),
            ] {
                let q = a.realloc(p, l, n);
                assert!(!q.is_null());
                assert!(
                    all(q, l.size().min(n), v - 1),
                    "the bytes survive to size {n}"
                );
                fill(q, n, v);
                p = q;
                l = Layout::from_size_align(n, 1).unwrap();
            }
            a.dealloc(p, l);
        }
    }
}
