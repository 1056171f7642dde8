//! The replay window: the most recent positions of a replay directory, refreshed on
//! demand so a running learner sees fresh self-play data.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;
use shogi_records::record::{CHUNK_EXTENSION, GameRecord, RecordError, read_chunk};

use crate::sample::{Sample, SampleConfig, samples_from_record};

/// What a learner has counted of its replay directory, saved with every candidate it
/// exports ([`crate::REPLAY_ACCOUNT_FILE`]), so a run resumed from that candidate goes on
/// with the same replay-ratio budget instead of counting its whole window as new.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplayAccount {
    /// Positions read from chunks new to the window, over the run's whole life (what
    /// `learner.replay_ratio` multiplies).
    pub positions: u64,
    /// File names of the chunks with games in the window: a resumed window reads them
    /// again, without counting them.
    pub chunks: Vec<String>,
    /// Samples trained before the account began (a run resumed from a candidate
    /// exported before accounts were kept): the budget weighs only the samples trained
    /// after them against `positions`.
    #[serde(default)]
    pub samples_before: u64,
}

/// How long a chunk that cannot be read is retried while it stays unchanged (a chunk
/// copied in by hand or by a shared filesystem may be read half-written): after that
/// it is skipped, named in the log and counted in [`ReplayWindow::chunks_skipped`].
pub const UNREADABLE_GRACE: Duration = Duration::from_secs(10);

/// A chunk whose last read failed: retried while it changes or until the grace ends.
#[derive(Debug)]
struct FailedRead {
    first: Instant,
    len: u64,
    modified: Option<SystemTime>,
}

/// The most recent `capacity` positions of a replay directory, grouped by game: whole
/// games, so at least `capacity` positions once that many exist and at most `capacity`
/// plus the oldest game's.
///
/// A refresh reads new chunks newest first and stops once they fill the window, so a
/// resumed run with a long history reads only what it keeps. Chunks whose games have all
/// left the window (or never entered it) are *retired*: [`ReplayWindow::take_retired`]
/// hands them out, for a learner that prunes `replay/`.
#[derive(Debug)]
pub struct ReplayWindow {
    dir: PathBuf,
    capacity: usize,
    config: SampleConfig,
    seen: HashSet<PathBuf>,
    /// Each game's samples and the index of its chunk in `chunks`.
    games: VecDeque<(usize, Vec<Sample>)>,
    /// Chunks with games in the window: path and how many of its games are still in.
    chunks: Vec<(PathBuf, usize)>,
    retired: Vec<PathBuf>,
    positions: usize,
    /// Games ever loaded.
    pub games_loaded: u64,
    /// Chunk files read.
    pub chunks_read: u64,
    /// Chunks skipped as unreadable after the grace ([`UNREADABLE_GRACE`]).
    pub chunks_skipped: u64,
    /// Positions read from chunks new to the window, over the run's life.
    counted: u64,
    /// File names of chunks a resumed window reads without counting.
    counted_before: HashSet<OsString>,
    /// [`ReplayAccount::samples_before`].
    samples_before: u64,
    /// Chunks whose last read failed, retried on later refreshes.
    failed: HashMap<PathBuf, FailedRead>,
    /// How long an unreadable, unchanged chunk is retried.
    grace: Duration,
    /// One game in this many is held out of training (0 = none): [`ReplayWindow::held_out`].
    holdout_every: u64,
    /// The held-out games' positions, up to `HELD_OUT_CAP`.
    held_out: Vec<Sample>,
}

/// The most held-out positions kept: enough for a figure to 0.5%, few enough to score
/// in seconds.
const HELD_OUT_CAP: usize = 20_000;

/// A game's place in the held-out split: FNV-1a of its start and moves, the same on every
/// machine and every read, so a game is held out in every run that reads it.
fn game_hash(record: &shogi_records::record::GameRecord) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(record.start_sfen.as_bytes());
    for m in &record.moves {
        eat(&m.mv.to_le_bytes());
    }
    h
}

impl ReplayWindow {
    /// Positions kept unless a config says otherwise.
    pub const DEFAULT_CAPACITY: usize = 100_000;

    /// An empty window over `dir`; call [`ReplayWindow::refresh`] to load.
    pub fn new(dir: impl AsRef<Path>, capacity: usize, config: SampleConfig) -> Self {
        Self {
            dir: dir.as_ref().to_path_buf(),
            capacity: capacity.max(1),
            config,
            seen: HashSet::new(),
            games: VecDeque::new(),
            chunks: Vec::new(),
            retired: Vec::new(),
            positions: 0,
            games_loaded: 0,
            chunks_read: 0,
            chunks_skipped: 0,
            counted: 0,
            counted_before: HashSet::new(),
            samples_before: 0,
            failed: HashMap::new(),
            grace: UNREADABLE_GRACE,
            holdout_every: 0,
            held_out: Vec::new(),
        }
    }

    /// Holds one game in `every` (by a hash of its start and moves, so the same games
    /// in every run) out of training: its positions go to [`ReplayWindow::held_out`]
    /// (up to 20,000) instead of the window. `every` below 2 holds none out.
    pub fn with_holdout(mut self, every: u64) -> Self {
        self.holdout_every = if every >= 2 { every } else { 0 };
        self
    }

    /// Retries an unreadable chunk for `grace` instead of [`UNREADABLE_GRACE`] (zero:
    /// skips it at the first failed read).
    pub fn with_unreadable_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The held-out games' positions (empty without [`ReplayWindow::with_holdout`]).
    pub fn held_out(&self) -> &[Sample] {
        &self.held_out
    }

    /// Goes on from what a learner counted before ([`ReplayWindow::account`], saved with
    /// the candidate it resumes from): the positions counted so far, and the chunks then
    /// in the window, which the next refresh reads again without counting.
    pub fn resume_account(&mut self, account: &ReplayAccount) {
        self.counted = account.positions;
        self.counted_before = account.chunks.iter().map(OsString::from).collect();
        self.samples_before = account.samples_before;
    }

    /// Treats every chunk now in the directory as counted and the `samples_trained`
    /// so far as outside the budget: the safe guess for a run resumed from a candidate
    /// saved without a [`ReplayAccount`] (it trains on the positions that arrive from
    /// now on, not again on the whole window, and owes nothing for its past).
    pub fn count_present_chunks(&mut self, samples_trained: u64) -> Result<(), RecordError> {
        self.samples_before = samples_trained;
        for path in self.chunk_paths()? {
            if let Some(name) = path.file_name() {
                self.counted_before.insert(name.to_os_string());
            }
        }
        Ok(())
    }

    /// What this window has counted, for [`ReplayWindow::resume_account`].
    pub fn account(&self) -> ReplayAccount {
        ReplayAccount {
            positions: self.counted,
            chunks: self
                .chunks
                .iter()
                .filter_map(|(path, _)| path.file_name())
                .map(|name| name.to_string_lossy().into_owned())
                .collect(),
            samples_before: self.samples_before,
        }
    }

    /// Sets the window's size from the next refresh on (a window that grows keeps what it
    /// holds and trims nothing until it is full again).
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
    }

    /// The window's size, positions.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Samples trained before the account began, which the replay-ratio budget does not
    /// weigh against [`ReplayWindow::positions_counted`] ([`ReplayAccount::samples_before`]).
    pub fn samples_before_account(&self) -> u64 {
        self.samples_before
    }

    /// Positions read from chunks new to the window over the run's life (with
    /// [`ReplayWindow::resume_account`], across invocations).
    pub fn positions_counted(&self) -> u64 {
        self.counted
    }

    fn chunk_paths(&self) -> Result<Vec<PathBuf>, RecordError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|source| RecordError::Io {
            path: self.dir.clone(),
            source,
        })?;
        Ok(entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == CHUNK_EXTENSION))
            .collect())
    }

    /// Whether a chunk that failed to read is given up on now: unchanged since its last
    /// failure and failing for [`UNREADABLE_GRACE`]. Records the failure otherwise.
    fn give_up_on(&mut self, path: &Path) -> bool {
        let meta = std::fs::metadata(path).ok();
        let len = meta.as_ref().map_or(0, |m| m.len());
        let modified = meta.and_then(|m| m.modified().ok());
        match self.failed.get_mut(path) {
            Some(f) if f.len == len && f.modified == modified => f.first.elapsed() >= self.grace,
            Some(f) => {
                // It changed (still being written): its grace starts again.
                *f = FailedRead {
                    first: Instant::now(),
                    len,
                    modified,
                };
                false
            }
            None => {
                let failed = FailedRead {
                    first: Instant::now(),
                    len,
                    modified,
                };
                self.failed.insert(path.to_path_buf(), failed);
                self.grace.is_zero()
            }
        }
    }

    /// Loads chunks not seen before, then drops the oldest games the capacity does not need.
    /// New chunks are read newest first (by modification time, then name) until they fill
    /// the window; older ones are retired unread. A chunk that cannot be read is tried
    /// again on later refreshes while it changes, and skipped (named in the log, counted
    /// in [`ReplayWindow::chunks_skipped`]) once it has stayed unreadable and unchanged
    /// for [`UNREADABLE_GRACE`]. Returns the number of positions counted: read from new
    /// chunks, those of a resumed account's chunks excepted.
    pub fn refresh(&mut self) -> Result<usize, RecordError> {
        let mut paths = self.chunk_paths()?;
        paths.retain(|p| !self.seen.contains(p));
        paths.sort_by_key(|p| {
            let mtime = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            (mtime, p.clone())
        });
        // Newest first, until the new games alone fill the window.
        let mut fresh: Vec<(PathBuf, Vec<Vec<Sample>>)> = Vec::new();
        let mut fresh_positions = 0;
        let mut counted = 0;
        while let Some(path) = paths.pop() {
            if fresh_positions >= self.capacity {
                self.seen.insert(path.clone());
                self.retired.push(path);
                continue;
            }
            let Some(records) = self.read_new_chunk(&path) else {
                continue;
            };
            let games = self.samples_of(&path, &records);
            let positions: usize = games.iter().map(Vec::len).sum();
            fresh_positions += positions;
            if !path
                .file_name()
                .is_some_and(|name| self.counted_before.contains(name))
            {
                counted += positions;
            }
            fresh.push((path, games));
        }
        // Then into the window oldest first, so the trim drops the oldest games.
        for (path, games) in fresh.into_iter().rev() {
            self.admit(path, games);
        }
        self.trim();
        self.counted += counted as u64;
        Ok(counted)
    }

    /// A chunk not read before: its records, or `None` while it cannot be read (tried
    /// again on a later refresh, or skipped once it has stayed unreadable and unchanged
    /// for the grace period).
    fn read_new_chunk(&mut self, path: &Path) -> Option<Vec<GameRecord>> {
        self.chunks_read += 1;
        match read_chunk(path) {
            Ok(records) => {
                self.failed.remove(path);
                self.seen.insert(path.to_path_buf());
                Some(records)
            }
            Err(err) => {
                if self.give_up_on(path) {
                    tracing::warn!(
                        "replay: skipping {} (unreadable and unchanged for {:.0?}): {err}",
                        path.display(),
                        self.grace
                    );
                    self.failed.remove(path);
                    self.seen.insert(path.to_path_buf());
                    self.chunks_skipped += 1;
                }
                None
            }
        }
    }

    /// The training samples of each game of a chunk: a held-out game's go to the held-out
    /// set instead, and a game whose samples cannot be made is passed over (said once a
    /// chunk, with the first reason).
    fn samples_of(&mut self, path: &Path, records: &[GameRecord]) -> Vec<Vec<Sample>> {
        let mut games = Vec::with_capacity(records.len());
        let mut passed_over: (usize, Option<String>) = (0, None);
        for record in records {
            let hold =
                self.holdout_every > 0 && game_hash(record).is_multiple_of(self.holdout_every);
            match samples_from_record(record, &self.config) {
                Ok(s) if hold => {
                    let room = HELD_OUT_CAP.saturating_sub(self.held_out.len());
                    self.held_out.extend(s.into_iter().take(room));
                }
                Ok(s) if !s.is_empty() => games.push(s),
                Ok(_) => {}
                Err(err) => {
                    passed_over.0 += 1;
                    passed_over.1.get_or_insert_with(|| err.to_string());
                }
            }
        }
        if let (n, Some(first)) = passed_over {
            tracing::warn!(
                "replay: skipping {n} of the {} games in {}: {first}",
                records.len(),
                path.display()
            );
        }
        games
    }

    /// A chunk's games into the window, as its newest (a chunk with none is retired).
    fn admit(&mut self, path: PathBuf, games: Vec<Vec<Sample>>) {
        if games.is_empty() {
            self.retired.push(path);
            return;
        }
        let chunk = self.chunks.len();
        self.chunks.push((path, games.len()));
        for samples in games {
            self.positions += samples.len();
            self.games_loaded += 1;
            self.games.push_back((chunk, samples));
        }
    }

    /// Drops the oldest games the capacity does not need, whole games only while the
    /// rest still fill the window, so a full window never holds fewer than `capacity`
    /// positions (a learner waiting for `min_positions <= capacity` is never stuck just
    /// below it); then retires the chunks with no game left, keeping the indices of the
    /// others valid.
    fn trim(&mut self) {
        while let Some((_, front)) = self.games.front()
            && self.positions - front.len() >= self.capacity
        {
            let (chunk, old) = self.games.pop_front().unwrap();
            self.positions -= old.len();
            self.chunks[chunk].1 -= 1;
        }
        let gone = self
            .chunks
            .iter()
            .take_while(|(_, left)| *left == 0)
            .count();
        if gone > 0 {
            self.retired
                .extend(self.chunks.drain(..gone).map(|(path, _)| path));
            for (chunk, _) in &mut self.games {
                *chunk -= gone;
            }
        }
    }

    /// Chunk files retired since the last call: every game in them has left the window
    /// (or never entered it). A learner that prunes `replay/` deletes these.
    pub fn take_retired(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.retired)
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
        // Positions before each game, so a draw finds its game by binary search rather
        // than a walk over thousands of games per sample.
        let mut starts = Vec::with_capacity(self.games.len());
        let mut total = 0;
        for (_, g) in &self.games {
            starts.push(total);
            total += g.len();
        }
        (0..batch)
            .map(|_| {
                let k = rng.random_range(0..self.positions);
                let game = starts.partition_point(|&start| start <= k) - 1;
                self.games[game].1[k - starts[game]].augmented(rng)
            })
            .collect()
    }
}

/// KataGo's growing window: `base` positions until the run has played that many, then
/// `base x (1 + growth x ((played / base)^exponent - 1) / exponent)`, so it grows as a
/// power of the data (KataGo: growth 0.4, exponent 0.75). `growth` 0 is a fixed window.
pub fn grown_window(base: usize, growth: f64, exponent: f64, played: u64) -> usize {
    let base_f = base.max(1) as f64;
    let ratio = played as f64 / base_f;
    if growth <= 0.0 || ratio <= 1.0 {
        return base;
    }
    let grown = base_f * (1.0 + growth * (ratio.powf(exponent) - 1.0) / exponent);
    // Never more than the positions played, nor past what a usize holds.
    grown.min(played as f64).min(usize::MAX as f64 / 2.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_window_grows_as_katago_s_from_its_base() {
        // KataGo's own figures: 250,000 rows, growth 0.4, exponent 0.75.
        assert_eq!(grown_window(250_000, 0.4, 0.75, 100_000), 250_000);
        assert_eq!(grown_window(250_000, 0.4, 0.75, 250_000), 250_000);
        let at_10x = grown_window(250_000, 0.4, 0.75, 2_500_000);
        let expected = 250_000.0 * (1.0 + 0.4 * (10f64.powf(0.75) - 1.0) / 0.75);
        assert!(
            (at_10x as f64 - expected).abs() < 1.0,
            "{at_10x} vs {expected}"
        );
        assert!(at_10x > 250_000 && at_10x < 2_500_000);
        // Monotone, and fixed without growth.
        let mut last = 0;
        for played in (0..50).map(|i| i * 100_000u64) {
            let w = grown_window(250_000, 0.4, 0.75, played);
            assert!(w >= last);
            last = w;
        }
        assert_eq!(grown_window(25_000, 0.0, 0.75, u64::MAX), 25_000);
        assert!(grown_window(25_000, 0.4, 0.75, u64::MAX) > 25_000);
    }

    /// A sample marked with its game and position (tai layout: no mirroring).
    fn marked(game: usize, position: usize) -> Sample {
        Sample {
            layout: shogi_registry::layout(shogi_game::GameKind::Tai),
            planes: Vec::new(),
            policy: Vec::new(),
            wdl: [game as f32, position as f32, 0.0],
            material: 0.0,
            opponent_policy: Vec::new(),
        }
    }

    #[test]
    fn sampling_is_uniform_over_positions_not_games() {
        let lengths = [1, 7, 2, 30];
        let mut w = ReplayWindow::new("/nonexistent", 1_000, SampleConfig::default());
        for (g, &len) in lengths.iter().enumerate() {
            w.games
                .push_back((0, (0..len).map(|p| marked(g, p)).collect()));
            w.positions += len;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let draws = 40_000;
        let mut seen = vec![vec![0u32; 30]; lengths.len()];
        for s in w.sample_batch(draws, &mut rng) {
            seen[s.wdl[0] as usize][s.wdl[1] as usize] += 1;
        }
        // Every position, whatever its game's length, is drawn about 40000 / 40 = 1000
        // times (5 standard deviations: +-155).
        for (&len, counts) in lengths.iter().zip(&seen) {
            for (p, &n) in counts.iter().enumerate() {
                if p < len {
                    assert!((845..=1155).contains(&n), "length {len} position {p}: {n}");
                } else {
                    assert_eq!(n, 0);
                }
            }
        }
    }
}
