//! A run's learning curve on a fixed scale: chosen accepted networks of one run each play
//! the same opponent (a random mover, a fixed classical search, a fixed checkpoint) with
//! the same search and openings, and their scores are kept as `curve.json` and
//! `curve.csv` and plotted to `curve.png` (score against the minutes the run ran since
//! its first network, and against learner steps). Unlike the gate's Elo chain
//! (`ratings.png`), every point is measured against the same yardstick, so a flat curve
//! means the run did not learn.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{RatingsError, io_err};
use crate::stats::{Rating, Tally, score_from_elo};
use shogi_rundir::write_atomic;

/// Simulations a move of the curve's searching players unless told otherwise: half the
/// default self-play budget keeps a point cheap beside a running run, and `learns.sh` and
/// `ladder.sh` measure at the same 32 (curves measured at another count are not merged,
/// [`Curve::same_settings`]).
pub const CURVE_SIMULATIONS: u32 = 32;

/// One network of the run measured against the opponent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Checkpoint name (`step-NNNNNNNN`).
    pub checkpoint: String,
    /// Its training step.
    pub step: u64,
    /// Training samples it had consumed.
    pub samples_seen: u64,
    /// Minutes the run ran between its first network and this one: on the run's clock
    /// where both manifests record it (`run_seconds`: the invocations' time, the pauses
    /// between them left out), else wall minutes between the two (pauses included).
    pub minutes: f64,
    /// Games won, drawn and lost against the opponent.
    #[serde(flatten)]
    pub result: Tally,
    /// Score and Elo over the opponent.
    #[serde(flatten)]
    pub rating: Rating,
}

/// The curve and the settings every point shares; `R` is the networks' search at the
/// root (the arena's `RootSettings`), kept flat in the file and compared whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve<R> {
    /// The opponent (player spec).
    pub opponent: String,
    /// Games per point.
    pub games: u32,
    /// Simulations per move of the run's networks.
    pub simulations: u32,
    /// Seed of the openings (the same for every point).
    pub seed: u64,
    /// The networks' root (a Gumbel root's options, the leaf mate search).
    #[serde(flatten)]
    pub root: R,
    /// The measured networks, in step order.
    pub points: Vec<CurvePoint>,
}

impl<R: PartialEq + Serialize + serde::de::DeserializeOwned> Curve<R> {
    /// Whether `other` was measured with the same opponent, games, search and seed, so
    /// its points can be reused.
    pub fn same_settings(&self, other: &Curve<R>) -> bool {
        self.opponent == other.opponent
            && self.games == other.games
            && self.simulations == other.simulations
            && self.seed == other.seed
            && self.root == other.root
    }

    /// Adds or replaces the point of `point.checkpoint`, keeping step order.
    pub fn insert(&mut self, point: CurvePoint) {
        self.points.retain(|p| p.checkpoint != point.checkpoint);
        self.points.push(point);
        self.points.sort_by_key(|p| p.step);
    }

    /// The CSV text (header and one row a point).
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "checkpoint,step,samples_seen,minutes,opponent,games,wins,draws,losses,score,elo,elo_low,elo_high\n",
        );
        for p in &self.points {
            s.push_str(&format!(
                "{},{},{},{:.2},{},{},{},{},{},{:.4},{:.1},{:.1},{:.1}\n",
                p.checkpoint,
                p.step,
                p.samples_seen,
                p.minutes,
                csv_field(&self.opponent),
                p.result.games(),
                p.result.wins,
                p.result.draws,
                p.result.losses,
                p.rating.score,
                // `+ 0.0` turns a negative zero (a 50% score) into a plain 0.
                p.rating.elo + 0.0,
                p.rating.low + 0.0,
                p.rating.high + 0.0
            ));
        }
        s
    }

    /// Reads `curve.json` from `dir` (none if absent).
    pub fn load(dir: &Path) -> Result<Option<Curve<R>>, RatingsError> {
        let path = dir.join("curve.json");
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| RatingsError::Json { path, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("read", &path)(e)),
        }
    }

    /// Writes `curve.json`, `curve.csv` and `curve.png` into `dir`, each atomically.
    pub fn save(&self, dir: &Path) -> Result<(), RatingsError> {
        std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
        let json_path = dir.join("curve.json");
        let mut json = serde_json::to_vec_pretty(self).map_err(|source| RatingsError::Json {
            path: json_path.clone(),
            source,
        })?;
        json.push(b'\n');
        write_atomic(&json_path, &json).map_err(io_err("write", &json_path))?;
        let csv_path = dir.join("curve.csv");
        write_atomic(&csv_path, self.csv().as_bytes()).map_err(io_err("write", &csv_path))?;
        plot_curve(self, &dir.join("curve.png"))
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Picks at most `points` of `checkpoints` (sorted by step): always the first and the
/// last, the rest spread evenly by index between them.
pub fn pick_checkpoints(checkpoints: &[(u64, PathBuf)], points: usize) -> Vec<(u64, PathBuf)> {
    let n = checkpoints.len();
    if n <= points.max(2) {
        return checkpoints.to_vec();
    }
    let points = points.max(2);
    let mut picked: Vec<usize> = (0..points)
        .map(|i| (i * (n - 1) + (points - 1) / 2) / (points - 1))
        .collect();
    picked.dedup();
    picked.into_iter().map(|i| checkpoints[i].clone()).collect()
}

/// The networks a run had at fixed learner steps, so runs on machines (or hours) of
/// different speeds compare step for step: for each of `steps`, the last of
/// `checkpoints` (sorted by step) at or before it, the network the run was playing with
/// then. A step past `reached` (the furthest step the run's learner exported) has no
/// network yet and is returned apart, so a short run is never measured as if it had
/// learned that long. Each network is picked once.
pub fn pick_at_steps(
    checkpoints: &[(u64, PathBuf)],
    steps: &[u64],
    reached: u64,
) -> (Vec<(u64, PathBuf)>, Vec<u64>) {
    let mut picked: Vec<(u64, PathBuf)> = Vec::new();
    let mut not_reached = Vec::new();
    for &step in steps {
        if step > reached {
            not_reached.push(step);
            continue;
        }
        if let Some(found) = checkpoints.iter().rev().find(|(s, _)| *s <= step)
            && !picked.iter().any(|(s, _)| s == &found.0)
        {
            picked.push(found.clone());
        }
    }
    picked.sort();
    (picked, not_reached)
}

/// Draws score (percent, with the 95% interval from the Elo interval) against the
/// run's minutes ([`CurvePoint::minutes`]) and, beside it, against learner steps, each
/// with the 50% line: the first says what an hour of this machine bought, the second
/// what the learning did whatever the machine's speed. Written through a temporary file
/// and a rename.
pub fn plot_curve<R>(curve: &Curve<R>, path: &Path) -> Result<(), RatingsError> {
    let title = format!(
        "score vs {} ({} games, {} simulations)",
        curve.opponent, curve.games, curve.simulations
    );
    crate::plot::write_png(path, |root| draw(&title, &[("", curve)], root))
}

/// Several curves of one run in one picture (each opponent and search a labelled line):
/// score against the run's hours and against learner steps, as [`plot_curve`] draws one.
pub fn plot_curves<R>(
    title: &str,
    curves: &[(&str, &Curve<R>)],
    path: &Path,
) -> Result<(), RatingsError> {
    crate::plot::write_png(path, |root| draw(title, curves, root))
}

/// The series' colours, in order.
const COLOURS: [RGBColor; 6] = [
    BLUE,
    RED,
    RGBColor(0, 140, 0),
    RGBColor(230, 140, 0),
    MAGENTA,
    RGBColor(0, 150, 160),
];

fn draw<R>(
    title: &str,
    curves: &[(&str, &Curve<R>)],
    root: &crate::plot::Canvas<'_>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let panels = root
        .titled(title, (crate::plot::FAMILY, 22))
        .map_err(|e| err(&e))?;
    let (by_time, by_steps) = panels.split_horizontally(panels.dim_in_pixel().0 / 2);
    // Hours once a run is longer than two.
    let longest = curves
        .iter()
        .flat_map(|(_, c)| c.points.iter().map(|p| p.minutes))
        .fold(0.0f64, f64::max);
    if longest > 120.0 {
        draw_panel(curves, &by_time, "hours since the first network", |p| {
            p.minutes / 60.0
        })?;
    } else {
        draw_panel(curves, &by_time, "minutes since the first network", |p| {
            p.minutes
        })?;
    }
    draw_panel(curves, &by_steps, "learner steps", |p| p.step as f64)
}

/// One panel: score against `x` of each curve's points, a line a curve.
fn draw_panel<R>(
    curves: &[(&str, &Curve<R>)],
    area: &crate::plot::Canvas<'_>,
    x_desc: &str,
    x: impl Fn(&CurvePoint) -> f64,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let x1 = curves
        .iter()
        .flat_map(|(_, c)| c.points.iter().map(&x))
        .fold(1.0f64, f64::max);
    let pad = x1 * 0.05;
    let mut builder = ChartBuilder::on(area);
    builder.margin(15);
    builder.x_label_area_size(40).y_label_area_size(60);
    let mut chart = builder
        .build_cartesian_2d(-pad..x1 + pad, 0.0f64..100.0)
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    let whole = |v: &f64| format!("{v:.0}");
    mesh.x_desc(x_desc)
        .y_desc("score %")
        .x_labels(5)
        .x_label_formatter(&whole)
        .y_label_formatter(&whole);
    mesh.draw().map_err(|e| err(&e))?;
    for (k, (label, curve)) in curves.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let line: Vec<(f64, f64)> = curve
            .points
            .iter()
            .map(|p| (x(p), p.rating.score * 100.0))
            .collect();
        let series = chart
            .draw_series(LineSeries::new(line, colour.stroke_width(2)))
            .map_err(|e| err(&e))?;
        if !label.is_empty() {
            series.label(*label).legend(move |(lx, ly)| {
                PathElement::new(vec![(lx, ly), (lx + 16, ly)], colour.stroke_width(2))
            });
        }
        for p in &curve.points {
            let low = score_from_elo(p.rating.low).clamp(0.0, 1.0) * 100.0;
            let high = score_from_elo(p.rating.high).clamp(0.0, 1.0) * 100.0;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x(p), low), (x(p), high)],
                    colour.stroke_width(2),
                )))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (x(p), p.rating.score * 100.0),
                    5,
                    colour.filled(),
                )))
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .draw_series(LineSeries::new(
            vec![(-pad, 50.0), (x1 + pad, 50.0)],
            BLACK.mix(0.4),
        ))
        .map_err(|e| err(&e))?;
    if curves.iter().any(|(label, _)| !label.is_empty()) {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.4))
            .label_font((crate::plot::FAMILY, 13))
            .draw()
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(step: u64, score: f64) -> CurvePoint {
        CurvePoint {
            checkpoint: shogi_rundir::checkpoint_name(step),
            step,
            samples_seen: step * 256,
            minutes: step as f64 / 10.0,
            result: Tally {
                wins: (score * 10.0) as u32,
                draws: 0,
                losses: 10 - (score * 10.0) as u32,
            },
            rating: Rating {
                score,
                elo: 0.0,
                low: -100.0,
                high: 100.0,
            },
        }
    }

    #[test]
    fn picks_first_last_and_evenly_between() {
        let all: Vec<(u64, PathBuf)> = (0..11u64)
            .map(|i| (i * 100, PathBuf::from(format!("s{i}"))))
            .collect();
        let steps = |v: Vec<(u64, PathBuf)>| v.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
        assert_eq!(steps(pick_checkpoints(&all, 3)), vec![0, 500, 1000]);
        assert_eq!(
            steps(pick_checkpoints(&all, 6)),
            vec![0, 200, 400, 600, 800, 1000]
        );
        assert_eq!(steps(pick_checkpoints(&all, 1)), vec![0, 1000]);
        assert_eq!(pick_checkpoints(&all, 50).len(), 11);
        assert!(pick_checkpoints(&[], 4).is_empty());
    }

    #[test]
    fn picks_the_network_each_step_had_and_never_past_the_run() {
        let all: Vec<(u64, PathBuf)> = [0u64, 400, 1200, 1600]
            .iter()
            .map(|&s| (s, PathBuf::from(format!("s{s}"))))
            .collect();
        let steps = |v: &[(u64, PathBuf)]| v.iter().map(|(s, _)| *s).collect::<Vec<_>>();
        // 1000 had the network accepted at 400; 1100 the same one again (picked once);
        // 2000 is past the learner's last export (1900), so it is not measured.
        let (picked, not_reached) = pick_at_steps(&all, &[2000, 1000, 1100, 1600, 0], 1900);
        assert_eq!(steps(&picked), vec![0, 400, 1600]);
        assert_eq!(not_reached, vec![2000]);
        // A run whose gate rejected its last candidates still reached their step.
        let (picked, not_reached) = pick_at_steps(&all, &[1900], 1900);
        assert_eq!((steps(&picked), not_reached), (vec![1600], vec![]));
        assert_eq!(pick_at_steps(&[], &[100], 100).0, vec![]);
    }

    #[test]
    fn saves_reloads_and_replaces_points() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("curve");
        assert_eq!(Curve::<Root>::load(&dir).unwrap(), None);
        let mut curve = Curve {
            opponent: "random".into(),
            games: 10,
            simulations: 32,
            seed: 1,
            root: Root::default(),
            points: vec![],
        };
        curve.insert(point(200, 0.7));
        curve.insert(point(0, 0.5));
        curve.insert(point(200, 0.9));
        assert_eq!(
            curve.points.iter().map(|p| p.step).collect::<Vec<_>>(),
            vec![0, 200]
        );
        assert_eq!(curve.points[1].rating.score, 0.9);
        curve.save(&dir).unwrap();
        let back = Curve::load(&dir).unwrap().unwrap();
        assert_eq!(back, curve);
        assert!(back.same_settings(&curve));
        let csv = std::fs::read_to_string(dir.join("curve.csv")).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv.contains("step-00000200,200,51200,20.00,random,10,9,0,1,0.9000"));
        let png = std::fs::read(dir.join("curve.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let other = Curve {
            games: 20,
            ..curve.clone()
        };
        assert!(!other.same_settings(&curve));
        // The root is part of the settings, and the file keeps its fields flat.
        let mut gumbel = curve.clone();
        gumbel.root.gumbel = 8;
        assert!(!gumbel.same_settings(&curve), "another search");
        let mut safer = gumbel.clone();
        safer.root.gumbel_safety = 0.5;
        assert!(!safer.same_settings(&gumbel), "another root");
        let json = std::fs::read_to_string(dir.join("curve.json")).unwrap();
        assert!(json.contains("\"gumbel\": 0") && json.contains("\"gumbel_safety\""));
    }

    /// A root's settings as the arena's are, in two fields.
    #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Root {
        gumbel: usize,
        gumbel_safety: f32,
    }

    #[test]
    fn several_curves_go_into_one_picture() {
        let tmp = tempfile::tempdir().unwrap();
        let curve = |score: f64| Curve {
            opponent: "random".into(),
            games: 10,
            simulations: 32,
            seed: 1,
            root: Root::default(),
            // Points past two hours: the time axis reads in hours.
            points: vec![point(0, 0.2), point(1500, score)],
        };
        let (a, b) = (curve(0.5), curve(0.9));
        let path = tmp.path().join("curves.png");
        plot_curves("a long run", &[("depth 1", &a), ("depth 2", &b)], &path).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[1..4], b"PNG");
    }

    #[test]
    fn quotes_specs_with_commas() {
        assert_eq!(csv_field("usi:eng --a,b"), "\"usi:eng --a,b\"");
        assert_eq!(csv_field("random"), "random");
    }
}
