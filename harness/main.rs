fn main() {
    std::process::exit(toolcost::cli::main());
}
