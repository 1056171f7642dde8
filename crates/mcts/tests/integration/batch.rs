use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService, EvalInput, EvalOutput};
use shogi_mcts::toy::{TicTacToe, play_out};
use shogi_mcts::{EvalError, Search, SearchConfig, SearchLimits, Wdl};

/// A service configuration: at most `max_batch` requests a batch, waiting `max_wait`
/// for more.
fn batching(max_batch: usize, max_wait: Duration) -> BatchConfig {
    BatchConfig {
        max_batch,
        max_wait,
        callers: 0,
    }
}

#[test]
fn many_threads_every_request_answered_correctly() {
    let svc = BatchService::start(batching(32, Duration::from_millis(1)), |xs: &[u64]| {
        std::thread::sleep(Duration::from_micros(200));
        xs.iter().map(|x| x * 2 + 1).collect::<Vec<u64>>()
    });
    let threads: Vec<_> = (0..16u64)
        .map(|t| {
            let h = svc.handle();
            std::thread::spawn(move || {
                for i in 0..200u64 {
                    let n = (i % 5 + 1) as usize;
                    let xs: Vec<u64> = (0..n as u64).map(|k| t * 1_000_000 + i * 10 + k).collect();
                    let out = h.submit(xs.clone()).unwrap();
                    assert_eq!(out, xs.iter().map(|x| x * 2 + 1).collect::<Vec<_>>());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let st = svc.shutdown();
    assert_eq!(st.requests, 16 * 200);
    assert_eq!(st.inputs, 16 * (200 / 5) * (1 + 2 + 3 + 4 + 5));
    assert!(st.max_batch_seen <= 32);
    assert!(
        st.avg_batch > 2.0,
        "batching should combine requests: {st:?}"
    );
    assert!(st.model_time > Duration::ZERO);
}

#[test]
fn oversized_request_is_split_into_chunks() {
    let svc = BatchService::start(
        BatchConfig {
            max_batch: 4,
            ..Default::default()
        },
        |xs: &[u32]| {
            assert!(xs.len() <= 4);
            xs.to_vec()
        },
    );
    let h = svc.handle();
    assert_eq!(
        h.submit((0..10).collect()).unwrap(),
        (0..10).collect::<Vec<u32>>()
    );
    assert_eq!(h.call(7).unwrap(), 7);
}

#[test]
fn shutdown_mid_traffic_gives_answers_or_errors_never_hangs() {
    let answered = Arc::new(AtomicUsize::new(0));
    let errored = Arc::new(AtomicUsize::new(0));
    let svc = BatchService::start(batching(8, Duration::from_millis(1)), |xs: &[u32]| {
        std::thread::sleep(Duration::from_millis(1));
        xs.to_vec()
    });
    let threads: Vec<_> = (0..12)
        .map(|_| {
            let h = svc.handle();
            let (a, e) = (answered.clone(), errored.clone());
            std::thread::spawn(move || {
                loop {
                    match h.submit(vec![1, 2, 3]) {
                        Ok(v) => {
                            assert_eq!(v, vec![1, 2, 3]);
                            a.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(err) => {
                            assert_eq!(err, EvalError::ServiceShutDown);
                            e.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    drop(svc); // joins the service thread
    for t in threads {
        t.join().unwrap(); // every actor saw an error and stopped: no deadlock
    }
    assert!(answered.load(Ordering::Relaxed) > 0);
    assert_eq!(errored.load(Ordering::Relaxed), 12);
}

#[test]
fn actors_that_stop_mid_batch_do_not_break_the_service() {
    let svc = BatchService::start(batching(64, Duration::from_millis(2)), |xs: &[u32]| {
        std::thread::sleep(Duration::from_millis(2));
        xs.to_vec()
    });
    // Actors that give up while their request is inside a batch.
    for _ in 0..8 {
        let h = svc.handle();
        let r = h.submit_timeout(vec![1, 2], Duration::from_micros(100));
        assert!(matches!(r, Err(EvalError::Timeout) | Ok(_)));
    }
    let gave_up: Vec<_> = (0..8)
        .map(|_| {
            let h = svc.handle();
            std::thread::spawn(move || h.submit_timeout(vec![9], Duration::from_micros(50)))
        })
        .collect();
    for t in gave_up {
        let _ = t.join().unwrap();
    }
    // Threads that submit once and exit (their reply arrives after they are gone is fine
    // since submit waits; simulate abandonment with a thread that panics after submit).
    for _ in 0..8 {
        let h = svc.handle();
        let _ = std::thread::spawn(move || {
            let _ = h.submit(vec![1]);
            panic!("actor dies");
        })
        .join();
    }
    let h = svc.handle();
    assert_eq!(h.submit(vec![5, 6]).unwrap(), vec![5, 6]);
    // Dropping all handles and the service ends cleanly.
    drop(h);
    drop(svc);
}

#[test]
fn model_panic_is_reported_and_service_survives() {
    let svc = BatchService::start(batching(4, Duration::ZERO), |xs: &[i32]| {
        if xs.contains(&-1) {
            panic!("bad input");
        }
        xs.to_vec()
    });
    let h = svc.handle();
    assert!(matches!(h.submit(vec![-1]), Err(EvalError::ModelFailed(_))));
    assert_eq!(h.submit(vec![3]).unwrap(), vec![3]);
    let wrong = BatchService::start(BatchConfig::default(), |_xs: &[i32]| Vec::<i32>::new());
    assert!(matches!(
        wrong.handle().submit(vec![1]),
        Err(EvalError::ModelFailed(_))
    ));
}

#[test]
fn searches_on_many_threads_share_one_service() {
    let svc = BatchService::start(
        batching(64, Duration::from_millis(1)),
        |xs: &[EvalInput<TicTacToe>]| {
            xs.iter()
                .map(|x| EvalOutput {
                    priors: vec![1.0 / x.moves.len() as f32; x.moves.len()],
                    wdl: Wdl::DRAW,
                })
                .collect::<Vec<_>>()
        },
    );
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let ev = BatchEvaluator::new(svc.handle());
            std::thread::spawn(move || {
                let c = SearchConfig {
                    simulations: 64,
                    ..SearchConfig::alphazero()
                };
                play_out(&mut Search::new(c, t), TicTacToe::new(), &ev);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let st = svc.stats();
    assert!(st.batches > 0 && st.avg_batch >= 1.0, "{st:?}");
    // After shutdown, the evaluator fails cleanly and the search reports it.
    let ev = BatchEvaluator::new(svc.handle());
    drop(svc);
    let mut s = Search::new(SearchConfig::default(), 0);
    assert!(
        s.search(&TicTacToe::new(), &ev, &SearchLimits::default())
            .is_err()
    );
    assert_eq!(s.tree_size(), 0);
}

#[test]
fn model_built_on_service_thread() {
    use std::rc::Rc; // not Send: proves the model never crosses threads
    let svc = BatchService::start_with(BatchConfig::default(), || {
        let state = Rc::new(3u32);
        move |xs: &[u32]| xs.iter().map(|x| x + *state).collect::<Vec<u32>>()
    });
    assert_eq!(svc.handle().call(4).unwrap(), 7);
}

/// A new model replaces the served one between batches while threads keep submitting:
/// no request is refused or lost, every answer comes from one model or the other, the
/// answers switch to the new model once it is in and never switch back, and the old
/// model is dropped.
#[test]
fn a_replaced_model_serves_the_next_batches_and_no_request_waits_or_fails() {
    struct Tagged {
        tag: u64,
        alive: Arc<AtomicUsize>,
    }
    impl Drop for Tagged {
        fn drop(&mut self) {
            self.alive.fetch_sub(1, Ordering::SeqCst);
        }
    }
    impl shogi_mcts::batch::BatchModel<u64, u64> for Tagged {
        fn run(&mut self, inputs: &[u64]) -> Vec<u64> {
            std::thread::sleep(Duration::from_micros(100));
            inputs.iter().map(|x| x * 10 + self.tag).collect()
        }
    }
    let alive = Arc::new(AtomicUsize::new(1));
    let svc = BatchService::start(
        batching(16, Duration::from_millis(1)),
        Tagged {
            tag: 1,
            alive: alive.clone(),
        },
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // How many threads have been answered by each model: the model is replaced once
    // every thread has had an answer of the first, and the threads stop once every one
    // has had an answer of the second, however slowly a loaded machine runs them.
    let answered = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (h, stop, answered) = (svc.handle(), stop.clone(), answered.clone());
            std::thread::spawn(move || {
                let mut tags = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let xs: Vec<u64> = (0..3).map(|k| t * 1_000_000 + i * 10 + k).collect();
                    let out = h.submit(xs.clone()).expect("never refused while replacing");
                    let tag = out[0] % 10;
                    for (x, y) in xs.iter().zip(&out) {
                        assert_eq!(*y, x * 10 + tag, "one model answers a whole request");
                    }
                    if !tags.contains(&tag) {
                        answered[tag as usize - 1].fetch_add(1, Ordering::SeqCst);
                    }
                    tags.push(tag);
                    i += 1;
                }
                tags
            })
        })
        .collect();
    let wait_for_all = |model: usize| {
        while answered[model].load(Ordering::SeqCst) < 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    wait_for_all(0);
    alive.fetch_add(1, Ordering::SeqCst);
    svc.replace_model(Tagged {
        tag: 2,
        alive: alive.clone(),
    })
    .unwrap();
    wait_for_all(1);
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        let tags = t.join().unwrap();
        assert!(tags.contains(&1) && tags.last() == Some(&2), "{tags:?}");
        let first_new = tags.iter().position(|&t| t == 2).unwrap();
        assert!(tags[first_new..].iter().all(|&t| t == 2), "{tags:?}");
    }
    // The old model was dropped when the new one came in.
    assert_eq!(alive.load(Ordering::SeqCst), 1);
    let stats = svc.shutdown();
    assert_eq!(stats.replacements, 1);
    assert_eq!(alive.load(Ordering::SeqCst), 0);
}

/// A model that computes asynchronously (a GPU's): its launch returns at once and the
/// outputs come when collected. The service keeps two of its batches in flight (the
/// next one prepared while the last computes), launches each batch, every caller gets
/// its own answers, a model replaced while a batch is in flight still answers that
/// batch, and shutting down collects the batch in flight rather than drop it.
#[test]
fn a_pipelined_model_has_two_batches_in_flight_and_answers_every_caller() {
    use std::sync::Mutex;
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Event {
        Prepare(u64),
        Launch(u64),
        Collect(u64),
    }
    struct Async {
        tag: u64,
        next: u64,
        events: Arc<Mutex<Vec<Event>>>,
    }
    impl shogi_mcts::batch::BatchModel<u64, u64> for Async {
        fn run(&mut self, inputs: &[u64]) -> Vec<u64> {
            inputs.iter().map(|x| x * 10 + self.tag).collect()
        }
        fn pipelined(&self) -> bool {
            true
        }
        fn prepare<'a>(&'a mut self, inputs: &[u64]) -> shogi_mcts::batch::Launch<'a, u64> {
            let (id, events) = (self.next, self.events.clone());
            self.next += 1;
            events.lock().unwrap().push(Event::Prepare(id));
            let outputs = self.run(inputs);
            Box::new(move || {
                events.lock().unwrap().push(Event::Launch(id));
                Box::new(move || {
                    // The device computes for a while after the launch.
                    std::thread::sleep(Duration::from_micros(300));
                    events.lock().unwrap().push(Event::Collect(id));
                    outputs
                })
            })
        }
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let svc = BatchService::start(
        batching(8, Duration::from_millis(1)),
        Async {
            tag: 1,
            next: 0,
            events: events.clone(),
        },
    );
    let threads: Vec<_> = (0..6u64)
        .map(|t| {
            let h = svc.handle();
            std::thread::spawn(move || {
                let mut tags = Vec::new();
                for i in 0..150u64 {
                    // Now and then a request larger than a batch (split into chunks).
                    let n = if i % 50 == 7 { 19 } else { i % 3 + 1 };
                    let xs: Vec<u64> = (0..n).map(|k| t * 1_000_000 + i * 100 + k).collect();
                    let out = h.submit(xs.clone()).unwrap();
                    let tag = out[0] % 10;
                    assert_eq!(out, xs.iter().map(|x| x * 10 + tag).collect::<Vec<_>>());
                    tags.push(tag);
                }
                tags
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    svc.replace_model(Async {
        tag: 2,
        next: 1_000_000,
        events: events.clone(),
    })
    .unwrap();
    for t in threads {
        let tags = t.join().unwrap();
        let first_new = tags.iter().position(|&t| t == 2).unwrap_or(tags.len());
        assert!(tags[first_new..].iter().all(|&t| t == 2), "{tags:?}");
    }
    let stats = svc.shutdown();
    assert_eq!(stats.requests, 6 * 150);
    let events = events.lock().unwrap().clone();
    let at = |e: Event| events.iter().position(|x| *x == e);
    let prepared: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Prepare(id) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(prepared.len() as u64, stats.batches);
    // Every batch was prepared, launched and collected, in that order.
    for id in &prepared {
        let (p, l, c) = (
            at(Event::Prepare(*id)),
            at(Event::Launch(*id)),
            at(Event::Collect(*id)),
        );
        assert!(p < l && l.is_some() && l < c, "batch {id}: {events:?}");
    }
    // Two in flight: batches prepared while the one before them was uncollected.
    let overlapped = prepared
        .iter()
        .filter(|&&id| at(Event::Prepare(id + 1)).is_some_and(|p| Some(p) < at(Event::Collect(id))))
        .count();
    assert!(overlapped > 0, "never two batches in flight: {events:?}");
}

/// A service that knows its callers runs a batch as soon as each of them has asked: with
/// one caller it never waits for a batch to fill, however long `max_wait` is (an
/// inference thread per actor thread would otherwise idle its core for `max_wait` on
/// every batch); with two, the second caller's request joins the first's batch.
#[test]
fn a_batch_holding_every_callers_request_runs_at_once() {
    let wait = Duration::from_secs(30);
    let serve = |callers| {
        BatchService::start(
            BatchConfig {
                max_batch: 64,
                max_wait: wait,
                callers,
            },
            |xs: &[u32]| xs.to_vec(),
        )
    };
    let alone = serve(1);
    let began = std::time::Instant::now();
    for i in 0..20u32 {
        assert_eq!(
            alone.handle().submit(vec![i, i + 1]).unwrap(),
            vec![i, i + 1]
        );
    }
    assert!(
        began.elapsed() < wait / 2,
        "a lone caller waited {:?} for a batch to fill",
        began.elapsed()
    );
    assert_eq!(alone.shutdown().batches, 20);

    let pair = serve(2);
    let began = std::time::Instant::now();
    std::thread::scope(|scope| {
        for t in 0..2u32 {
            let handle = pair.handle();
            scope.spawn(move || {
                for i in 0..20u32 {
                    assert_eq!(handle.submit(vec![t, i]).unwrap(), vec![t, i]);
                }
            });
        }
    });
    assert!(began.elapsed() < wait / 2, "waited {:?}", began.elapsed());
    let stats = pair.shutdown();
    assert_eq!(stats.requests, 40);
    assert!(
        stats.batches <= 40 && stats.max_batch_seen <= 4,
        "{stats:?}"
    );
}

/// Several services' counters read as one: sums, the largest batch, the mean fill over
/// every batch.
#[test]
fn the_counters_of_several_services_combine() {
    let small = BatchService::start(batching(4, Duration::ZERO), |xs: &[u32]| xs.to_vec());
    let large = BatchService::start(batching(8, Duration::ZERO), |xs: &[u32]| xs.to_vec());
    small.handle().submit(vec![1, 2]).unwrap();
    large.handle().submit(vec![1, 2, 3, 4, 5, 6]).unwrap();
    let combined = shogi_mcts::batch::BatchStats::combined([small.shutdown(), large.shutdown()]);
    assert_eq!((combined.batches, combined.inputs), (2, 8));
    assert_eq!(combined.max_batch_seen, 6);
    assert!((combined.avg_batch - 4.0).abs() < 1e-9, "{combined:?}");
    // 8 inputs over room for 4 + 8.
    assert!(
        (combined.avg_fill - 8.0 / 12.0).abs() < 1e-9,
        "{combined:?}"
    );
}

/// A network that answers a NaN (a value or a prior) fails the call by name: nothing of
/// it reaches a tree, and the search says why.
#[test]
fn non_finite_outputs_fail_the_call_and_never_reach_a_tree() {
    for poison in ["value", "prior"] {
        let svc = BatchService::start(
            BatchConfig::default(),
            move |xs: &[EvalInput<TicTacToe>]| {
                xs.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let mut priors = vec![1.0 / x.moves.len() as f32; x.moves.len()];
                        let mut wdl = Wdl::DRAW;
                        if i == 0 && poison == "value" {
                            wdl.win = f32::NAN;
                        } else if i == 0 {
                            priors[0] = f32::INFINITY;
                        }
                        EvalOutput { priors, wdl }
                    })
                    .collect::<Vec<_>>()
            },
        );
        let ev = BatchEvaluator::new(svc.handle());
        let mut s = Search::new(SearchConfig::default(), 0);
        let err = s
            .search(&TicTacToe::new(), &ev, &SearchLimits::default())
            .unwrap_err();
        assert!(err.to_string().contains("non-finite"), "{poison}: {err}");
        assert_eq!(s.tree_size(), 0, "{poison}");
    }
}
