/// The allocator. toolcost makes and frees millions of small JSON nodes and strings on both
/// cores; glibc's allocator spent about a fifth of a large measure's samples (observed with
/// perf on an 85,600-tool capture), mimalloc a fraction of that. Small commands hold some 50 MB
/// more with it; large ones about the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(toolcost::cli::main());
}
