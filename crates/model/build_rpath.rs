// Shared build-script logic: embed an rpath to libtorch's lib directory into every binary,
// test and example of the including package, so they run from any shell without
// LD_LIBRARY_PATH.
//
// Used by `include!` (so no inner attributes or `//!` docs here). A package that links tch
// gets the same behaviour with:
//   Cargo.toml:  [dependencies] torch-sys.workspace = true   (torch-sys has `links = "tch"`,
//                so only a *direct* dependent's build script receives DEP_TCH_LIBTORCH_LIB)
//                and `build = "build.rs"` (the default when build.rs exists)
//   build.rs:    include!("../model/build_rpath.rs");
//
// `cargo:rustc-link-arg` only applies to the targets of the package whose build script prints
// it, which is why every package producing tch-linked executables needs this.
//
// Lookup order: DEP_TCH_LIBTORCH_LIB (from torch-sys), $LIBTORCH/lib, then the torch of
// $SHOGI_ZERO_PYTHON (or python3) on PATH.

use std::path::PathBuf;
use std::process::Command;

fn libtorch_lib_dir() -> Option<PathBuf> {
    // 1. Exported by torch-sys's build script (`cargo:libtorch_lib=...`).
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB")
        && !dir.is_empty()
    {
        return Some(PathBuf::from(dir));
    }
    // 2. An explicit LIBTORCH install.
    if let Ok(root) = std::env::var("LIBTORCH") {
        let dir = PathBuf::from(root).join("lib");
        if dir.is_dir() {
            return Some(dir);
        }
    }
    // 3. The PyTorch of the python on PATH (scripts/env.sh puts the venv first).
    let python = std::env::var("SHOGI_ZERO_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let out = Command::new(python)
        .args([
            "-c",
            "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    dir.is_dir().then_some(dir)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-env-changed=SHOGI_ZERO_PYTHON");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "linux" && target_os != "macos" {
        return;
    }
    match libtorch_lib_dir() {
        Some(dir) => {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
            // libtorch registers its CUDA backend from static initialisers in
            // libtorch_cuda.so, and nothing in tch references a symbol of it, so the
            // linker's default --as-needed drops it and `Cuda::is_available()` is false
            // on a GPU machine (tch-rs issues 291, 980). Keep it (and libtorch.so) as
            // NEEDED whenever the libtorch we build against ships it; a CPU-only
            // libtorch has no libtorch_cuda.so and links as before.
            if target_os == "linux" && dir.join("libtorch_cuda.so").exists() {
                println!(
                    "cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,-ltorch_cuda,-ltorch,--pop-state"
                );
            }
        }
        None => {
            println!(
                "cargo:warning=shogi-model: libtorch lib dir not found; binaries will need LD_LIBRARY_PATH"
            );
        }
    }
}
