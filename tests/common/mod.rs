//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};

/// `../shared` beside the checkout (CI lays it there), or `TOOLCOST_SHARED`.
pub fn shared() -> PathBuf {
    let dir = std::env::var_os("TOOLCOST_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    assert!(
        dir.join("real-mcp").is_dir(),
        "shared/real-mcp not found at {}; set TOOLCOST_SHARED",
        dir.display()
    );
    dir
}

/// Every capture in shared/real-mcp, as (file name, path).
pub fn real_mcp_captures() -> Vec<(String, PathBuf)> {
    let mut out: Vec<_> = std::fs::read_dir(shared().join("real-mcp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    assert_eq!(out.len(), 10, "expected ten captures");
    out
}

pub fn seed_catalogue(n: usize) -> Catalogue {
    Catalogue::from_rows(
        "test",
        generate(Profile::named("seed-2026-07").unwrap(), n, 1),
    )
}
