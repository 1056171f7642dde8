//! In-process harness: the engine runs on a thread, fed through a channel-backed reader;
//! its output lines come back with the instant they were written.
#![allow(dead_code)]

use std::io::{self, BufReader, Read, Write};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};
use shogi_usi::{Engine, Options};

struct ChannelReader {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

struct LineWriter {
    tx: Sender<(Instant, String)>,
    partial: Vec<u8>,
}

impl Write for LineWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        for &c in b {
            if c == b'\n' {
                let line = String::from_utf8(std::mem::take(&mut self.partial))
                    .expect("engine output is UTF-8");
                let _ = self.tx.send((Instant::now(), line));
            } else {
                self.partial.push(c);
            }
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A running engine.
pub struct Harness {
    tx: Option<Sender<Vec<u8>>>,
    rx: Receiver<(Instant, String)>,
    handle: Option<JoinHandle<io::Result<()>>>,
    /// Every line received so far.
    pub log: Vec<String>,
}

impl Harness {
    pub fn start(options: Options) -> Harness {
        Harness::start_for::<shogi_rules::ShogiGame>(options)
    }

    /// An engine playing `G` (`ShogiGame` or `TaiGame`).
    pub fn start_for<G: shogi_usi::game::UsiGame>(options: Options) -> Harness {
        Harness::start_with::<G>(options, None)
    }

    /// An engine playing `G` that finds a network's run with `lookup` (`RunSearch`).
    pub fn start_with<G: shogi_usi::game::UsiGame>(
        options: Options,
        lookup: Option<shogi_usi::RunSearchLookup>,
    ) -> Harness {
        let (in_tx, in_rx) = unbounded();
        let (out_tx, out_rx) = unbounded();
        let handle = std::thread::spawn(move || {
            let mut engine = Engine::<G>::new(
                LineWriter {
                    tx: out_tx,
                    partial: Vec::new(),
                },
                options,
            );
            if let Some(lookup) = lookup {
                engine = engine.with_run_search(lookup);
            }
            engine.run(BufReader::new(ChannelReader {
                rx: in_rx,
                buf: Vec::new(),
                pos: 0,
            }))
        });
        Harness {
            tx: Some(in_tx),
            rx: out_rx,
            handle: Some(handle),
            log: Vec::new(),
        }
    }

    pub fn send(&self, line: &str) -> Instant {
        self.send_bytes(format!("{line}\n").as_bytes())
    }

    pub fn send_bytes(&self, b: &[u8]) -> Instant {
        let t = Instant::now();
        self.tx
            .as_ref()
            .unwrap()
            .send(b.to_vec())
            .expect("engine alive");
        t
    }

    /// Lines up to and including the first one for which `done` holds; panics after
    /// `timeout`.
    pub fn until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Vec<(Instant, String)> {
        let end = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((t, line)) => {
                    self.log.push(line.clone());
                    let stop = done(&line);
                    got.push((t, line));
                    if stop {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "timed out after {timeout:?}; got {:?}",
                    got.iter().map(|g| &g.1).collect::<Vec<_>>()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "engine ended; got {:?}",
                    got.iter().map(|g| &g.1).collect::<Vec<_>>()
                ),
            }
        }
    }

    /// Lines until `bestmove`.
    pub fn bestmove(&mut self, timeout: Duration) -> Vec<(Instant, String)> {
        self.until(timeout, |l| l.starts_with("bestmove"))
    }

    /// Sends `line` (a `go` or `ponderhit`) and reads until `bestmove`: the lines, and
    /// how long the answer took from the send.
    pub fn timed_bestmove(
        &mut self,
        line: &str,
        timeout: Duration,
    ) -> (Vec<(Instant, String)>, Duration) {
        let sent = self.send(line);
        let lines = self.bestmove(timeout);
        let took = lines.last().expect("a bestmove line").0 - sent;
        (lines, took)
    }

    /// Sends `isready` and waits for `readyok`.
    /// `usi`, answered by `usiok`: the lines in between (id and options).
    pub fn handshake(&mut self) -> Vec<String> {
        self.send("usi");
        self.until(Duration::from_secs(60), |l| l == "usiok")
            .into_iter()
            .map(|(_, line)| line)
            .collect()
    }

    pub fn ready(&mut self) {
        self.ready_lines();
    }

    /// Sends `isready` and waits for `readyok`: the lines up to it (the `info string`
    /// lines a new network or search setting prints).
    pub fn ready_lines(&mut self) -> Vec<(Instant, String)> {
        self.send("isready");
        self.until(Duration::from_secs(60), |l| l == "readyok")
    }

    /// Drains pending lines without waiting.
    pub fn drain(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        while let Ok((_, l)) = self.rx.try_recv() {
            self.log.push(l.clone());
            v.push(l);
        }
        v
    }

    /// Ends the engine's input, as a closed pipe does, and reads every line it writes
    /// until it ends; its thread must end cleanly within `timeout`.
    pub fn end_input(mut self, timeout: Duration) -> Vec<String> {
        drop(self.tx.take());
        let end = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((_, line)) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("the engine did not end at the end of its input; got {lines:?}")
                }
            }
        }
        let h = self.handle.take().unwrap();
        h.join()
            .expect("engine thread did not panic")
            .expect("engine ended without an I/O error");
        lines
    }

    /// Sends `quit` and joins the engine thread, which must end cleanly.
    pub fn quit(mut self) {
        self.send("quit");
        let h = self.handle.take().unwrap();
        h.join()
            .expect("engine thread did not panic")
            .expect("engine ended without an I/O error");
    }
}
