//! The run's rating history: every gated candidate's Elo relative to the first network
//! (the accepted chain accumulates: a candidate's Elo is its best's plus the match
//! difference, intervals added in quadrature), kept as `ratings.json` and `ratings.csv`
//! and plotted to `ratings.png` (Elo against training step, with interval bars).

use std::path::Path;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{RatingsError, io_err};
use crate::stats::Rating;
use shogi_rundir::{RunDir, write_atomic};

/// One gated candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingEntry {
    /// Candidate checkpoint name.
    pub candidate: String,
    /// Its training step.
    pub step: u64,
    /// The best network it played.
    pub best: String,
    /// Promoted?
    pub accepted: bool,
    /// Games played.
    pub games: u32,
    /// Candidate's score and Elo against the best.
    #[serde(flatten)]
    pub rating: Rating,
    /// Elo against the first network.
    pub elo_vs_first: f64,
    /// Lower end of its 95% interval.
    pub elo_vs_first_low: f64,
    /// Upper end.
    pub elo_vs_first_high: f64,
    /// An accepted network's result against the gate's fixed opponent, if configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<FixedRating>,
}

/// A network's match against a fixed opponent (for example `alphabeta:depth=2`): a
/// rating on a scale that does not move with the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FixedRating {
    /// The opponent's player spec.
    pub opponent: String,
    /// Games played.
    pub games: u32,
    /// The network's score and Elo over the opponent.
    #[serde(flatten)]
    pub rating: Rating,
}

/// Reads `ratings.json` (empty if absent).
pub fn load_ratings(run: &RunDir) -> Result<Vec<RatingEntry>, RatingsError> {
    let path = run.ratings_json();
    match std::fs::read(&path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|source| RatingsError::Json { path, source })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io_err("read", &path)(e)),
    }
}

/// The rating of network `name` against the first network, with the half-widths of its
/// interval below and above: 0 for a network never gated (the first one).
pub fn rating_of(entries: &[RatingEntry], name: &str) -> (f64, f64, f64) {
    entries
        .iter()
        .rev()
        .find(|e| e.accepted && e.candidate == name)
        .map(|e| {
            (
                e.elo_vs_first,
                e.elo_vs_first - e.elo_vs_first_low,
                e.elo_vs_first_high - e.elo_vs_first,
            )
        })
        .unwrap_or((0.0, 0.0, 0.0))
}

const CSV_HEADER: &str = "candidate,step,best,accepted,games,score,elo,elo_low,elo_high,elo_vs_first,elo_vs_first_low,elo_vs_first_high,fixed_opponent,fixed_games,fixed_score,fixed_elo,fixed_elo_low,fixed_elo_high";

/// The CSV text of `entries` (header plus one line each).
pub fn ratings_csv(entries: &[RatingEntry]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for e in entries {
        s.push_str(&format!(
            "{},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{}\n",
            e.candidate,
            e.step,
            e.best,
            e.accepted,
            e.games,
            e.rating.score,
            e.rating.elo,
            e.rating.low,
            e.rating.high,
            e.elo_vs_first,
            e.elo_vs_first_low,
            e.elo_vs_first_high,
            match &e.fixed {
                Some(f) => format!(
                    "{},{},{:.4},{:.1},{:.1},{:.1}",
                    f.opponent, f.games, f.rating.score, f.rating.elo, f.rating.low, f.rating.high
                ),
                None => ",,,,,".to_string(),
            }
        ));
    }
    s
}

/// Appends `entry` to `ratings.json` and `ratings.csv` (each rewritten atomically),
/// replacing an earlier line of the same candidate, and redraws `ratings.png`.
pub fn append_rating(run: &RunDir, entry: RatingEntry) -> Result<Vec<RatingEntry>, RatingsError> {
    let mut entries = load_ratings(run)?;
    // One line per candidate: a re-gated candidate (after a kill) replaces its line.
    entries.retain(|e| e.candidate != entry.candidate);
    entries.push(entry);
    let json_path = run.ratings_json();
    let mut json = serde_json::to_vec_pretty(&entries).map_err(|source| RatingsError::Json {
        path: json_path.clone(),
        source,
    })?;
    json.push(b'\n');
    write_atomic(&json_path, &json).map_err(io_err("write", &json_path))?;
    let csv_path = run.ratings_csv();
    write_atomic(&csv_path, ratings_csv(&entries).as_bytes())
        .map_err(io_err("write", &csv_path))?;
    plot_ratings(&entries, &run.ratings_png())?;
    Ok(entries)
}

/// Draws Elo (against the first network) against training step: accepted candidates
/// as filled green dots joined by a line, rejected ones as red circles, each with its
/// 95% interval bar. Written through a temporary file and a rename.
pub fn plot_ratings(entries: &[RatingEntry], path: &Path) -> Result<(), RatingsError> {
    crate::plot::write_png(path, |root| draw(entries, root))
}

/// The chart's title: the relative scale, and the fixed one where there is one.
fn caption(entries: &[RatingEntry]) -> String {
    match entries.iter().rev().find_map(|e| e.fixed.as_ref()) {
        Some(f) => format!("Elo vs first network (green), vs {} (blue)", f.opponent),
        None => "Elo vs first network".to_string(),
    }
}

fn draw(entries: &[RatingEntry], root: &crate::plot::Canvas<'_>) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (mut x0, mut x1) = (0u64, 1u64);
    let (mut y0, mut y1) = (-50.0f64, 50.0f64);
    for (i, e) in entries.iter().enumerate() {
        if i == 0 {
            (x0, x1) = (e.step, e.step);
        }
        x0 = x0.min(e.step);
        x1 = x1.max(e.step);
        y0 = y0.min(e.elo_vs_first_low);
        y1 = y1.max(e.elo_vs_first_high);
        if let Some(f) = &e.fixed {
            y0 = y0.min(f.rating.low);
            y1 = y1.max(f.rating.high);
        }
    }
    let pad = ((x1 - x0) / 20).max(1);
    let (x0, x1) = (x0.saturating_sub(pad), x1 + pad);
    let ypad = (y1 - y0) * 0.05;
    let (y0, y1) = (y0 - ypad, y1 + ypad);
    let mut builder = ChartBuilder::on(root);
    builder.margin(15);
    builder
        .caption(caption(entries), (crate::plot::FAMILY, 24))
        .x_label_area_size(40)
        .y_label_area_size(60);
    let mut chart = builder
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("training step").y_desc("Elo");
    mesh.draw().map_err(|e| err(&e))?;
    // The accepted chain.
    let chain: Vec<(u64, f64)> = entries
        .iter()
        .filter(|e| e.accepted)
        .map(|e| (e.step, e.elo_vs_first))
        .collect();
    chart
        .draw_series(LineSeries::new(chain, &GREEN))
        .map_err(|e| err(&e))?;
    for e in entries {
        let color = if e.accepted { GREEN } else { RED };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(e.step, e.elo_vs_first_low), (e.step, e.elo_vs_first_high)],
                color.stroke_width(2),
            )))
            .map_err(|e| err(&e))?;
        let style = if e.accepted {
            color.filled()
        } else {
            color.stroke_width(2)
        };
        chart
            .draw_series(std::iter::once(Circle::new(
                (e.step, e.elo_vs_first),
                5,
                style,
            )))
            .map_err(|e| err(&e))?;
    }
    // The fixed scale: accepted networks against the fixed opponent (blue dots).
    let fixed: Vec<(u64, &FixedRating)> = entries
        .iter()
        .filter_map(|e| e.fixed.as_ref().map(|f| (e.step, f)))
        .collect();
    chart
        .draw_series(LineSeries::new(
            fixed.iter().map(|(s, f)| (*s, f.rating.elo)),
            &BLUE,
        ))
        .map_err(|e| err(&e))?;
    for (step, f) in &fixed {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*step, f.rating.low), (*step, f.rating.high)],
                BLUE.stroke_width(1),
            )))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Circle::new(
                (*step, f.rating.elo),
                4,
                BLUE.filled(),
            )))
            .map_err(|e| err(&e))?;
    }
    // The zero line: the first network.
    chart
        .draw_series(LineSeries::new(vec![(x0, 0.0), (x1, 0.0)], BLACK.mix(0.4)))
        .map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, step: u64, accepted: bool, elo: f64) -> RatingEntry {
        RatingEntry {
            candidate: name.into(),
            step,
            best: "step-00000000".into(),
            accepted,
            games: 10,
            rating: Rating {
                score: 0.6,
                elo,
                low: elo - 30.0,
                high: elo + 40.0,
            },
            elo_vs_first: elo,
            elo_vs_first_low: elo - 30.0,
            elo_vs_first_high: elo + 40.0,
            fixed: accepted.then(|| FixedRating {
                opponent: "alphabeta:depth=2".into(),
                games: 20,
                rating: Rating {
                    score: 0.5,
                    elo: elo / 2.0 - 100.0,
                    low: elo / 2.0 - 200.0,
                    high: elo / 2.0,
                },
            }),
        }
    }

    #[test]
    fn history_round_trips_and_plots() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path().join("run"));
        run.create().unwrap();
        assert!(load_ratings(&run).unwrap().is_empty());
        append_rating(&run, entry("step-00000100", 100, true, 50.0)).unwrap();
        let all = append_rating(&run, entry("step-00000200", 200, false, -20.0)).unwrap();
        assert_eq!(load_ratings(&run).unwrap(), all);
        let csv = std::fs::read_to_string(run.ratings_csv()).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .starts_with("step-00000200,200,")
        );
        let png = std::fs::read(run.ratings_png()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(rating_of(&all, "step-00000100"), (50.0, 30.0, 40.0));
        // Rejected candidates do not become a base; the first network is 0.
        assert_eq!(rating_of(&all, "step-00000200"), (0.0, 0.0, 0.0));
        // A candidate gated again (its first gate was killed before the move) replaces
        // its line instead of adding a second one.
        let all = append_rating(&run, entry("step-00000200", 200, true, 10.0)).unwrap();
        assert_eq!(all.len(), 2);
        assert!(all[1].accepted);
        assert_eq!(
            std::fs::read_to_string(run.ratings_csv())
                .unwrap()
                .lines()
                .count(),
            3
        );
    }
}
