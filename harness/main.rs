fn main() {
    limit_malloc_arenas();
    std::process::exit(toolcost::cli::main());
}

/// glibc gives threads up to eight heaps per core, and memory freed into one heap is not reused
/// by threads of another, so work spread over short-lived threads (surfaces, rows, tools on
/// each core) grew the resident size by a fifth over working on one thread. One heap per core
/// keeps it where a single thread would.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let cores = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets an allocator parameter; called before any other thread runs.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores);
        }
    }
}
