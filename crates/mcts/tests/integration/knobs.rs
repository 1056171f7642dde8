//! The search knobs' one description: every knob's default is within its own range,
//! reads back what is set, and docs/SEARCH.md's table is the one the description writes.

use shogi_mcts::knobs::{KnobKind, knob_table};
use shogi_mcts::{RootSettings, SEARCH_KNOBS, SearchConfig, knob, play_knobs};

#[test]
fn every_knob_takes_its_default_and_reads_back_what_is_set() {
    let mut keys: Vec<&str> = SEARCH_KNOBS.iter().map(|k| k.key).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), SEARCH_KNOBS.len(), "a key described twice");
    for k in SEARCH_KNOBS {
        let default = k.default_value();
        assert_eq!(k.check(default), Ok(default), "{}: its default", k.key);
        assert_eq!(
            k.check(k.get(&SearchConfig::for_play())),
            Ok(k.get(&SearchConfig::for_play())),
            "{}: the play default",
            k.key
        );
        // Set the largest value (a count's, capped where the field is small) and read
        // it back through the text a config or a flag would give.
        let value = match k.kind {
            KnobKind::Switch => 1.0 - default,
            KnobKind::Choice(names) => (names.len() - 1) as f64 - default,
            _ => k.max.min(1000.0),
        };
        let mut config = SearchConfig::default();
        k.set(&mut config, k.parse(&k.show(value)).unwrap());
        assert_eq!(k.get(&config), value, "{}", k.key);
        assert!(k.check(f64::NAN).is_err() && k.check(k.max * 2.0 + 1.0).is_err());
        assert_eq!(knob(k.key).map(|found| found.key), Some(k.key));
        for alias in k.aliases {
            assert_eq!(knob(alias).map(|found| found.key), Some(k.key));
        }
    }
}

/// A play knob is a field of the play-time root: its value there reaches the search
/// (a Gumbel knob only under a Gumbel root), and a search's root reads it back.
#[test]
fn play_knobs_reach_the_search_and_come_back() {
    for k in play_knobs() {
        let p = k.play.unwrap();
        let value = match k.kind {
            KnobKind::Switch => 1.0,
            _ => (k.max / 2.0).round().max(k.min + 1.0),
        };
        let mut root = RootSettings {
            gumbel: 4,
            ..RootSettings::default()
        };
        k.set_at_play(&mut root, value);
        let mut search = SearchConfig::for_play();
        root.apply(&mut search);
        assert_eq!(k.get(&search), value, "{}", k.key);
        assert_eq!(
            k.get_at_play(&RootSettings::of_search(&search)),
            Some(value)
        );
        let mut puct = SearchConfig::for_play();
        RootSettings {
            gumbel: 0,
            ..root.clone()
        }
        .apply(&mut puct);
        let reached = k.get(&puct) == value;
        assert_eq!(reached, !p.gumbel_only, "{} under a PUCT root", k.key);
        let plain = k.get_at_play(&root.plain()).unwrap();
        assert_eq!(
            plain == 0.0,
            p.hand_written,
            "{} in the plain search",
            k.key
        );
    }
}

/// docs/SEARCH.md holds the table [`knob_table`] writes (`UPDATE_DOCS=1 cargo test -p
/// shogi-mcts knobs` writes it there).
#[test]
fn the_documented_table_is_the_description() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/SEARCH.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- knobs: begin -->\n", "<!-- knobs: end -->");
    let start = text.find(begin).expect("the table's begin marker") + begin.len();
    let stop = text.find(end).expect("the table's end marker");
    let table = knob_table(SEARCH_KNOBS);
    if text[start..stop] != table && std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        text[start..stop] == table,
        "docs/SEARCH.md's table is not the knobs' description: run `UPDATE_DOCS=1 cargo test -p shogi-mcts knobs`; the table is\n{table}"
    );
}
