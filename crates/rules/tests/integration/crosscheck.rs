//! Cross-check of the rules core against independent oracles.
//!
//! `scripts/oracle/cshogi_positions.py` (cshogi, standard shogi) and
//! `scripts/oracle/pyffish_minishogi.py` (Fairy-Stockfish, minishogi, with its pawn-drop-mate
//! quirk filtered out) play biased random playouts and label every distinct position with
//! its SFEN, sorted legal moves (USI), check and checkmate flags, and the move played from
//! it with the SFEN after it; a few positions also get a perft figure. For every position
//! this test checks: the SFEN parses and prints back identically (move number included),
//! the legal move sets are equal, every generated move prints and re-parses as the same
//! move, `in_check` and `is_checkmate` agree, the played move parses as legal and leads to
//! the oracle's SFEN with an incremental key equal to the key computed from scratch, and
//! perft agrees.
//!
//! The oracles run in the project's venv python: `$SHOGI_ZERO_PYTHON`, else
//! `<repo>/.venv/bin/python`. Without one the test fails (run `scripts/bootstrap.sh`):
//! it never passes without having compared. Oracle output is cached under
//! the cargo target tmp dir, keyed by script text, arguments, python path and
//! `scripts/requirements.txt` (`SHOGI_ZERO_ORACLE_NOCACHE=1` regenerates).
//! Sizes: `SHOGI_ZERO_XCHECK_SHOGI` (default 100000 positions), `SHOGI_ZERO_XCHECK_MINI`
//! (default 3000), `SHOGI_ZERO_XCHECK_SEED` (default 1). The `--ignored` tests run far
//! more positions with other seeds.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use shogi_rules::perft::perft;
use shogi_rules::{Position, Variant};

const SHOW: usize = 20;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn env_or(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

/// Runs an oracle script (or reuses its cached output) and returns its output text.
fn oracle(python: &Path, script: &str, args: &[String]) -> String {
    let root = repo_root();
    let script_path = root.join("scripts/oracle").join(script);
    let script_text = std::fs::read(&script_path)
        .unwrap_or_else(|e| panic!("crosscheck: cannot read {}: {e}", script_path.display()));
    let mut h = DefaultHasher::new();
    script_text.hash(&mut h);
    args.hash(&mut h);
    python.hash(&mut h);
    std::fs::read(root.join("scripts/requirements.txt"))
        .unwrap_or_default()
        .hash(&mut h);
    let cache_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-cache");
    std::fs::create_dir_all(&cache_dir).unwrap();
    let stem = script.trim_end_matches(".py");
    let cache = cache_dir.join(format!("{stem}-{:016x}.tsv", h.finish()));
    let nocache = std::env::var("SHOGI_ZERO_ORACLE_NOCACHE").is_ok_and(|v| v == "1");
    if !nocache && let Ok(text) = std::fs::read_to_string(&cache) {
        eprintln!("crosscheck: {script}: cached output {}", cache.display());
        return text;
    }
    let tmp = cache.with_extension(format!("tmp{}", std::process::id()));
    let t = Instant::now();
    let out = Command::new(python)
        .arg(&script_path)
        .args(args)
        .arg("--out")
        .arg(&tmp)
        .output()
        .unwrap_or_else(|e| panic!("crosscheck: cannot run {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "crosscheck: oracle {script} {args:?} failed ({}); is the venv complete \
         (scripts/bootstrap.sh)?\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &cache).unwrap();
    eprintln!(
        "crosscheck: {script} {args:?}: generated in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    std::fs::read_to_string(&cache).unwrap()
}

#[derive(Default)]
struct Report {
    positions: usize,
    perfts: usize,
    mismatches: usize,
    shown: Vec<String>,
    /// How many lines failed each kind of check.
    kinds: BTreeMap<&'static str, usize>,
}

impl Report {
    fn bad(&mut self, msg: String) {
        self.mismatches += 1;
        if self.shown.len() < SHOW {
            self.shown.push(msg);
        }
    }
}

/// The problems found in one oracle line, each tagged with the kind of check.
#[derive(Default)]
struct Problems {
    text: String,
    kinds: Vec<&'static str>,
}

impl Problems {
    fn add(&mut self, kind: &'static str, msg: String) {
        self.text.push_str("; ");
        self.text.push_str(&msg);
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    fn report(self, r: &mut Report, sfen: &str) {
        if self.kinds.is_empty() {
            return;
        }
        for k in self.kinds {
            *r.kinds.entry(k).or_default() += 1;
        }
        r.bad(format!("{sfen}{}", self.text));
    }
}

/// `a - b` and `b - a` for sorted slices.
fn diff<'a>(a: &[&'a str], b: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            only_a.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j] < a[i] {
            only_b.push(b[j]);
            j += 1;
        } else {
            i += 1;
            j += 1;
        }
    }
    (only_a, only_b)
}

fn flag(s: &str, sfen: &str) -> bool {
    match s {
        "0" => false,
        "1" => true,
        _ => panic!("bad flag `{s}` in oracle line for {sfen}"),
    }
}

fn check_position(variant: Variant, f: &[&str], r: &mut Report) {
    assert!(f.len() == 7, "bad oracle line: {f:?}");
    let sfen = f[1];
    r.positions += 1;
    let pos = match Position::from_sfen(variant, sfen) {
        Ok(p) => p,
        Err(e) => {
            *r.kinds.entry("from_sfen").or_default() += 1;
            return r.bad(format!("{sfen}: from_sfen failed: {e}"));
        }
    };
    let mut problems = Problems::default();
    let back = pos.to_sfen();
    if back != sfen {
        problems.add("to_sfen", format!("to_sfen gives `{back}`"));
    }
    // Legal moves.
    let list = pos.legal_moves();
    let mut ours: Vec<String> = Vec::with_capacity(list.len());
    for &mv in list.iter() {
        let s = mv.to_string();
        if pos.parse_usi_syntax(&s) != Some(mv) {
            problems.add(
                "move re-parse",
                format!("move {s} does not re-parse to itself"),
            );
        }
        ours.push(s);
    }
    ours.sort_unstable();
    let before = ours.len();
    ours.dedup();
    if ours.len() != before {
        problems.add(
            "duplicate moves",
            format!("{} duplicate moves generated", before - ours.len()),
        );
    }
    let ours_ref: Vec<&str> = ours.iter().map(String::as_str).collect();
    let mut theirs: Vec<&str> = f[2].split(' ').filter(|s| !s.is_empty()).collect();
    theirs.sort_unstable();
    let (missing, extra) = diff(&theirs, &ours_ref);
    if !missing.is_empty() || !extra.is_empty() {
        problems.add(
            "legal moves",
            format!(
                "moves: {} oracle vs {} ours, missing (oracle only) {:?}, extra (ours only) {:?}",
                theirs.len(),
                ours.len(),
                missing,
                extra
            ),
        );
    }
    let check = flag(f[3], sfen);
    let mate = flag(f[4], sfen);
    if pos.in_check() != check {
        problems.add(
            "in_check",
            format!("in_check {} (oracle {check})", pos.in_check()),
        );
    }
    if pos.is_checkmate() != mate {
        problems.add(
            "is_checkmate",
            format!("is_checkmate {} (oracle {mate})", pos.is_checkmate()),
        );
    }
    // The move played from here and the position after it.
    let (played, child_sfen) = (f[5], f[6]);
    if !played.is_empty() {
        match pos.parse_usi_move(played) {
            Err(e) => {
                problems.add(
                    "played move rejected",
                    format!("played move {played} rejected: {e}"),
                );
            }
            Ok(mv) => {
                let child = pos.after(mv);
                let got = child.to_sfen();
                if got != child_sfen {
                    problems.add(
                        "sfen after move",
                        format!("after {played}: `{got}` (oracle `{child_sfen}`)"),
                    );
                }
                if child.key() != child.key_from_scratch() {
                    problems.add(
                        "incremental key",
                        format!("after {played}: incremental key != key from scratch"),
                    );
                }
                match Position::from_sfen(variant, child_sfen) {
                    Ok(c) if c.key() != child.key() => {
                        problems.add(
                            "key vs parsed child",
                            format!("after {played}: key differs from the parsed child's"),
                        );
                    }
                    Ok(_) => {}
                    Err(e) => {
                        problems.add(
                            "child from_sfen",
                            format!("child `{child_sfen}` does not parse: {e}"),
                        );
                    }
                }
            }
        }
    }
    problems.report(r, sfen);
}

fn check_perft(variant: Variant, f: &[&str], r: &mut Report) {
    assert!(f.len() == 4, "bad perft line: {f:?}");
    let (sfen, depth, nodes): (&str, u32, u64) =
        (f[1], f[2].parse().unwrap(), f[3].parse().unwrap());
    r.perfts += 1;
    match Position::from_sfen(variant, sfen) {
        Err(e) => {
            *r.kinds.entry("from_sfen").or_default() += 1;
            r.bad(format!("{sfen}: from_sfen failed: {e}"));
        }
        Ok(pos) => {
            let got = perft(&pos, depth, true);
            if got != nodes {
                *r.kinds.entry("perft").or_default() += 1;
                r.bad(format!("{sfen}: perft({depth}) = {got}, oracle {nodes}"));
            }
        }
    }
}

fn crosscheck(variant: Variant, script: &str, args: &[String], min_positions: usize) {
    let py = shogi_testkit::python();
    let t0 = Instant::now();
    let text = oracle(&py, script, args);
    let t_oracle = t0.elapsed();
    let t1 = Instant::now();
    let mut r = Report::default();
    let mut summary = String::new();
    for line in text.lines() {
        if line.starts_with('#') {
            summary = line.to_string();
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "pos" => check_position(variant, &f, &mut r),
            "perft" => check_perft(variant, &f, &mut r),
            "" => {}
            other => panic!("bad oracle line kind `{other}`"),
        }
    }
    eprintln!("crosscheck: {summary}");
    eprintln!(
        "crosscheck: {} {} positions and {} perft figures checked in {:.1} s (oracle {:.1} s), {} mismatches",
        variant.name(),
        r.positions,
        r.perfts,
        t1.elapsed().as_secs_f64(),
        t_oracle.as_secs_f64(),
        r.mismatches
    );
    assert!(
        r.positions >= min_positions,
        "crosscheck: oracle {script} gave only {} positions (want {min_positions})",
        r.positions
    );
    if r.mismatches > 0 {
        let mut msg = format!(
            "crosscheck: {} of {} {} positions/perfts disagree with {script}; lines failing \
             each check: {:?}; first {}:\n",
            r.mismatches,
            r.positions + r.perfts,
            variant.name(),
            r.kinds,
            r.shown.len()
        );
        for s in &r.shown {
            msg.push_str("  ");
            msg.push_str(s);
            msg.push('\n');
        }
        panic!("{msg}");
    }
}

/// `count` random positions of `variant` from the oracle `script` (seeded), `perfts` of
/// them also perft-checked to `perft_depth`.
fn against_oracle(
    variant: Variant,
    script: &str,
    perft_depth: u32,
    (count, seed, perfts): (u64, u64, u64),
) {
    let args: Vec<String> = vec![
        "--count".into(),
        count.to_string(),
        "--seed".into(),
        seed.to_string(),
        "--perft".into(),
        perfts.to_string(),
        "--perft-depth".into(),
        perft_depth.to_string(),
    ];
    crosscheck(variant, script, &args, (count as usize) * 9 / 10);
}

fn shogi(count: u64, seed: u64, perfts: u64) {
    against_oracle(
        Variant::Shogi,
        "cshogi_positions.py",
        3,
        (count, seed, perfts),
    );
}

fn minishogi(count: u64, seed: u64, perfts: u64) {
    against_oracle(
        Variant::Minishogi,
        "pyffish_minishogi.py",
        2,
        (count, seed, perfts),
    );
}

#[test]
fn shogi_matches_cshogi() {
    let seed = env_or("SHOGI_ZERO_XCHECK_SEED", 1);
    shogi(env_or("SHOGI_ZERO_XCHECK_SHOGI", 100_000), seed, 20);
}

#[test]
fn minishogi_matches_pyffish() {
    let seed = env_or("SHOGI_ZERO_XCHECK_SEED", 1);
    minishogi(env_or("SHOGI_ZERO_XCHECK_MINI", 3_000), seed, 8);
}

#[test]
#[ignore = "long: 1M cshogi positions"]
fn shogi_matches_cshogi_long() {
    shogi(1_000_000, 1_000 + env_or("SHOGI_ZERO_XCHECK_SEED", 1), 100);
}

#[test]
#[ignore = "long: 20k pyffish positions (minutes)"]
fn minishogi_matches_pyffish_long() {
    minishogi(20_000, 1_000 + env_or("SHOGI_ZERO_XCHECK_SEED", 1), 40);
}
