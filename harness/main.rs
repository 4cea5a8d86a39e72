/// The allocator. toolcost makes and frees millions of small JSON nodes and strings on both
/// cores; glibc's allocator spent about a fifth of a large measure's samples (observed with
/// perf on an 85,600-tool capture), mimalloc a fraction of that. Small commands hold some 50 MB
/// more with it; large ones about the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    no_huge_pages();
    std::process::exit(toolcost::cli::main());
}

/// Turn transparent huge pages off for this process. mimalloc asks for huge pages on its large
/// regions, and where the kernel compacts memory for such requests as they fault in (the
/// `madvise` defrag setting, common on distributions) a large job stalls in the kernel:
/// measuring an 85,600-row catalogue on every surface spent 1.8-2.7 s in the kernel with them
/// and 1.0-1.1 s without, and no run was slower without (observed on a 2-core machine,
/// alternated runs). The setting passes to the processes it starts (stdio MCP servers). Where
/// the call is refused nothing changes.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE reads its integer arguments and touches no memory of ours; all
    // four are passed at full width, as the kernel reads them.
    unsafe {
        let (on, unused): (libc::c_ulong, libc::c_ulong) = (1, 0);
        libc::prctl(libc::PR_SET_THP_DISABLE, on, unused, unused, unused);
    }
}
