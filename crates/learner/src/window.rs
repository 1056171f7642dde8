//! The replay window: the most recent positions of a replay directory, refreshed on
//! demand so a running learner sees fresh self-play data.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use rand::Rng;
use shogi_selfplay::record::{CHUNK_EXTENSION, RecordError, read_chunk};

use crate::sample::{Sample, SampleConfig, samples_from_record};

/// The most recent `capacity` positions of a replay directory, grouped by game.
#[derive(Debug)]
pub struct ReplayWindow {
    dir: PathBuf,
    capacity: usize,
    config: SampleConfig,
    seen: HashSet<PathBuf>,
    games: VecDeque<Vec<Sample>>,
    positions: usize,
    /// Games ever loaded.
    pub games_loaded: u64,
    /// Chunks skipped as unreadable or unreplayable.
    pub chunks_skipped: u64,
}

impl ReplayWindow {
    /// An empty window over `dir`; call [`ReplayWindow::refresh`] to load.
    pub fn new(dir: impl AsRef<Path>, capacity: usize, config: SampleConfig) -> Self {
        Self {
            dir: dir.as_ref().to_path_buf(),
            capacity: capacity.max(1),
            config,
            seen: HashSet::new(),
            games: VecDeque::new(),
            positions: 0,
            games_loaded: 0,
            chunks_skipped: 0,
        }
    }

    /// Loads chunks not seen before (oldest name first), then drops the oldest games
    /// beyond the capacity. Damaged chunks are skipped with a warning. Returns the
    /// number of new positions.
    pub fn refresh(&mut self) -> Result<usize, RecordError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|source| RecordError::Io {
            path: self.dir.clone(),
            source,
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == CHUNK_EXTENSION))
            .filter(|p| !self.seen.contains(p))
            .collect();
        paths.sort_by_key(|p| {
            let mtime = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            (mtime, p.clone())
        });
        let mut added = 0;
        for path in paths {
            self.seen.insert(path.clone());
            let games = match read_chunk(&path) {
                Ok(g) => g,
                Err(err) => {
                    eprintln!("warning: skipping unreadable record chunk: {err}");
                    self.chunks_skipped += 1;
                    continue;
                }
            };
            for game in &games {
                match samples_from_record(game, &self.config) {
                    Ok(s) if !s.is_empty() => {
                        added += s.len();
                        self.positions += s.len();
                        self.games.push_back(s);
                        self.games_loaded += 1;
                    }
                    Ok(_) => {}
                    Err(err) => {
                        eprintln!("warning: skipping game in {}: {err}", path.display());
                    }
                }
            }
        }
        while self.positions > self.capacity && self.games.len() > 1 {
            let old = self.games.pop_front().unwrap();
            self.positions -= old.len();
        }
        Ok(added)
    }

    /// Positions in the window.
    pub fn len(&self) -> usize {
        self.positions
    }

    /// Whether the window holds no position.
    pub fn is_empty(&self) -> bool {
        self.positions == 0
    }

    /// Games in the window.
    pub fn games(&self) -> usize {
        self.games.len()
    }

    /// `batch` positions drawn uniformly (with replacement) across the window's games,
    /// each mirrored with probability 0.5. Empty if the window is empty.
    pub fn sample_batch(&self, batch: usize, rng: &mut impl Rng) -> Vec<Sample> {
        if self.positions == 0 {
            return Vec::new();
        }
        (0..batch)
            .map(|_| {
                let mut k = rng.random_range(0..self.positions);
                for g in &self.games {
                    if k < g.len() {
                        return g[k].augmented(rng);
                    }
                    k -= g.len();
                }
                unreachable!("index within the window")
            })
            .collect()
    }
}
