//! The Ray launcher (scripts/ray/shogi_zero_ray.py) on a local two-node Ray cluster with
//! token authentication, under faults: a self-play actor and then the learner actor are
//! killed mid-run (scripts/ray/fault_test.py, one line per check); the multi-machine
//! recipe's security (scripts/ray/security_test.py: a head started by
//! scripts/ray/cluster.py refuses a client without the token, the launcher refuses a
//! cluster that does not); the launcher's parts that need no cluster
//! (scripts/ray/launcher_test.py); and the launcher without Ray says how to install it.

use std::process::Command;

use shogi_testkit::{python, repo_root};

const BIN: &str = env!("CARGO_BIN_EXE_shogi-zero");

#[test]
fn ray_run_survives_a_lost_selfplay_actor_and_a_lost_learner() {
    let out = Command::new(python())
        .arg(repo_root().join("scripts/ray/fault_test.py"))
        .args(["--binary", BIN, "--seed", "1"])
        .current_dir(repo_root())
        .output()
        .expect("run scripts/ray/fault_test.py");
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "fault_test.py failed ({}):\n{text}\n--- stderr (tail) ---\n{}",
        out.status,
        tail(&errors, 4000)
    );
    assert!(text.contains("all checks passed"), "{text}");
}

#[test]
fn the_multi_machine_recipe_refuses_whoever_lacks_the_token() {
    let out = Command::new(python())
        .arg(repo_root().join("scripts/ray/security_test.py"))
        .current_dir(repo_root())
        .output()
        .expect("run scripts/ray/security_test.py");
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("all checks passed"),
        "security_test.py failed ({}):\n{text}\n--- stderr (tail) ---\n{}",
        out.status,
        tail(&errors, 4000)
    );
}

#[test]
fn the_launchers_supervision_without_a_cluster() {
    let out = Command::new(python())
        .arg(repo_root().join("scripts/ray/launcher_test.py"))
        .current_dir(repo_root())
        .output()
        .expect("run scripts/ray/launcher_test.py");
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "launcher_test.py failed ({}):\n{}",
        out.status,
        tail(&errors, 6000)
    );
    // unittest's summary: every test ran, none was skipped.
    let summary = errors.lines().rev().find(|l| !l.trim().is_empty());
    assert_eq!(summary, Some("OK"), "{}", tail(&errors, 6000));
}

#[test]
fn the_launcher_without_ray_says_how_to_install_it() {
    // Hide the package as a machine without Ray would: `import ray` fails.
    let script = format!(
        "import sys, runpy; sys.modules['ray'] = None; \
         sys.argv = ['shogi_zero_ray.py', 'configs/smoke.toml']; \
         runpy.run_path({:?}, run_name='__main__')",
        repo_root()
            .join("scripts/ray/shogi_zero_ray.py")
            .display()
            .to_string()
    );
    let out = Command::new(python())
        .args(["-c", &script])
        .current_dir(repo_root())
        .output()
        .expect("run python");
    let errors = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{errors}");
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(lines.len(), 1, "one line, not a traceback: {errors}");
    assert!(
        lines[0].contains("Ray is not installed") && lines[0].contains("pip install 'ray=="),
        "{errors}"
    );
}

fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
