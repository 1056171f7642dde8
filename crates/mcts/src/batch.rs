//! A batching inference service: many actor threads send requests over a channel; one
//! service thread packs them into batches of up to `max_batch` inputs (waiting at most
//! `max_wait` for a batch to fill), runs an inner batch function, and answers each request
//! on its own reply channel.
//!
//! Shutdown: dropping the [`BatchService`] (or calling [`BatchService::shutdown`]) makes
//! the service thread answer everything still queued with [`EvalError::ServiceShutDown`]
//! and exit; a [`BatchHandle`] used afterwards gets the same error. Dropping every handle
//! and the service also ends the thread. An actor that gives up (drops its reply channel)
//! mid-batch costs nothing: its answer is discarded. A panicking model answers the
//! batch's requests with [`EvalError::ModelFailed`] and the service keeps running.
//!
//! A new model replaces the running one between two batches
//! ([`BatchService::replace_model`]): the batch in progress finishes on the old one and
//! every later batch runs the new one, so the callers' games never stop for a new
//! network (KataGo and lc0 swap a self-play network the same way).

use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, bounded, unbounded};
use shogi_game::Game;

use crate::eval::{EvalError, EvalRequest, Evaluator, Wdl};

/// The outputs of a batch that was launched and may still be computing: calling it
/// waits for them. It runs on the service thread.
pub type Collect<O> = Box<dyn FnOnce() -> Vec<O>>;

/// A batch prepared on the host ([`BatchModel::prepare`]) and not yet handed to the
/// device: calling it launches the batch and returns what collects its outputs.
pub type Launch<'a, O> = Box<dyn FnOnce() -> Collect<O> + 'a>;

/// The inner batch function the service calls: one output per input, in order.
/// A libtorch model implements this (it runs on the service thread only).
pub trait BatchModel<I, O> {
    /// Runs one batch (`inputs.len() <= max_batch`).
    fn run(&mut self, inputs: &[I]) -> Vec<O>;

    /// Whether a launched batch computes after [`Launch`] has returned (a device that
    /// computes asynchronously, CUDA). The service then keeps two batches in flight: it
    /// prepares the next batch while the device computes the last one, collects that
    /// one, launches the next at once and only then answers the last one's callers, so
    /// the device does not wait while the host answers and forms batches.
    fn pipelined(&self) -> bool {
        false
    }

    /// Prepares one batch on the host (`inputs.len() <= max_batch`); the returned
    /// [`Launch`] hands it to the device. The default runs the batch here.
    fn prepare<'a>(&'a mut self, inputs: &[I]) -> Launch<'a, O>
    where
        O: 'static,
    {
        let outputs = self.run(inputs);
        Box::new(move || Box::new(move || outputs))
    }
}

impl<I, O, F: FnMut(&[I]) -> Vec<O>> BatchModel<I, O> for F {
    fn run(&mut self, inputs: &[I]) -> Vec<O> {
        self(inputs)
    }
}

/// Service settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchConfig {
    /// Largest number of inputs per inner call. Default 256.
    pub max_batch: usize,
    /// How long the service waits for a batch to fill after the first request arrives
    /// before running a partial batch. Default 1 ms.
    pub max_wait: Duration,
    /// How many threads submit to this service, each waiting for its answer before it
    /// submits again (0: not known). A batch holding requests from that many callers
    /// runs at once: no other request can come, so waiting for one would only idle the
    /// core (with one caller a service never waits). Default 0.
    pub callers: usize,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            max_batch: 256,
            max_wait: Duration::from_millis(1),
            callers: 0,
        }
    }
}

/// Counters kept by the service (read with [`BatchHandle::stats`]).
#[derive(Debug, Default)]
struct StatsInner {
    batches: AtomicU64,
    inputs: AtomicU64,
    requests: AtomicU64,
    model_nanos: AtomicU64,
    max_fill: AtomicU64,
    models: AtomicU64,
}

/// A snapshot of the service statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchStats {
    /// Inner calls made.
    pub batches: u64,
    /// Inputs evaluated.
    pub inputs: u64,
    /// Requests (jobs) answered by the model.
    pub requests: u64,
    /// Mean inputs per inner call.
    pub avg_batch: f64,
    /// Mean fill: avg_batch / max_batch (0..=1).
    pub avg_fill: f64,
    /// Largest inner call.
    pub max_batch_seen: u64,
    /// Total time inside the inner function.
    pub model_time: Duration,
    /// Models that replaced the first one ([`BatchService::replace_model`]).
    pub replacements: u64,
}

impl BatchStats {
    /// The counters of several services as one: sums, the largest batch of any, and
    /// the means over all of their batches.
    pub fn combined(all: impl IntoIterator<Item = BatchStats>) -> BatchStats {
        let mut total = BatchStats::default();
        // Each service's capacity, summed over its batches: the mean fill over all.
        let mut capacity = 0.0;
        for s in all {
            total.batches += s.batches;
            total.inputs += s.inputs;
            total.requests += s.requests;
            total.max_batch_seen = total.max_batch_seen.max(s.max_batch_seen);
            total.model_time += s.model_time;
            total.replacements += s.replacements;
            if s.avg_fill > 0.0 {
                capacity += s.avg_batch / s.avg_fill * s.batches as f64;
            }
        }
        if total.batches > 0 {
            total.avg_batch = total.inputs as f64 / total.batches as f64;
        }
        if capacity > 0.0 {
            total.avg_fill = total.inputs as f64 / capacity;
        }
        total
    }
}

struct Job<I, O> {
    inputs: Vec<I>,
    reply: Sender<Result<Vec<O>, EvalError>>,
}

/// A cloneable, `Send + Sync` handle to submit work to a [`BatchService`].
pub struct BatchHandle<I, O> {
    tx: Sender<Job<I, O>>,
    stats: Arc<StatsInner>,
    max_batch: usize,
}

impl<I, O> Clone for BatchHandle<I, O> {
    fn clone(&self) -> Self {
        BatchHandle {
            tx: self.tx.clone(),
            stats: self.stats.clone(),
            max_batch: self.max_batch,
        }
    }
}

impl<I, O> fmt::Debug for BatchHandle<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchHandle")
            .field("max_batch", &self.max_batch)
            .finish()
    }
}

impl<I: Send + 'static, O: Send + 'static> BatchHandle<I, O> {
    /// Submits `inputs` (one request, kept together in one batch when it fits) and blocks
    /// until the outputs come back or the service is gone. Any thread may call it.
    pub fn submit(&self, inputs: Vec<I>) -> Result<Vec<O>, EvalError> {
        self.submit_within(inputs, None)
    }

    /// Like [`submit`](Self::submit) but gives up after `timeout` with
    /// [`EvalError::Timeout`]; the service then discards the answer when it comes.
    pub fn submit_timeout(&self, inputs: Vec<I>, timeout: Duration) -> Result<Vec<O>, EvalError> {
        self.submit_within(inputs, Some(timeout))
    }

    fn submit_within(
        &self,
        inputs: Vec<I>,
        timeout: Option<Duration>,
    ) -> Result<Vec<O>, EvalError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let (rtx, rrx) = bounded(1);
        self.tx
            .send(Job { inputs, reply: rtx })
            .map_err(|_| EvalError::ServiceShutDown)?;
        let Some(timeout) = timeout else {
            return rrx.recv().map_err(|_| EvalError::ServiceShutDown)?;
        };
        match rrx.recv_timeout(timeout) {
            Ok(r) => r,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(EvalError::Timeout),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                Err(EvalError::ServiceShutDown)
            }
        }
    }

    /// Submits one input.
    pub fn call(&self, input: I) -> Result<O, EvalError> {
        let mut v = self.submit(vec![input])?;
        v.pop()
            .ok_or_else(|| EvalError::ModelFailed("no output".into()))
    }

    /// Statistics so far.
    pub fn stats(&self) -> BatchStats {
        snapshot(&self.stats, self.max_batch)
    }
}

fn snapshot(s: &StatsInner, max_batch: usize) -> BatchStats {
    let batches = s.batches.load(Ordering::Relaxed);
    let inputs = s.inputs.load(Ordering::Relaxed);
    let avg = if batches > 0 {
        inputs as f64 / batches as f64
    } else {
        0.0
    };
    BatchStats {
        batches,
        inputs,
        requests: s.requests.load(Ordering::Relaxed),
        avg_batch: avg,
        avg_fill: avg / max_batch.max(1) as f64,
        max_batch_seen: s.max_fill.load(Ordering::Relaxed),
        model_time: Duration::from_nanos(s.model_nanos.load(Ordering::Relaxed)),
        replacements: s.models.load(Ordering::Relaxed),
    }
}

/// A model sent to a running service to replace its own.
type Replacement<I, O> = Box<dyn BatchModel<I, O> + Send>;

/// The service: owns the service thread. Drop or [`shutdown`](Self::shutdown) to stop it.
pub struct BatchService<I, O> {
    handle: BatchHandle<I, O>,
    replace: Sender<Replacement<I, O>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<I, O> fmt::Debug for BatchService<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchService")
            .field("max_batch", &self.handle.max_batch)
            .finish()
    }
}

impl<I: Send + 'static, O: Send + 'static> BatchService<I, O> {
    /// Starts the service thread around `model`.
    pub fn start<M: BatchModel<I, O> + Send + 'static>(config: BatchConfig, model: M) -> Self {
        Self::start_with(config, move || model)
    }

    /// Starts the service thread and builds the model on it with `make` (for models that
    /// are not `Send` or must live on the thread that runs them, e.g. a GPU context).
    pub fn start_with<M, F>(config: BatchConfig, make: F) -> Self
    where
        M: BatchModel<I, O> + 'static,
        F: FnOnce() -> M + Send + 'static,
    {
        let (tx, rx) = unbounded::<Job<I, O>>();
        let (replace, replacements) = unbounded::<Replacement<I, O>>();
        let stats = Arc::new(StatsInner::default());
        let stop = Arc::new(AtomicBool::new(false));
        let max_batch = config.max_batch.max(1);
        let thread = {
            let stats = stats.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("batch-eval".into())
                .spawn(move || {
                    let model: Box<dyn BatchModel<I, O>> = Box::new(make());
                    service_loop(rx, replacements, model, config, stats, stop)
                })
                .expect("spawn batch service thread")
        };
        BatchService {
            handle: BatchHandle {
                tx,
                stats,
                max_batch,
            },
            replace,
            stop,
            thread: Some(thread),
        }
    }

    /// Replaces the model between two batches: the batch being run (if any) finishes on
    /// the old model, every batch run afterwards runs `model`, and the old one is
    /// dropped on the service thread. Requests are never refused or reordered meanwhile.
    /// Fails only when the service has stopped.
    pub fn replace_model<M: BatchModel<I, O> + Send + 'static>(
        &self,
        model: M,
    ) -> Result<(), EvalError> {
        self.replace
            .send(Box::new(model))
            .map_err(|_| EvalError::ServiceShutDown)
    }

    /// A new handle for an actor.
    pub fn handle(&self) -> BatchHandle<I, O> {
        self.handle.clone()
    }

    /// Statistics so far.
    pub fn stats(&self) -> BatchStats {
        self.handle.stats()
    }

    /// Stops the service: queued requests are answered with `ServiceShutDown`, later ones
    /// fail the same way. Returns the final statistics.
    pub fn shutdown(mut self) -> BatchStats {
        self.stop_thread();
        self.stats()
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl<I, O> Drop for BatchService<I, O> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Who asked for a batch, and how many inputs each.
struct Callers<O> {
    replies: Vec<Sender<Result<Vec<O>, EvalError>>>,
    lens: Vec<usize>,
}

/// A batch launched and not yet collected: one collect a chunk of at most `max_batch`.
struct InFlight<O> {
    collects: Vec<Collect<O>>,
    callers: Callers<O>,
}

/// A collected batch's outputs (or why there are none) and its callers.
struct Collected<O> {
    outputs: Result<Vec<O>, String>,
    chunks: Vec<usize>,
    callers: Callers<O>,
}

/// What the service thread does next.
enum Next<I, O> {
    /// Form a batch starting with this request.
    Batch(Job<I, O>),
    /// Nothing to batch yet: look again.
    Again,
    /// Every handle is gone: stop.
    Stop,
}

/// The service thread's state: its channels, the model, and the batches between two
/// steps (a request that did not fit the last batch, a batch computing on the device).
struct Service<I, O> {
    rx: Receiver<Job<I, O>>,
    replacements: Receiver<Replacement<I, O>>,
    model: Box<dyn BatchModel<I, O>>,
    config: BatchConfig,
    max_batch: usize,
    stats: Arc<StatsInner>,
    stop: Arc<AtomicBool>,
    /// A request that would have overfilled the last batch: the first of the next.
    carry: Option<Job<I, O>>,
    /// A pipelined model's batch that computes while the next one forms.
    in_flight: Option<InFlight<O>>,
}

fn service_loop<I, O: 'static>(
    rx: Receiver<Job<I, O>>,
    replacements: Receiver<Replacement<I, O>>,
    model: Box<dyn BatchModel<I, O>>,
    config: BatchConfig,
    stats: Arc<StatsInner>,
    stop: Arc<AtomicBool>,
) {
    Service {
        rx,
        replacements,
        model,
        max_batch: config.max_batch.max(1),
        config,
        stats,
        stop,
        carry: None,
        in_flight: None,
    }
    .run();
}

impl<I, O: 'static> Service<I, O> {
    fn run(mut self) {
        while !self.stop.load(Ordering::SeqCst) {
            match self.first_job() {
                Next::Batch(first) => {
                    let (inputs, callers) = self.form_batch(first);
                    self.take_newest_model();
                    self.launch(&inputs, callers);
                }
                Next::Again => {}
                Next::Stop => break,
            }
        }
        self.drain();
    }

    /// The first request of a batch. With a batch in flight the service does not wait
    /// for one (the callers that would send it may be waiting for that batch): it
    /// collects and answers that batch instead.
    fn first_job(&mut self) -> Next<I, O> {
        if let Some(j) = self.carry.take() {
            return Next::Batch(j);
        }
        if self.in_flight.is_some() {
            return match self.rx.try_recv() {
                Ok(j) => Next::Batch(j),
                Err(TryRecvError::Empty) => {
                    if let Some(batch) = self.in_flight.take() {
                        answer(collect(batch, &self.stats), &self.stats);
                    }
                    Next::Again
                }
                Err(TryRecvError::Disconnected) => Next::Stop,
            };
        }
        match self.rx.recv_timeout(Duration::from_millis(5)) {
            Ok(j) => Next::Batch(j),
            Err(RecvTimeoutError::Timeout) => Next::Again,
            Err(RecvTimeoutError::Disconnected) => Next::Stop,
        }
    }

    /// The batch that starts with `first`: it fills for up to `max_wait` (with a batch
    /// in flight, only from the requests already queued) up to `max_batch` inputs or
    /// `callers` requests; a request that would overfill it waits for the next.
    fn form_batch(&mut self, first: Job<I, O>) -> (Vec<I>, Callers<O>) {
        let mut jobs = vec![first];
        let mut count = jobs[0].inputs.len();
        let deadline = Instant::now() + self.config.max_wait;
        while count < self.max_batch
            && (self.config.callers == 0 || jobs.len() < self.config.callers)
        {
            let now = Instant::now();
            let next = if now >= deadline || self.in_flight.is_some() {
                self.rx.try_recv().ok()
            } else {
                self.rx.recv_timeout(deadline - now).ok()
            };
            let Some(j) = next else { break };
            if count + j.inputs.len() > self.max_batch {
                self.carry = Some(j);
                break;
            }
            count += j.inputs.len();
            jobs.push(j);
        }
        // A caller that already gave up cannot be told apart cheaply: all of them run.
        let lens: Vec<usize> = jobs.iter().map(|j| j.inputs.len()).collect();
        let mut inputs = Vec::with_capacity(count);
        let mut replies = Vec::with_capacity(jobs.len());
        for j in jobs {
            inputs.extend(j.inputs);
            replies.push(j.reply);
        }
        (inputs, Callers { replies, lens })
    }

    /// A new model, if one came before this batch runs: only the newest of several
    /// counts. Read after the batch has formed, so a batch formed after `replace_model`
    /// returned never runs the old one (a batch in flight owns its outputs and finishes
    /// without its model).
    fn take_newest_model(&mut self) {
        while let Ok(newer) = self.replacements.try_recv() {
            self.model = newer;
            self.stats.models.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Runs one batch: prepared on the host while the batch in flight computes; that one
    /// is then collected, this one launched at once, and only then are the earlier
    /// callers answered (the device is not idle while they are). A pipelined model's
    /// batch stays in flight; any other is answered here. A model that panics answers
    /// the batch's callers with the failure.
    fn launch(&mut self, inputs: &[I], callers: Callers<O>) {
        let max_batch = self.max_batch;
        let t0 = Instant::now();
        let mut chunks = inputs.chunks(max_batch);
        let head = chunks.next().expect("a batch has inputs");
        let sizes: Vec<usize> = inputs.chunks(max_batch).map(<[I]>::len).collect();
        let pipelined = self.model.pipelined();
        let preparing: &mut dyn BatchModel<I, O> = &mut *self.model;
        let prepared = catch_unwind(AssertUnwindSafe(move || {
            let preparing = preparing;
            preparing.prepare(head)
        }));
        let prepare_time = t0.elapsed();
        let earlier = self
            .in_flight
            .take()
            .map(|batch| collect(batch, &self.stats));
        let t1 = Instant::now();
        let launched = prepared
            .and_then(|launch| catch_unwind(AssertUnwindSafe(launch)))
            .and_then(|first| {
                catch_unwind(AssertUnwindSafe(|| {
                    // A request larger than `max_batch`: its other chunks one by one.
                    let mut collects = vec![first];
                    collects.extend(chunks.map(|chunk| self.model.prepare(chunk)()));
                    collects
                }))
            });
        self.stats.model_nanos.fetch_add(
            (prepare_time + t1.elapsed()).as_nanos() as u64,
            Ordering::Relaxed,
        );
        if let Some(earlier) = earlier {
            answer(earlier, &self.stats);
        }
        match launched {
            Ok(collects) => {
                let batch = InFlight { collects, callers };
                if pipelined {
                    self.in_flight = Some(batch);
                } else {
                    answer(collect(batch, &self.stats), &self.stats);
                }
            }
            Err(_) => answer(
                Collected {
                    outputs: Err("model panicked".into()),
                    chunks: sizes,
                    callers,
                },
                &self.stats,
            ),
        }
    }

    /// At the stop: the batch in flight is answered, everything still queued is told the
    /// service shut down. Dropping `rx` then makes later sends fail; a job sent between
    /// the drain and the drop is dropped with its reply sender, so its caller sees a
    /// disconnect (an error).
    fn drain(mut self) {
        if let Some(batch) = self.in_flight.take() {
            answer(collect(batch, &self.stats), &self.stats);
        }
        if let Some(j) = self.carry.take() {
            let _ = j.reply.send(Err(EvalError::ServiceShutDown));
        }
        while let Ok(j) = self.rx.try_recv() {
            let _ = j.reply.send(Err(EvalError::ServiceShutDown));
        }
    }
}

/// Waits for a launched batch's outputs (every chunk's, checked against its callers'
/// count).
fn collect<O>(batch: InFlight<O>, stats: &StatsInner) -> Collected<O> {
    let InFlight { collects, callers } = batch;
    let t0 = Instant::now();
    let mut chunks = Vec::with_capacity(collects.len());
    let outputs = catch_unwind(AssertUnwindSafe(|| {
        let mut out = Vec::with_capacity(callers.lens.iter().sum());
        for collect in collects {
            let o = collect();
            chunks.push(o.len());
            out.extend(o);
        }
        out
    }));
    stats
        .model_nanos
        .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    let expected: usize = callers.lens.iter().sum();
    let outputs = match outputs {
        Ok(out) if out.len() == expected => Ok(out),
        Ok(out) => Err(format!(
            "model returned {} outputs for {expected} inputs",
            out.len()
        )),
        Err(_) => Err("model panicked".into()),
    };
    Collected {
        outputs,
        chunks,
        callers,
    }
}

/// Answers a collected batch's callers, each with its own outputs or the error.
fn answer<O>(batch: Collected<O>, stats: &StatsInner) {
    let Collected {
        outputs,
        chunks,
        callers: Callers { replies, lens },
    } = batch;
    match outputs {
        Ok(out) => {
            for &chunk in &chunks {
                stats.batches.fetch_add(1, Ordering::Relaxed);
                stats.max_fill.fetch_max(chunk as u64, Ordering::Relaxed);
            }
            stats.inputs.fetch_add(out.len() as u64, Ordering::Relaxed);
            stats
                .requests
                .fetch_add(replies.len() as u64, Ordering::Relaxed);
            let mut it = out.into_iter();
            for (reply, n) in replies.into_iter().zip(lens) {
                let part: Vec<O> = it.by_ref().take(n).collect();
                let _ = reply.send(Ok(part)); // the actor may have gone: ignore
            }
        }
        Err(why) => {
            for reply in replies {
                let _ = reply.send(Err(EvalError::ModelFailed(why.clone())));
            }
        }
    }
}

/// The default owned input for [`BatchEvaluator`]: a position and its legal moves.
#[derive(Clone, Debug)]
pub struct EvalInput<G: Game> {
    /// The position.
    pub game: G,
    /// Its legal moves.
    pub moves: Vec<G::Move>,
}

/// The output a batch model returns per input: priors over the input's moves and a WDL
/// from the side to move's view.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalOutput {
    /// Priors, one per legal move, in order.
    pub priors: Vec<f32>,
    /// Value for the side to move.
    pub wdl: Wdl,
}

/// A batch model with uniform priors and a draw value for every input: the
/// [`crate::UniformEvaluator`] behind a service (tests, search-speed measurements).
pub fn uniform_batch<G: Game>(inputs: &[EvalInput<G>]) -> Vec<EvalOutput> {
    inputs
        .iter()
        .map(|i| EvalOutput {
            priors: vec![1.0 / i.moves.len().max(1) as f32; i.moves.len()],
            wdl: Wdl::DRAW,
        })
        .collect()
}

type Encoder<G, I> = Arc<dyn Fn(&G, &[<G as Game>::Move]) -> I + Send + Sync>;

/// An [`Evaluator`] that routes through a [`BatchService`]. Inputs are built on the
/// calling (actor) thread by an encoder (default: clone the game and moves into an
/// [`EvalInput`]; a network would encode feature planes here, in parallel across actors).
/// `evaluate` blocks until the service answers; call it from any number of threads.
pub struct BatchEvaluator<G: Game, I = EvalInput<G>> {
    handle: BatchHandle<I, EvalOutput>,
    encode: Encoder<G, I>,
    _g: PhantomData<fn() -> G>,
}

impl<G: Game, I> fmt::Debug for BatchEvaluator<G, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchEvaluator")
            .field("handle", &self.handle)
            .finish()
    }
}

impl<G: Game, I> Clone for BatchEvaluator<G, I> {
    fn clone(&self) -> Self {
        BatchEvaluator {
            handle: self.handle.clone(),
            encode: self.encode.clone(),
            _g: PhantomData,
        }
    }
}

impl<G: Game> BatchEvaluator<G, EvalInput<G>> {
    /// Routes through `handle`, sending owned positions.
    pub fn new(handle: BatchHandle<EvalInput<G>, EvalOutput>) -> Self {
        BatchEvaluator {
            handle,
            encode: Arc::new(|g: &G, m: &[G::Move]| EvalInput {
                game: g.clone(),
                moves: m.to_vec(),
            }),
            _g: PhantomData,
        }
    }
}

impl<G: Game, I: Send + 'static> BatchEvaluator<G, I> {
    /// Routes through `handle`, encoding each position with `encode` on the actor thread.
    pub fn with_encoder(
        handle: BatchHandle<I, EvalOutput>,
        encode: impl Fn(&G, &[G::Move]) -> I + Send + Sync + 'static,
    ) -> Self {
        BatchEvaluator {
            handle,
            encode: Arc::new(encode),
            _g: PhantomData,
        }
    }

    /// The service statistics.
    pub fn stats(&self) -> BatchStats {
        self.handle.stats()
    }
}

impl<G: Game, I: Send + 'static> Evaluator<G> for BatchEvaluator<G, I> {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        let inputs: Vec<I> = requests
            .iter()
            .map(|r| (self.encode)(r.game, r.moves))
            .collect();
        let outs = self.handle.submit(inputs)?;
        if outs.len() != requests.len() {
            return Err(EvalError::ModelFailed("wrong number of outputs".into()));
        }
        for (r, o) in requests.iter_mut().zip(outs) {
            r.priors = o.priors;
            r.wdl = o.wdl;
        }
        crate::eval::check_finite(requests)
    }
}
