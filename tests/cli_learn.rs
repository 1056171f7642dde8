//! `shogi-zero selfplay` then `shogi-zero learn` end to end: a candidate appears.

fn shogi_zero(args: &[&str]) -> String {
    let out = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn selfplay_then_learn_writes_a_candidate() {
    let tmp = tempfile::tempdir().unwrap();
    let replay = tmp.path().join("R");
    let run = tmp.path().join("RUN");
    let (r, g) = (replay.to_str().unwrap(), run.to_str().unwrap());
    shogi_zero(&[
        "selfplay",
        "--uniform",
        "--variant",
        "minishogi",
        "--games",
        "4",
        "--simulations",
        "8",
        "--max-plies",
        "60",
        "--out",
        r,
    ]);
    let text = shogi_zero(
        &[
            "learn",
            "--replay",
            r,
            "--run",
            g,
            "--steps",
            "7",
            "--export-every",
            "5",
        ]
        .iter()
        .chain(TINY_NET_ON_CPU)
        .copied()
        .collect::<Vec<_>>(),
    );
    assert!(text.contains("steps: 7"), "{text}");
    // Its libtorch threads follow the cores the process may use unless given.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        text.contains(&format!(
            "learn: {cores} libtorch CPU threads (--torch-threads auto"
        )),
        "{text}"
    );
    // Every 5 steps, and the steps after the last of those: nothing trained is lost.
    let mut candidates: Vec<String> = std::fs::read_dir(run.join("candidates"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    candidates.sort();
    assert_eq!(candidates, ["step-00000005", "step-00000007"], "{text}");
    assert!(run.join("candidates/step-00000007/manifest.json").exists());

    // Learning again into the same run goes on from its newest network: steps 8-10,
    // nothing written over. A chunk of another game in the replay is passed over.
    std::fs::copy(
        shogi_testkit::repo_root().join("crates/rules/tests/data/records/floodgate-multi.csa"),
        tmp.path().join("g.csa"),
    )
    .unwrap();
    let shogi = tmp.path().join("S");
    shogi_zero(&[
        "import",
        tmp.path().join("g.csa").to_str().unwrap(),
        "--out",
        shogi.to_str().unwrap(),
    ]);
    for chunk in std::fs::read_dir(&shogi).unwrap().filter_map(|e| e.ok()) {
        if chunk.path().extension().is_some_and(|e| e == "szgr") {
            std::fs::copy(
                chunk.path(),
                replay.join(format!("zz-shogi-{}", chunk.file_name().to_string_lossy())),
            )
            .unwrap();
        }
    }
    let before = std::fs::read(run.join("candidates/step-00000007/manifest.json")).unwrap();
    let text = shogi_zero(
        &[
            "learn",
            "--replay",
            r,
            "--run",
            g,
            "--steps",
            "3",
            "--variant",
            "minishogi",
            "--torch-threads",
            "1",
        ]
        .iter()
        .chain(TINY_NET_ON_CPU)
        .copied()
        .collect::<Vec<_>>(),
    );
    assert!(
        text.contains("continuing from") && text.contains("step-00000007"),
        "{text}"
    );
    assert!(
        text.contains("learn: 1 libtorch CPU threads (--torch-threads 1;"),
        "{text}"
    );
    // With its momentum, as a run's learner goes on.
    assert!(
        text.contains("optimiser state restored from") && !text.contains("NOT restored"),
        "{text}"
    );
    assert!(
        run.join("candidates/step-00000010/manifest.json").exists(),
        "{text}"
    );
    let manifest =
        std::fs::read_to_string(run.join("candidates/step-00000010/manifest.json")).unwrap();
    assert!(manifest.contains("step-00000007"), "its parent: {manifest}");
    assert_eq!(
        std::fs::read(run.join("candidates/step-00000007/manifest.json")).unwrap(),
        before
    );
    // Starting from an older network of the run would export over its newer ones.
    let older = run.join("candidates/step-00000005");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args([
            "learn",
            "--replay",
            r,
            "--run",
            g,
            "--steps",
            "3",
            "--checkpoint",
        ])
        .arg(&older)
        .args(["--device", "cpu"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("is at step 10"),
        "{stderr}"
    );
}

/// The record files the rules' reader tests use (hand-written CSA and KIF), a USI file
/// and an hcpe file cshogi writes, copied into `dir`.
fn record_files(dir: &std::path::Path) {
    let data = shogi_testkit::repo_root().join("crates/rules/tests/data/records");
    for name in [
        "floodgate-multi.csa",
        "kifu-for-windows.kif",
        "narazu.kif",
        "diagram.kif",
        "handicap.kif",
    ] {
        std::fs::copy(data.join(name), dir.join(name)).unwrap();
    }
    std::fs::write(
        dir.join("lines.usi"),
        "position startpos moves 7g7f 3c3d\n\
         position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G2P 1 moves G*5b\n\
         position startpos moves 7g7f 7g7f\n",
    )
    .unwrap();
    let out = std::process::Command::new(shogi_testkit::python())
        .arg(shogi_testkit::repo_root().join("scripts/oracle/hcpe_write.py"))
        .arg(dir.join("teacher.hcpe"))
        .arg(dir.join("teacher.json"))
        .args(["1", "3"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn chunk_games(dir: &std::path::Path) -> Vec<shogi_records::GameRecord> {
    let (games, errors) = shogi_records::read_chunk_dir(dir).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    games
}

/// `learn`'s flags for a one-block, 8-channel network on the CPU.
const TINY_NET_ON_CPU: &[&str] = &["--blocks", "1", "--channels", "8", "--device", "cpu"];

/// Two steps of 16 samples.
const TWO_STEPS: &[&str] = &["--steps", "2", "--batch", "16"];

/// `import` reads every format, keeps what the filters accept, counts the rest by
/// reason, names each malformed record by file and game, resumes after a stop without
/// writing a game twice, and `learn` trains on what it wrote.
#[test]
fn import_reads_every_format_filters_resumes_and_learn_trains_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let records = tmp.path().join("records");
    std::fs::create_dir(&records).unwrap();
    record_files(&records);
    let hcpe_positions = std::fs::metadata(records.join("teacher.hcpe"))
        .unwrap()
        .len()
        / 38;
    let out = tmp.path().join("replay");
    let (r, o) = (records.to_str().unwrap(), out.to_str().unwrap());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        text
    };
    let text = run(&["import", r, "--out", o]);
    // CSA: 4 of 7 (time-up and abandoned left out, one malformed); KIF: 3 of 4 (中断
    // has no result); USI: none (its mate is diagram.kif's game again: a duplicate; the
    // others have no result or are malformed); hcpe: every position.
    let kept = 4 + 3 + hcpe_positions;
    let read = 7 + 4 + 3 + hcpe_positions;
    assert!(
        text.contains(&format!("kept {kept} of {read} records")),
        "{text}"
    );
    assert!(text.contains("ending time-up 1"), "{text}");
    assert!(text.contains("ending aborted (no result) 2"), "{text}");
    assert!(text.contains("ending unfinished (no result) 1"), "{text}");
    assert!(text.contains("malformed 2"), "{text}");
    assert!(text.contains("duplicate 1"), "{text}");
    assert!(
        text.contains("floodgate-multi.csa: game 5: csa line 129"),
        "{text}"
    );
    assert!(text.contains("lines.usi: game 3: usi line 3"), "{text}");
    let games = chunk_games(&out);
    assert_eq!(games.len() as u64, kept);
    let plies: usize = games.iter().map(|g| g.moves.len()).sum();
    assert!(
        games
            .iter()
            .all(|g| g.moves.iter().all(|m| m.searched.len() == 1))
    );
    assert!(plies as u64 > hcpe_positions);

    // Run again: everything is imported already, nothing is written twice.
    let text = run(&["import", r, "--out", o]);
    assert!(text.contains("kept 0 of 0 records"), "{text}");
    assert_eq!(chunk_games(&out).len() as u64, kept);

    // A stop after two one-game chunks of the CSA file: the rerun writes the other two.
    let csa = records.join("floodgate-multi.csa");
    let stopped = tmp.path().join("stopped");
    let whole = tmp.path().join("whole");
    let import = |out: &std::path::Path, options: &[&str]| {
        let head = [
            "import",
            csa.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        run(&[&head[..], options].concat())
    };
    for dir in [&stopped, &whole] {
        import(dir, &["--games-per-chunk", "1"]);
    }
    for n in [2, 3] {
        std::fs::remove_file(stopped.join(format!("import-{n:08}.szgr"))).unwrap();
    }
    let key = csa.display().to_string();
    let state = serde_json::json!({"done": {key.clone(): 2}, "finished": {key: false}});
    std::fs::write(stopped.join("import-state.json"), state.to_string()).unwrap();
    let text = import(&stopped, &["--games-per-chunk", "1"]);
    assert!(text.contains("resuming"), "{text}");
    assert_eq!(chunk_games(&stopped), chunk_games(&whole));

    // Filters: ratings where the record has them, and every ending.
    let filtered = tmp.path().join("filtered");
    let text = import(&filtered, &["--min-rating", "2000", "--endings", "all"]);
    assert!(text.contains("kept 3 of 7 records"), "{text}");
    assert!(text.contains("rating 2"), "{text}");

    // Bad arguments are refused by name.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["import", r, "--out", o, "--endings", "resign,flag"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown ending \"flag\""));

    // The imported games train a network.
    let net = tmp.path().join("net");
    let text = shogi_zero(
        &[
            "learn",
            "--replay",
            o,
            "--run",
            net.to_str().unwrap(),
            "--export-every",
            "2",
            "--holdout-every",
            "4",
        ]
        .iter()
        .chain(TWO_STEPS)
        .chain(TINY_NET_ON_CPU)
        .copied()
        .collect::<Vec<_>>(),
    );
    assert!(text.contains("steps: 2"), "{text}");
    // A held-out split: figures before training and after each epoch.
    assert!(text.contains("held out: "), "{text}");
    assert!(
        text.contains("epoch 0 (step 0): held-out policy top-1"),
        "{text}"
    );
    assert!(
        text.contains("epoch 1 (step 2): held-out policy top-1"),
        "{text}"
    );
    // The game is read from the chunks (above, no --variant); a --variant that is not
    // theirs is refused naming both (it once panicked on the planes' size).
    let wrong = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["learn", "--replay", o, "--run"])
        .arg(tmp.path().join("wrong"))
        .args(["--variant", "minishogi", "--steps", "1", "--device", "cpu"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--variant minishogi but the replay") && stderr.contains("is shogi"),
        "{stderr}"
    );

    // `learn --records`: the import and the training in one command, the chunks in
    // RUN/replay as `import` writes them; the same command again resumes the import.
    let both = tmp.path().join("both");
    let learn_records: Vec<&str> = ["learn", "--records", r, "--run", both.to_str().unwrap()]
        .iter()
        .chain(TWO_STEPS)
        .chain(TINY_NET_ON_CPU)
        .copied()
        .collect();
    let text = shogi_zero(&learn_records);
    assert!(
        text.contains(&format!("kept {kept} of {read} records")) && text.contains("steps: 2"),
        "{text}"
    );
    assert_eq!(chunk_games(&both.join("replay")), chunk_games(&out));
    let again = shogi_zero(&learn_records);
    // ... and the training goes on from the run's newest network.
    assert!(
        again.contains("kept 0 of 0 records") && again.contains("steps: 2 (from step 2 to 4)"),
        "{again}"
    );
    assert!(both.join("candidates/step-00000004").is_dir(), "{again}");
    let both_ways = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["learn", "--records", r, "--replay", o, "--run"])
        .arg(tmp.path().join("neither"))
        .output()
        .unwrap();
    assert!(!both_ways.status.success());
    assert!(String::from_utf8_lossy(&both_ways.stderr).contains("cannot be used with"));
}

/// Records as people have them: a Kifu for Windows file and a KI2 file in Shift_JIS (with a
/// CP932-only character), a CSA file in EUC-JP, and a file in no encoding sorted first:
/// the import reads the first three as their UTF-8 originals read, says which encoding it used,
/// skips the third by name and goes on, and exits 0.
#[test]
fn import_reads_shift_jis_and_euc_jp_and_never_stops_at_a_bad_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = shogi_testkit::repo_root().join("crates/rules/tests/data/records");
    let kif = std::fs::read_to_string(data.join("kifu-for-windows.kif"))
        .unwrap()
        .replace("棋戦：テスト対局", "棋戦：第Ⅷ期テスト対局");
    let ki2 = std::fs::read_to_string(data.join("newspaper.ki2"))
        .unwrap()
        .replace("棋戦：テスト対局", "棋戦：第Ⅷ期テスト対局");
    let csa = std::fs::read_to_string(data.join("floodgate-multi.csa"))
        .unwrap()
        .replacen("N+alice", "N+先手太郎", 1);
    let (originals, encoded) = (tmp.path().join("utf8"), tmp.path().join("encoded"));
    for dir in [&originals, &encoded] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(originals.join("game.kif"), &kif).unwrap();
    std::fs::write(originals.join("games.csa"), &csa).unwrap();
    std::fs::write(originals.join("game.ki2u"), &ki2).unwrap();
    let (sjis, _, unmappable) = encoding_rs::SHIFT_JIS.encode(&ki2);
    assert!(!unmappable);
    std::fs::write(encoded.join("game.ki2"), &sjis).unwrap();
    let (sjis, _, unmappable) = encoding_rs::SHIFT_JIS.encode(&kif);
    assert!(!unmappable);
    std::fs::write(encoded.join("game.kif"), &sjis).unwrap();
    let (euc, _, unmappable) = encoding_rs::EUC_JP.encode(&csa);
    assert!(!unmappable);
    std::fs::write(encoded.join("games.csa"), &euc).unwrap();
    std::fs::write(encoded.join("a-garbage.kif"), b"\x81\x00\xff\xfe\x80").unwrap();

    let import = |records: &std::path::Path, out: &std::path::Path| {
        let done = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
            .args([
                "import",
                records.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        assert!(done.status.success(), "{text}");
        text
    };
    let (from_utf8, from_encoded) = (tmp.path().join("a"), tmp.path().join("b"));
    import(&originals, &from_utf8);
    let text = import(&encoded, &from_encoded);
    assert!(text.contains("game.kif: read as Shift_JIS"), "{text}");
    assert!(text.contains("games.csa: read as EUC-JP"), "{text}");
    assert!(text.contains("game.ki2: read as Shift_JIS"), "{text}");
    assert!(
        text.contains("a-garbage.kif: the file:") && text.contains("not text in UTF-8"),
        "{text}"
    );
    assert!(text.contains("files skipped 1 (unreadable)"), "{text}");
    let skipped = std::fs::read_to_string(from_encoded.join("skipped.txt")).unwrap();
    assert!(skipped.contains("a-garbage.kif"), "{skipped}");
    // Run again, the unreadable file is tried again and listed once.
    let again = import(&encoded, &from_encoded);
    assert!(again.contains("a-garbage.kif: the file:"), "{again}");
    assert_eq!(
        std::fs::read_to_string(from_encoded.join("skipped.txt")).unwrap(),
        skipped
    );
    let games = chunk_games(&from_encoded);
    assert!(!games.is_empty());
    assert_eq!(games, chunk_games(&from_utf8));

    // Nothing readable at all is an error.
    let none = tmp.path().join("none");
    std::fs::create_dir(&none).unwrap();
    std::fs::write(none.join("x.kif"), b"\x81\x00\xff").unwrap();
    let failed = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["import", none.to_str().unwrap(), "--out"])
        .arg(tmp.path().join("c"))
        .output()
        .unwrap();
    assert!(!failed.status.success());
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains("none of the 1 record files"),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
}

/// No value of a `learn` flag panics: a network that would not build, a learning rate
/// that is no number above 0 and an empty batch are refused by name before any step.
#[test]
fn learn_refuses_bad_flags_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let replay = tmp.path().join("replay");
    std::fs::create_dir(&replay).unwrap();
    for (flags, says) in [
        (
            &["--channels", "0"][..],
            "--channels 0: channels must be > 0",
        ),
        (&["--blocks", "100000"][..], "blocks = 100000 exceeds"),
        (&["--lr=-1"][..], "is not a learning rate"),
        (&["--lr", "nan"][..], "is not a learning rate"),
        (&["--batch", "0"][..], "must be at least 1"),
        (&["--torch-threads", "0"][..], "is not a thread count"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
            .args(["learn", "--variant", "shogi", "--device", "cpu", "--replay"])
            .arg(&replay)
            .arg("--run")
            .arg(tmp.path().join("run"))
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(1 | 2)) && stderr.contains(says),
            "{flags:?}: {stderr}"
        );
    }
}
