//! A value whose last part is a run of items sized when it is made (a
//! window's ring): the head and the run in one allocation, so there is one
//! block to allocate, free and defragment, and one pointer less to follow.
//! Redis keeps such a value behind a thin pointer; the head says how long
//! its run is.

use std::alloc::Layout;
use std::os::raw::c_void;

/// A head and its run, laid out as C would: the run right after the head.
#[derive(Debug)]
#[repr(C)]
pub struct Tailed<H, T> {
    pub head: H,
    pub tail: [T],
}

/// How long the run after a head is: fixed for the value's life.
pub trait TailLength {
    fn tail_length(&self) -> usize;
}

/// `Tailed<H, T>`'s layout for a run of `len`, and the run's offset, as
/// repr(C) lays it out: the head at 0, the run at the next multiple of T's
/// alignment, the whole padded to the larger alignment.
fn layout<H, T>(len: usize) -> (Layout, usize) {
    let (layout, run) = Layout::new::<H>()
        .extend(Layout::array::<T>(len).expect("a run that fits in memory"))
        .expect("a value that fits in memory");
    (layout.pad_to_align(), run)
}

impl<H: TailLength, T: Copy + Default> Tailed<H, T> {
    /// One allocation: `head`, then its run of `T::default()`.
    pub fn new(head: H) -> Box<Self> {
        let len = head.tail_length();
        let (layout, run) = layout::<H, T>(len);
        // SAFETY: `layout` is `Self`'s for a run of `len`, never of size 0
        // (a head is not: it says the length). Head and run are written
        // before the box exists, and the box frees with that same layout
        // (Box<Self> computes it from the run's length, as `layout` did).
        unsafe {
            let block = std::alloc::alloc(layout);
            if block.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            block.cast::<H>().write(head);
            let items = block.add(run).cast::<T>();
            for i in 0..len {
                items.add(i).write(T::default());
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(block.cast::<T>(), len) as *mut Self)
        }
    }
}

impl<H: TailLength + Clone, T: Copy + Default> Tailed<H, T> {
    /// A deep copy: a new block, sharing nothing.
    pub fn duplicate(&self) -> Box<Self> {
        let mut copy = Tailed::new(self.head.clone());
        copy.tail.copy_from_slice(&self.tail);
        copy
    }
}

/// How Redis keeps a value: behind one thin pointer (its `void *`).
pub trait Thin {
    fn into_thin(value: Box<Self>) -> *mut c_void;
    /// The value behind a pointer `into_thin` made.
    ///
    /// # Safety
    /// `thin` came from `into_thin` of this type and is not freed.
    unsafe fn from_thin(thin: *mut c_void) -> *mut Self;
}

/// A value of a fixed size, kept in a plain box.
pub trait Boxed {}

impl<V: Boxed> Thin for V {
    fn into_thin(value: Box<Self>) -> *mut c_void {
        Box::into_raw(value).cast()
    }

    unsafe fn from_thin(thin: *mut c_void) -> *mut Self {
        thin.cast()
    }
}

impl<H: TailLength, T> Thin for Tailed<H, T> {
    fn into_thin(value: Box<Self>) -> *mut c_void {
        Box::into_raw(value).cast()
    }

    unsafe fn from_thin(thin: *mut c_void) -> *mut Self {
        // SAFETY (the caller's): `thin` is a live block made by `new`, its
        // head at offset 0, whose length it gives.
        let len = (*thin.cast::<H>()).tail_length();
        std::ptr::slice_from_raw_parts_mut(thin.cast::<T>(), len) as *mut Self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Head {
        len: usize,
        name: String,
    }

    impl TailLength for Head {
        fn tail_length(&self) -> usize {
            self.len
        }
    }

    #[test]
    fn a_head_and_its_run_live_in_one_block_and_copy_deep() {
        for len in [1, 3, 60, 3_600] {
            let head = Head {
                len,
                name: "w".repeat(len),
            };
            let mut value: Box<Tailed<Head, u32>> = Tailed::new(head.clone());
            assert_eq!(value.tail.len(), len);
            assert!(value.tail.iter().all(|&x| x == 0));
            value.tail[len - 1] = 9;
            let copy = value.duplicate();
            assert_eq!(copy.head, head);
            assert_eq!(copy.tail, value.tail);
            assert_ne!(copy.tail.as_ptr(), value.tail.as_ptr());
            let block = std::ptr::addr_of!(*value).cast::<u8>();
            let run = value.tail.as_ptr().cast::<u8>();
            assert_eq!(run as usize - block as usize, std::mem::size_of::<Head>());
            assert_eq!(
                std::mem::size_of_val(&*value),
                layout::<Head, u32>(len).0.size()
            );
            let thin = Tailed::into_thin(value);
            // SAFETY: made by into_thin just above, freed here once.
            let back = unsafe { Box::from_raw(Tailed::<Head, u32>::from_thin(thin)) };
            assert_eq!(back.tail.len(), len);
            assert_eq!(back.tail[len - 1], 9);
        }
    }
}
