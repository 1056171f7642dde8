//! An import into replay chunks that resumes: `import_run::import_files` run twice on the
//! same files, on a file that cannot be read, and on a damaged resume state.

use std::path::PathBuf;

use shogi_records::import::{ImportFilter, RecordFormat, record_files};
use shogi_records::import_run::{
    ImportRunError, ImportWatch, SKIPPED_FILE, STATE_FILE, import_files,
};
use shogi_records::read_chunk_dir;

/// The lines an import says.
#[derive(Default)]
struct Lines(Vec<String>);

impl ImportWatch for Lines {
    fn say(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

fn every_game() -> ImportFilter {
    ImportFilter {
        min_moves: 1,
        endings: ImportFilter::parse_endings("all").unwrap(),
        ..ImportFilter::default()
    }
}

/// Three different games, one CSA file each, all resigned.
fn csa_files(dir: &std::path::Path) -> Vec<(PathBuf, RecordFormat)> {
    let games = dir.join("games");
    std::fs::create_dir_all(&games).unwrap();
    for (name, moves) in [
        ("a.csa", "+7776FU\n-3334FU\n+2726FU\n"),
        ("b.csa", "+2726FU\n-8384FU\n+2625FU\n-8485FU\n"),
        ("c.csa", "+5756FU\n-5354FU\n"),
    ] {
        let text = format!("V2.2\nPI\n+\n{moves}%TORYO\n");
        std::fs::write(games.join(name), text).unwrap();
    }
    record_files(&[games]).unwrap()
}

#[test]
fn an_import_run_again_resumes_and_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay");
    let files = csa_files(dir.path());
    let mut lines = Lines::default();
    let first = import_files(&files, &out, every_game(), 2, &mut lines).unwrap();
    assert_eq!(
        (first.stats.read, first.stats.kept),
        (3, 3),
        "{lines:?}",
        lines = lines.0
    );
    assert!(out.join(STATE_FILE).exists());
    let (games, errors) = read_chunk_dir(&out).unwrap();
    assert_eq!((games.len(), errors.len()), (3, 0));
    assert!(
        lines
            .0
            .iter()
            .any(|l| l.contains("[3/3]") && l.contains("kept 1 of 1 records")),
        "{:?}",
        lines.0
    );

    let mut again = Lines::default();
    let second = import_files(&files, &out, every_game(), 2, &mut again).unwrap();
    assert_eq!((second.stats.read, second.stats.kept), (0, 0));
    assert!(
        again.0[0].contains("resuming") && again.0[0].contains("3 games"),
        "{:?}",
        again.0
    );
    assert_eq!(read_chunk_dir(&out).unwrap().0.len(), 3);
}

#[test]
fn an_unreadable_file_is_named_and_kept_in_the_skipped_list() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay");
    let missing = (dir.path().join("gone.csa"), RecordFormat::Csa);
    let mut files = csa_files(dir.path());
    files.push(missing.clone());
    let mut lines = Lines::default();
    let summary = import_files(&files, &out, every_game(), 8, &mut lines).unwrap();
    assert_eq!((summary.stats.kept, summary.files_skipped), (3, 1));
    assert!(summary.summary().contains("files skipped 1"));
    let skipped = std::fs::read_to_string(out.join(SKIPPED_FILE)).unwrap();
    assert!(skipped.contains("gone.csa: the file:"), "{skipped}");
    assert!(
        lines
            .0
            .iter()
            .any(|l| l.starts_with("import: skipped:") && l.contains("gone.csa"))
    );

    // Nothing readable at all: the import fails, naming how many files it tried.
    let err = import_files(
        &[missing],
        &dir.path().join("none"),
        every_game(),
        8,
        &mut lines,
    )
    .unwrap_err();
    assert!(matches!(err, ImportRunError::NothingRead(1)), "{err}");
    // The file skipped again is listed once.
    let again = std::fs::read_to_string(out.join(SKIPPED_FILE)).unwrap();
    assert_eq!(again, skipped);
}

#[test]
fn a_damaged_resume_state_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join(STATE_FILE), "{ not json").unwrap();
    let files = csa_files(dir.path());
    let err = import_files(&files, &out, every_game(), 8, &mut Lines::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(STATE_FILE) && text.contains("remove it to start the import over"),
        "{text}"
    );
}
