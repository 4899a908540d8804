//! The Rust guests' global allocator: blocks of up to 2 KiB are kept on one free list per
//! power-of-two size and handed out again; larger blocks, and anything aligned beyond 16 bytes,
//! go to the system allocator (wasi-libc's dlmalloc). What lives here: that allocator only.
//! What must not: anything else (it is installed for every Rust plugin built with the SDK).
//!
//! Why hand-written. Every policy call allocates and frees the same few blocks: the host
//! lowers the stage input's record and its two strings through `cabi_realloc`, and the
//! bindings free them when the call returns. Through `System` each pair costs ~500
//! instructions in wasm (`__rust_alloc` → `__rdl_alloc` → `malloc` → `dlmalloc`, and back for
//! the free); a pop and a push on a list cost a few dozen. talc, the maintained allocator
//! built for wasm, counted more than dlmalloc on the same call (+4.9 %, docs/BENCHMARKS.md),
//! and no crate offers a size-class cache in front of the system allocator.
//!
//! The cost: a freed small block stays on its list, so memory held by small blocks never falls
//! below its peak (the host bounds a plugin's memory either way), and a block is rounded up to
//! its class (at most twice its size).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// The smallest class (a list link needs a pointer; 16 keeps every class 16-aligned).
const MIN_SHIFT: u32 = 4;
/// Classes of 16, 32, …, 2048 bytes.
const CLASSES: usize = 8;
const MAX_CLASS_SIZE: usize = 1 << (MIN_SHIFT as usize + CLASSES - 1);
const CLASS_ALIGN: usize = 16;

/// Free lists of small blocks by size class, in front of [`System`].
pub struct ClassCache {
    /// The head of each class's list; a free block's first word links to the next one.
    heads: UnsafeCell<[*mut u8; CLASSES]>,
}

// SAFETY: a component instance runs on one thread (wasm32-wasip2 has no threads), so the lists
// are never touched by two threads; natively the type is only used by value in tests.
#[cfg(target_arch = "wasm32")]
unsafe impl Sync for ClassCache {}

impl ClassCache {
    pub const fn new() -> Self {
        ClassCache {
            heads: UnsafeCell::new([ptr::null_mut(); CLASSES]),
        }
    }
}

impl Default for ClassCache {
    fn default() -> Self {
        Self::new()
    }
}

/// The class of a layout, or `None` when it is too big or too aligned for one.
#[inline(always)]
fn class(layout: Layout) -> Option<usize> {
    if layout.size() > MAX_CLASS_SIZE || layout.align() > CLASS_ALIGN {
        return None;
    }
    let shift = layout
        .size()
        .max(1 << MIN_SHIFT)
        .next_power_of_two()
        .trailing_zeros();
    Some((shift - MIN_SHIFT) as usize)
}

/// The layout a class's blocks are taken from the system allocator with (`class` below
/// [`CLASSES`]).
#[inline(always)]
fn class_layout(class: usize) -> Layout {
    // SAFETY: the size is a power of two of at most `MAX_CLASS_SIZE` and the alignment 16, a
    // power of two: a valid layout (a fallback of another size would hand out short blocks).
    unsafe { Layout::from_size_align_unchecked(1 << (class + MIN_SHIFT as usize), CLASS_ALIGN) }
}

// SAFETY: every block handed out is either a system block of the caller's layout or a class
// block at least as large and as aligned as the caller's layout (`class` admits only those);
// a block goes back to the list or the allocator it came from, chosen by the same `class` of
// the same layout (GlobalAlloc's contract: `dealloc` gets the layout the block was allocated
// or reallocated with).
unsafe impl GlobalAlloc for ClassCache {
    #[inline(always)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class(layout) else {
            return System.alloc(layout);
        };
        let heads = &mut *self.heads.get();
        let head = heads[class];
        if head.is_null() {
            return System.alloc(class_layout(class));
        }
        heads[class] = head.cast::<*mut u8>().read();
        head
    }

    #[inline(always)]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(class) = class(layout) else {
            return System.dealloc(block, layout);
        };
        let heads = &mut *self.heads.get();
        block.cast::<*mut u8>().write(heads[class]);
        heads[class] = block;
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let class_now = class(layout);
        if class_now.is_some() && class_now == class(new_layout) {
            return block;
        }
        if class_now.is_none() && class(new_layout).is_none() {
            return System.realloc(block, layout, new_size);
        }
        let moved = self.alloc(new_layout);
        if !moved.is_null() {
            ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
            self.dealloc(block, layout);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn classes_cover_their_sizes_and_refuse_the_rest() {
        assert_eq!(class(layout(0, 1)), Some(0));
        assert_eq!(class(layout(16, 16)), Some(0));
        assert_eq!(class(layout(17, 1)), Some(1));
        assert_eq!(class(layout(2048, 8)), Some(7));
        assert_eq!(class(layout(2049, 1)), None);
        assert_eq!(class(layout(8, 32)), None);
        for size in 0..=MAX_CLASS_SIZE {
            let c = class(layout(size, 1)).unwrap();
            assert!(class_layout(c).size() >= size, "{size}");
            assert!(c == 0 || class_layout(c - 1).size() < size, "{size}");
        }
    }

    /// A freed block is handed out again for any size of its class, and its bytes survive a
    /// move to another class or to the system allocator and back.
    #[test]
    fn blocks_are_reused_and_moves_keep_their_bytes() {
        let heap = ClassCache::new();
        unsafe {
            let a = heap.alloc(layout(300, 1));
            let b = heap.alloc(layout(300, 1));
            assert_ne!(a, b);
            heap.dealloc(a, layout(300, 1));
            let c = heap.alloc(layout(400, 8));
            assert_eq!(c, a, "the freed block of the 512 class is reused");
            assert_eq!(c as usize % 16, 0);
            let grown = heap.realloc(c, layout(400, 8), 500);
            assert_eq!(grown, c, "a realloc within the class stays in place");
            let byte = |i: usize| (i % 251) as u8;
            for i in 0..500 {
                grown.add(i).write(byte(i));
            }
            let big = heap.realloc(grown, layout(500, 8), 5000);
            let small = heap.realloc(big, layout(5000, 8), 100);
            for i in 0..100 {
                assert_eq!(small.add(i).read(), byte(i));
            }
            heap.dealloc(small, layout(100, 8));
            heap.dealloc(b, layout(300, 1));
            let aligned = heap.alloc(layout(64, 64));
            assert_eq!(aligned as usize % 64, 0);
            heap.dealloc(aligned, layout(64, 64));
        }
    }
}
