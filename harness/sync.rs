//! Taking a lock that a panicking thread may have poisoned.
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
