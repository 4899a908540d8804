//! The process allocator of `hak` (and of the benches, so what is measured is what ships):
//! mimalloc, entered through its plain `malloc` / `realloc` for the alignments every mimalloc
//! block has anyway, and through its aligned entry points only for larger ones.
//!
//! Why not the `mimalloc` crate's `MiMalloc`: it sends every allocation to
//! `mi_malloc_aligned`, which checks the free block's alignment first and, whenever its small
//! page has no free block, takes a generic path that over-allocates sizes whose block is not
//! a power of two (`mi_theap_malloc_zero_aligned_at_overalloc`); a no-plugin call makes ~70
//! allocations, and that path was ~2k of its ~40k instructions. mimalloc's blocks are 8-byte
//! aligned, and 16-byte aligned from 16 bytes up (`MI_MAX_ALIGN_SIZE`), the guarantee of C's
//! `malloc` that std's `System` allocator relies on with the same rule; no crate offers that
//! entry, so it is written here. Only the allocator lives in this module.

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Every block of at least `align` bytes is aligned to `align` when `align` is at most this.
const MALLOC_ALIGN: usize = 16;

/// `#[global_allocator] static A: hak_host::alloc::Allocator = hak_host::alloc::Allocator;`
pub struct Allocator;

/// Whether plain `malloc` of `size` bytes already meets `align` (std's rule for `System`).
#[inline]
fn plain(align: usize, size: usize) -> bool {
    align <= MALLOC_ALIGN && align <= size
}

// SAFETY: each method forwards to the mimalloc function with the contract GlobalAlloc asks
// for: the plain ones only when their blocks are aligned as `layout` requires (see `plain`),
// and `mi_free` frees blocks of both kinds.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            unsafe { mi_malloc(layout.size()).cast() }
        } else {
            unsafe { mi_malloc_aligned(layout.size(), layout.align()).cast() }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            unsafe { mi_zalloc(layout.size()).cast() }
        } else {
            unsafe { mi_zalloc_aligned(layout.size(), layout.align()).cast() }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(layout.align(), new_size) {
            unsafe { mi_realloc(ptr.cast::<c_void>(), new_size).cast() }
        } else {
            unsafe { mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size up to two pages, at every alignment up to 4 KiB, written to its last byte,
    /// grown, shrunk and freed: each block is aligned as asked, whichever entry served it.
    #[test]
    fn every_block_is_aligned_as_its_layout_asks() {
        let a = Allocator;
        let mut align = 1;
        while align <= 4096 {
            for size in (1..=8192).step_by(7).chain([8, 16, 24, 40, 48, 4096]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = if size % 2 == 0 {
                        a.alloc(layout)
                    } else {
                        a.alloc_zeroed(layout)
                    };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    p.add(size - 1).write(0xa5);
                    let grown = a.realloc(p, layout, size * 2 + 1);
                    assert_eq!(grown as usize % align, 0, "grown {size} align {align}");
                    assert_eq!(grown.add(size - 1).read(), 0xa5);
                    let bigger = Layout::from_size_align(size * 2 + 1, align).unwrap();
                    let shrunk = a.realloc(grown, bigger, size);
                    assert_eq!(shrunk as usize % align, 0, "shrunk {size} align {align}");
                    a.dealloc(shrunk, layout);
                }
            }
            align *= 2;
        }
    }
}
