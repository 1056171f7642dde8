//! Network speed on the host CPU (or CUDA): inference positions/s and training samples/s
//! at several batch sizes, for one architecture. Run by `scripts/bench/net.sh`, which puts
//! these figures beside the same network in PyTorch (`scripts/bench/torch_net.py`).
//!
//! ```text
//! cargo run --release -p shogi-model --example net_bench -- \
//!     --variant shogi --blocks 10 --channels 128 --threads 2 [--batches 1,16,64,256]
//!     [--modes infer,infer-legal,train] [--secs 1.5] [--device cpu] [--se] [--f16] [--print-config]
//! ```
//!
//! What is timed (the PyTorch script times the same):
//! * `infer`: [`Inference::infer`] on a host `f32` buffer (eval mode, `no_grad`, policy
//!   logits and softmaxed WDL back in `Vec<f32>`).
//! * `infer-legal`: [`Inference::infer_legal`] as self-play calls it: the logits of 80
//!   moves a position (about a middlegame's legal moves) gathered on the device, not the
//!   whole policy. On a GPU `infer` mostly times the copy of 11,259 floats a position
//!   back to the host; this mode times what self-play waits for.
//! * `train`: [`NetOptimizer::step_sparse`] as the learner calls it (host buffers and sparse
//!   one-hot policy targets to tensors, train-mode forward, policy CE + WDL CE, backward,
//!   global grad-norm clip 10, SGD momentum 0.9 Nesterov wd 1e-4, losses read back).
//! * `--f16`: inference in the device's half precision (f16 on CUDA, bf16 on a CPU with
//!   AVX-512 BF16, f32 on other CPUs) and training in mixed precision (CUDA only), as
//!   `selfplay.half_inference` and `learner.mixed_precision` do in a run.
//!
//! Output: a table, and one `RESULT impl=tch ...` line per measurement for the script.

use std::time::Instant;

use shogi_model::tch::{self, Device};
use shogi_model::{
    Inference, InferenceOptions, Model, NetOptimizer, OptimizerSettings, SparsePolicy,
    model_config_for, parse_device,
};
use shogi_rules::Variant;

struct Args {
    variant: Variant,
    blocks: usize,
    channels: usize,
    threads: usize,
    batches: Vec<usize>,
    modes: Vec<String>,
    secs: f64,
    device: Device,
    se: bool,
    f16: bool,
    print_config: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        variant: Variant::Shogi,
        blocks: 6,
        channels: 64,
        threads: 2,
        batches: vec![1, 16, 64, 256],
        modes: vec!["infer".into(), "train".into()],
        secs: 1.5,
        device: Device::Cpu,
        se: false,
        print_config: false,
        f16: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--variant" => {
                a.variant = match val()?.as_str() {
                    "shogi" => Variant::Shogi,
                    "minishogi" => Variant::Minishogi,
                    v => return Err(format!("unknown variant {v}")),
                }
            }
            "--blocks" => a.blocks = val()?.parse().map_err(|e| format!("--blocks: {e}"))?,
            "--channels" => a.channels = val()?.parse().map_err(|e| format!("--channels: {e}"))?,
            "--threads" => a.threads = val()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--secs" => a.secs = val()?.parse().map_err(|e| format!("--secs: {e}"))?,
            "--batches" => {
                a.batches = val()?
                    .split(',')
                    .map(|s| s.parse().map_err(|e| format!("--batches: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--modes" => a.modes = val()?.split(',').map(str::to_string).collect(),
            "--device" => a.device = parse_device(&val()?).map_err(|e| e.to_string())?,
            "--se" => a.se = true,
            "--f16" => a.f16 = true,
            "--print-config" => a.print_config = true,
            f => return Err(format!("unknown argument {f}")),
        }
    }
    Ok(a)
}

/// Moves a position in `infer-legal` (a middlegame's legal moves, roughly).
const LEGAL_MOVES: usize = 80;

/// xorshift64: deterministic inputs without a rand dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Runs `f` twice untimed, then again until `secs` have passed (at least 3 times); returns
/// calls/s from the median call time (the host is shared: the median ignores calls that
/// other processes slowed down).
fn timed(secs: f64, mut f: impl FnMut()) -> f64 {
    f();
    f();
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || start.elapsed().as_secs_f64() < secs {
        let t0 = Instant::now();
        f();
        times.push(t0.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    1.0 / times[times.len() / 2]
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("net_bench: {e}");
            std::process::exit(2);
        }
    };
    let mut cfg = model_config_for(args.variant, args.blocks, args.channels);
    cfg.se = args.se;
    let vname = match args.variant {
        Variant::Shogi => "shogi",
        Variant::Minishogi => "minishogi",
    };
    if args.print_config {
        // Consumed by net.sh to build the identical PyTorch network.
        println!(
            "--input-planes {} --policy-planes {} --board {} --value-channels {} --value-hidden {}{}",
            cfg.input_planes,
            cfg.policy_planes,
            cfg.board_h,
            cfg.value_channels,
            cfg.value_hidden,
            if cfg.se { " --se" } else { "" }
        );
        return;
    }
    tch::set_num_threads(args.threads as i32);
    tch::manual_seed(0);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    println!(
        "net_bench: {vname} {}x{} se={} device={:?} threads={} (input {} planes, policy {} planes)",
        cfg.blocks,
        cfg.channels,
        cfg.se,
        args.device,
        args.threads,
        cfg.input_planes,
        cfg.policy_planes
    );
    println!("| mode | batch | per second |");
    println!("|---|---|---|");
    for mode in &args.modes {
        for &b in &args.batches {
            let inputs: Vec<f32> = (0..b * cfg.input_size())
                .map(|_| if rng.next() % 10 < 3 { 1.0 } else { 0.0 })
                .collect();
            let inference = || {
                Inference::new(
                    Model::new(&cfg, args.device),
                    args.device,
                    &InferenceOptions {
                        max_batch: b,
                        half: args.f16,
                        ..Default::default()
                    },
                )
            };
            let rate = match mode.as_str() {
                "infer" => {
                    let inf = inference();
                    timed(args.secs, || {
                        let (p, v) = inf.infer(&inputs, b);
                        std::hint::black_box((p, v));
                    }) * b as f64
                }
                "infer-legal" => {
                    let inf = inference();
                    let legal: Vec<Vec<u32>> = (0..b)
                        .map(|_| {
                            (0..LEGAL_MOVES)
                                .map(|_| (rng.next() % cfg.policy_size() as u64) as u32)
                                .collect()
                        })
                        .collect();
                    let legal: Vec<&[u32]> = legal.iter().map(Vec::as_slice).collect();
                    timed(args.secs, || {
                        std::hint::black_box(inf.infer_legal(&inputs, b, &legal));
                    }) * b as f64
                }
                "train" => {
                    let mut pt = SparsePolicy::new();
                    let mut vt = vec![0f32; b * 3];
                    for i in 0..b {
                        let index = (rng.next() as usize % cfg.policy_size()) as u32;
                        pt.push_row(i, &[(index, 1.0)]);
                        vt[i * 3 + (rng.next() as usize) % 3] = 1.0;
                    }
                    let mut trainer = NetOptimizer::new(
                        Model::new(&cfg, args.device),
                        // The learner's defaults: SGD with Nesterov momentum 0.9, lr 0.02.
                        OptimizerSettings {
                            mixed_precision: args.f16,
                            ..OptimizerSettings::default()
                        },
                    )
                    .expect("optimizer");
                    timed(args.secs, || {
                        std::hint::black_box(trainer.step_sparse(
                            &inputs,
                            (&pt, &SparsePolicy::new()),
                            &vt,
                            b,
                        ));
                    }) * b as f64
                }
                m => {
                    eprintln!("net_bench: unknown mode {m}");
                    std::process::exit(2);
                }
            };
            println!("| {mode} | {b} | {rate:.1} |");
            println!(
                "RESULT impl=tch variant={vname} blocks={} channels={} threads={} mode={mode} batch={b} rate={rate:.1}",
                cfg.blocks, cfg.channels, args.threads
            );
        }
    }
}
