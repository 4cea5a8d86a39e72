//! Taking a lock that a panicking thread may have poisoned, and spreading independent work
//! over the machine's cores.
//!
//! The server's and the gateway's shared state sits behind a `Mutex` or `RwLock`. Should one
//! request panic while holding it, std marks the lock poisoned and every later `unwrap()`
//! would panic too: one failure would become a server that refuses everything. The data these
//! locks guard cannot be left half-changed: a SQLite connection's writes are each one
//! statement or one transaction (committed, or rolled back when the guard unwinds), and the
//! other values are replaced whole. So the next caller takes the lock as it is.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Lock a mutex, recovering it if a panic poisoned it.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Read-lock, recovering the lock if a panic poisoned it.
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Write-lock, recovering the lock if a panic poisoned it.
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// Hand memory the allocator holds free back to the system (the binary allocates with
/// mimalloc; where another allocator is in use this releases nothing of it).
pub fn release_freed() {
    // SAFETY: mi_collect only releases free pages of the allocator; it touches no live
    // allocation, and may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// Fewer items than this are worked on in the calling thread: starting threads would cost more
/// than the split saves (an assumed figure; the items here are rows, tools or lines).
const MIN_SPLIT: usize = 64;

/// The machine's cores, asked once: the answer comes from reading control-group files, which
/// costs more than a small request's whole handling.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `f` applied to every item, the items split into one contiguous share per core and worked on
/// side by side; the results come back in the items' order. A panic in `f` is raised here.
pub fn map_on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < MIN_SPLIT || cores() < 2 {
        return items.iter().map(f).collect();
    }
    let cores = cores();
    let share = items.len().div_ceil(cores);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(share)
            .map(|chunk| s.spawn(move || chunk.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_items_order() {
        let items: Vec<u32> = (0..1001).collect();
        assert_eq!(
            super::map_on_cores(&items, |x| x * 2),
            (0..1001).map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(super::map_on_cores(&[] as &[u32], |x| *x).is_empty());
    }
}
