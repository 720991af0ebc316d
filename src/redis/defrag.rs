//! Active defragmentation of module values: Redis asks each value, key by
//! key, to move its allocations out of sparsely used pages; a [`Mover`]
//! moves one buffer at a time, and tells a long walk when to stop and
//! come back (Redis keeps the cursor).

use std::os::raw::c_ulong;

use redis_module::raw;

use crate::stats;

/// Moves a value's buffers within one defrag callback, one at a time in
/// the order the value visits them, and stops when the server says so:
/// the count of buffers visited is the cursor a later call resumes from
/// (a value changed in between is visited again from about there).
pub struct Mover {
    ctx: *mut raw::RedisModuleDefragCtx,
    /// Buffers visited in earlier calls of this walk: skipped.
    resume_after: u64,
    visited: u64,
    moves_since_asked: u32,
    /// Where this call stopped, when it did.
    stopped: Option<u64>,
}

/// Moves between two questions to the server whether to stop: asking is a
/// clock reading.
const MOVES_PER_QUESTION: u32 = 16;

impl Mover {
    /// # Safety
    /// `ctx` is the defrag context of the running callback, and the mover
    /// is dropped before the callback returns.
    pub(super) unsafe fn new(ctx: *mut raw::RedisModuleDefragCtx) -> Self {
        let mut cursor: c_ulong = 0;
        // SAFETY: the running callback's context; Redis writes the cursor
        // only when this is a resumed walk, else it stays 0.
        raw::RedisModule_DefragCursorGet.unwrap()(ctx, &mut cursor);
        Mover {
            ctx,
            resume_after: cursor,
            visited: 0,
            moves_since_asked: 0,
            stopped: None,
        }
    }

    /// The buffer's address after a move, or `None` when the allocator
    /// advised leaving it.
    ///
    /// # Safety
    /// `ptr` is a live allocation made by Redis's allocator; when moved,
    /// the old address is freed and must not be used again.
    pub(super) unsafe fn moved<T>(&mut self, ptr: *mut T) -> Option<*mut T> {
        let moved = raw::RedisModule_DefragAlloc.unwrap()(self.ctx, ptr.cast());
        if moved.is_null() {
            return None;
        }
        stats::DEFRAG_MOVES.bump();
        Some(moved.cast())
    }

    /// Is the next buffer of the walk to be moved in this call?
    fn next_is_ours(&mut self) -> bool {
        self.visited += 1;
        if self.visited <= self.resume_after || self.stopped.is_some() {
            return false;
        }
        self.moves_since_asked += 1;
        if self.moves_since_asked > MOVES_PER_QUESTION {
            self.moves_since_asked = 0;
            // SAFETY: the running callback's context (see `new`).
            if unsafe { raw::RedisModule_DefragShouldStop.unwrap()(self.ctx) } != 0 {
                self.stopped = Some(self.visited - 1);
                return false;
            }
        }
        true
    }

    /// Moves a boxed slice's buffer if the allocator advises it.
    pub fn boxed_slice<T>(&mut self, slice: &mut Box<[T]>) {
        if std::mem::size_of_val(&**slice) == 0 || !self.next_is_ours() {
            return; // no allocation behind it, or not this call's
        }
        let len = slice.len();
        let ptr = slice.as_mut_ptr();
        // SAFETY: a non-empty boxed slice owns one allocation made by the
        // global allocator, which in a server is Redis's. When it moves,
        // the bytes are copied to the new address and the old one freed:
        // the old box is forgotten, never dropped, and a box of the same
        // length is rebuilt at the new address (same size class, same
        // layout).
        unsafe {
            if let Some(moved) = self.moved(ptr) {
                std::ptr::write(
                    slice,
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(moved, len)),
                );
            }
        }
    }

    /// Moves a vector's buffer if the allocator advises it.
    pub fn vec<T>(&mut self, vec: &mut Vec<T>) {
        if vec.capacity() == 0 || std::mem::size_of::<T>() == 0 || !self.next_is_ours() {
            return; // no allocation behind it, or not this call's
        }
        let (len, capacity, ptr) = (vec.len(), vec.capacity(), vec.as_mut_ptr());
        // SAFETY: as for `boxed_slice`: the vector's one allocation, with
        // its length and capacity kept.
        unsafe {
            if let Some(moved) = self.moved(ptr) {
                std::ptr::write(vec, Vec::from_raw_parts(moved, len, capacity));
            }
        }
    }

    /// Ends the call: 1 with the cursor kept when it stopped half way
    /// (Redis calls again later), 0 when the walk is done.
    pub(super) fn finish(self) -> i32 {
        match self.stopped {
            Some(visited) => {
                // SAFETY: the running callback's context.
                unsafe { raw::RedisModule_DefragCursorSet.unwrap()(self.ctx, visited as c_ulong) };
                1
            }
            None => 0,
        }
    }
}

/// Are the defrag functions there (Redis 6.2, Valkey 7.2 on)? Without
/// them no type registers a defrag callback.
pub(super) fn available() -> bool {
    // SAFETY: copies of function pointers the server filled at load.
    let (alloc, stop, get, set) = unsafe {
        (
            raw::RedisModule_DefragAlloc,
            raw::RedisModule_DefragShouldStop,
            raw::RedisModule_DefragCursorGet,
            raw::RedisModule_DefragCursorSet,
        )
    };
    alloc.is_some() && stop.is_some() && get.is_some() && set.is_some()
}
