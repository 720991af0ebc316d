//! The module's global allocator: Redis's own, so the module's memory
//! counts in `used_memory` and `maxmemory`, as Redis's commands' does.

use std::alloc::{GlobalAlloc, Layout, System};

use redis_module::alloc::RedisAlloc;
use redis_module::raw;

/// Redis's allocator once the server has handed it over, the system's in
/// a program that is not a loaded module (unit tests, fuzz targets, tests
/// that use the pure rules).
///
/// The two never mix within one process: in the module, the server sets
/// the allocator at the start of `RedisModule_OnLoad`, before the module
/// allocates anything (redis-module's own `RedisAlloc` aborts otherwise);
/// in any other program it is never set.
pub struct ModuleAlloc;

fn in_redis() -> bool {
    // SAFETY: a read of a function pointer the server writes once, at load,
    // before any module code that allocates runs.
    let alloc = unsafe { raw::RedisModule_Alloc };
    alloc.is_some()
}

// SAFETY: each call is forwarded whole to one of two sound allocators, and
// a pointer is always freed by the allocator that made it (see above).
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if in_redis() {
            RedisAlloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    /// Zeroed memory from calloc: a large block fresh from the system is
    /// zero already and is not written here, so a campaign's new table
    /// (see `interned.rs`) costs no pass over its pages in the call that
    /// makes it.
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if in_redis() {
            // As `RedisAlloc` does: the size rounded up to the alignment,
            // which jemalloc's size classes then honour.
            let size = layout.size().next_multiple_of(layout.align());
            raw::RedisModule_Calloc.unwrap()(1, size).cast()
        } else {
            System.alloc_zeroed(layout)
        }
    }

    /// Redis's realloc: jemalloc keeps a block where it is when the new
    /// size falls in its size class (the trait's default allocates,
    /// copies and frees every time). A large block still moves: growing
    /// a 42 MB buffer took 32 ms either way, so a campaign's arrays of one
    /// element per user or string grow a chunk at a time
    /// (`coupon/campaign/chunked.rs`). Test builds count the bytes each
    /// call may copy ([`reallocated_bytes`]).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        #[cfg(test)]
        REALLOCATED.set(REALLOCATED.get() + layout.size().min(new_size));
        if in_redis() {
            // As `alloc`: the size rounded up to the alignment.
            let size = new_size.next_multiple_of(layout.align());
            // SAFETY: `ptr` came from `RedisModule_Alloc` (or Calloc, or
            // this), the server's allocator being in use (see above); the
            // block keeps the alignment `alloc` gives a block of `size`.
            unsafe { raw::RedisModule_Realloc.unwrap()(ptr.cast(), size).cast() }
        } else {
            // SAFETY: the caller's promises, passed on unchanged.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_redis() {
            RedisAlloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }
}

#[cfg(test)]
thread_local! {
    static REALLOCATED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Bytes that reallocations on this thread may have copied so far (the
/// smaller of each one's old and new size): the work of growing buffers,
/// for tests that bound it per operation.
#[cfg(test)]
pub fn reallocated_bytes() -> usize {
    REALLOCATED.get()
}

/// The bytes the allocator gave for `ptr`, an allocation of `requested`
/// bytes made by [`ModuleAlloc`] (0 for no allocation): its size class in
/// Redis, which is what `used_memory` counts, so MEMORY USAGE can tell the
/// truth; `requested` itself outside a server.
pub fn allocated<T: ?Sized>(ptr: *const T, requested: usize) -> usize {
    if requested == 0 || !in_redis() {
        return requested;
    }
    // SAFETY: the server's allocator is in use (checked above), so `ptr`,
    // a live allocation of `requested > 0` bytes made by `ModuleAlloc`,
    // came from `RedisModule_Alloc`, which `RedisModule_MallocSize` reads.
    unsafe { raw::RedisModule_MallocSize.unwrap()(ptr.cast_mut().cast()) }
}
