//! The GPU path without a GPU: the binary keeps libtorch's CUDA backend as a dependency
//! when the libtorch it was built against ships one, loads it at run time, and says which
//! device it chose and why.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_shogi-zero");

/// The library directory of the venv's torch, found independently of the binary.
fn libtorch_dir() -> PathBuf {
    let out = Command::new(shogi_testkit::python())
        .args([
            "-c",
            "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the venv's python cannot import torch (run scripts/bootstrap.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The shared libraries the ELF file lists as NEEDED (`readelf -d`, from binutils, which
/// the linker comes with).
fn needed(path: &str) -> Vec<String> {
    let out = Command::new("readelf")
        .args(["-d", path])
        .output()
        .expect("readelf (binutils) is needed to read the binary's dependencies");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .collect()
}

fn info(device: &str) -> (String, String) {
    let out = Command::new(BIN)
        .args(["info", "--device", device])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "info failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// The binary runs wherever libtorch and the C/C++ runtime are: on a GPU image without
/// font, image or compression libraries too (the first GPU session found it asking for
/// fontconfig and freetype, which plotters' system-font feature had linked).
#[test]
fn the_binary_needs_only_libtorch_and_the_c_runtime() {
    let runtime = [
        "libc.so",
        "libm.so",
        "libgcc_s.so",
        "libstdc++.so",
        "libdl.so",
        "libpthread.so",
        "librt.so",
        "libutil.so",
        "ld-linux",
    ];
    let libtorch = ["libtorch", "libc10"];
    let others: Vec<String> = needed(BIN)
        .into_iter()
        .filter(|l| !runtime.iter().chain(&libtorch).any(|p| l.starts_with(p)))
        .collect();
    assert!(
        others.is_empty(),
        "the binary needs more than libtorch and the C runtime: {others:?}"
    );
}

#[test]
fn the_cuda_backend_is_linked_and_loaded_when_libtorch_ships_one() {
    let dir = libtorch_dir();
    let libs = needed(BIN);
    assert!(libs.iter().any(|l| l == "libtorch_cpu.so"), "{libs:?}");
    let (stdout, _) = info("cpu");
    let backend = stdout
        .lines()
        .find(|l| l.starts_with("cuda backend: "))
        .unwrap_or_else(|| panic!("no cuda backend line:\n{stdout}"));
    if dir.join("libtorch_cuda.so").exists() {
        for lib in ["libtorch_cuda.so", "libtorch.so"] {
            assert!(
                libs.iter().any(|l| l == lib),
                "{lib} is not among the binary's NEEDED libraries although {} ships it: {libs:?}",
                dir.display()
            );
        }
        // Mapped at run time, from the venv's libtorch.
        let expected = format!(
            "CUDA backend linked ({})",
            dir.join("libtorch_cuda.so").display()
        );
        let canonical = format!(
            "CUDA backend linked ({})",
            dir.canonicalize()
                .unwrap()
                .join("libtorch_cuda.so")
                .display()
        );
        assert!(
            backend.contains(&expected) || backend.contains(&canonical),
            "{backend}"
        );
    } else {
        eprintln!(
            "{} is a CPU-only torch (no libtorch_cuda.so): nothing to link, and the binary says so",
            dir.display()
        );
        assert!(backend.contains("CPU-only build"), "{backend}");
    }
}

#[test]
fn info_says_which_device_and_why() {
    let (stdout, stderr) = info("cpu");
    assert!(
        stdout.contains("device cpu (requested \"cpu\"; the CPU was asked for)"),
        "{stdout}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let (stdout, stderr) = info("auto");
    if stdout.contains("cuda available: false") {
        // No GPU here: auto falls back, and that is a warning, not silence.
        assert!(stdout.contains("auto fell back to the CPU"), "{stdout}");
        assert!(
            stderr.contains("warning: --device auto runs on the CPU"),
            "{stderr}"
        );
    } else {
        assert!(stdout.contains("device cuda:0"), "{stdout}");
    }
    let out = Command::new(BIN)
        .args(["info", "--device", "tpu"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid device \"tpu\""));
}

/// The build line names the running binary's bytes (SHA-256), so the Ray launcher tells
/// two builds of one version apart: the same file gives the same line, a file that
/// differs by one byte another. A closed stdout ends `info` without a panic.
#[test]
fn info_names_the_build_by_the_binarys_hash() {
    use sha2::{Digest, Sha256};
    let build_line = |bin: &std::path::Path| {
        let out = Command::new(bin)
            .args(["info", "--device", "cpu"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with("build: "))
            .unwrap_or_else(|| panic!("no build line"))
            .to_string()
    };
    let bytes = std::fs::read(BIN).unwrap();
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(build_line(BIN.as_ref()), format!("build: sha256 {hex}"));
    // Another build: the same program with one more byte after its end (ELF ignores it).
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("shogi-zero");
    let mut changed = bytes.clone();
    changed.push(0);
    std::fs::write(&other, &changed).unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let other_line = build_line(&other);
    assert!(other_line.starts_with("build: sha256 "), "{other_line}");
    assert_ne!(other_line, build_line(BIN.as_ref()));

    // `shogi-zero info | head -1`: the reader goes away; no panic, no backtrace.
    let mut child = Command::new(BIN)
        .args(["info", "--device", "cpu"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
