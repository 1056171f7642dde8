//! Batched inference matches the raw forward pass.

use crate::common;

use shogi_model::tch::{self, Device, Kind, Tensor};
use shogi_model::{
    Inference, InferenceOptions, Model, ModelConfig, PlanesRef, cpu_computes_bf16, set_num_threads,
};

fn cfg() -> ModelConfig {
    ModelConfig {
        value_channels: 4,
        value_hidden: 16,
        ..ModelConfig::small(2, 16, 6, (5, 5), 4)
    }
}

fn twin(cfg: &ModelConfig, device: Device) -> (Model, Model) {
    tch::manual_seed(3);
    let a = Model::new(cfg, Device::Cpu);
    let mut b = Model::new(cfg, Device::Cpu);
    b.vs.copy(&a.vs).unwrap();
    let mut a = a;
    a.vs.set_device(device);
    (a, b)
}

fn inputs(cfg: &ModelConfig, batch: usize, seed: u32) -> Vec<f32> {
    (0..batch * cfg.input_size())
        .map(|i| ((i as f32 * 0.37 + seed as f32).sin() * 1.5).round() * 0.5)
        .collect()
}

fn reference(model: &Model, xs: &[f32], batch: usize) -> (Vec<f32>, Vec<f32>) {
    tch::no_grad(|| {
        let cfg = model.config();
        let t = Tensor::from_slice(xs).view([batch as i64, cfg.input_size() as i64]);
        let (p, v) = model.forward_t(&t, false);
        let v = v.softmax(1, Kind::Float);
        (
            Vec::<f32>::try_from(&p.view([-1])).unwrap(),
            Vec::<f32>::try_from(&v.view([-1])).unwrap(),
        )
    })
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// A small net on the CPU (`half`: in the CPU's half precision) and its f32 twin.
fn cpu_inference(cfg: &ModelConfig, half: bool) -> (Inference, Model) {
    set_num_threads(1);
    let (a, reference_model) = twin(cfg, Device::Cpu);
    let options = InferenceOptions {
        half,
        max_batch: 2,
        num_threads: Some(2),
    };
    (Inference::new(a, Device::Cpu, &options), reference_model)
}

#[test]
fn cpu_inference_matches_forward() {
    let cfg = cfg();
    let (inf, reference_model) = cpu_inference(&cfg, false);
    assert!(!inf.is_half());
    assert_eq!(inf.device(), Device::Cpu);
    for batch in [1usize, 5, 17] {
        let xs = inputs(&cfg, batch, batch as u32);
        let (p, w) = inf.infer(&xs, batch);
        assert_eq!(p.len(), batch * cfg.policy_size());
        assert_eq!(w.len(), batch * 3);
        let (rp, rw) = reference(&reference_model, &xs, batch);
        assert_eq!(p, rp);
        assert_eq!(w, rw);
        for row in w.chunks(3) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }
    // A batch of one equals the same position inside a larger batch (eval-mode BN).
    let xs = inputs(&cfg, 4, 9);
    let (p4, w4) = inf.infer(&xs, 4);
    let (p1, w1) = inf.infer(&xs[2 * cfg.input_size()..3 * cfg.input_size()], 1);
    let ps = cfg.policy_size();
    assert!(max_diff(&p1, &p4[2 * ps..3 * ps]) < 1e-5);
    assert!(max_diff(&w1, &w4[6..9]) < 1e-6);
    let (p0, w0) = inf.infer(&[], 0);
    assert!(p0.is_empty() && w0.is_empty());
}

/// Half precision on the CPU is bf16 where the CPU computes it natively (AVX-512 BF16),
/// f32 elsewhere.
#[test]
fn cpu_half_inference_is_bf16_where_the_cpu_computes_it() {
    let cfg = cfg();
    let (inf, _) = cpu_inference(&cfg, true);
    let bf16 = cpu_computes_bf16();
    assert_eq!(inf.is_half(), bf16);
    assert_eq!(inf.kind(), if bf16 { Kind::BFloat16 } else { Kind::Float });
}

/// In bf16 the answers are the f32 forward's to bf16 rounding, through the full forward
/// and the frozen net alike (checked on any CPU: libtorch computes bf16 without native
/// support too, only slower).
#[test]
fn cpu_bf16_inference_is_the_f32_forward_to_bf16_rounding() {
    let cfg = cfg();
    set_num_threads(1);
    let (a, reference_model) = twin(&cfg, Device::Cpu);
    let options = InferenceOptions {
        half: false,
        max_batch: 2,
        num_threads: Some(2),
    };
    let inf = Inference::with_kind(a, Device::Cpu, Kind::BFloat16, &options);
    assert_eq!(inf.kind(), Kind::BFloat16);
    assert!(inf.is_half());
    let every: Vec<u32> = (0..cfg.policy_size() as u32).collect();
    let mut largest = 0f32;
    for batch in [1usize, 5, 17] {
        let xs = inputs(&cfg, batch, batch as u32);
        let (rp, rw) = reference(&reference_model, &xs, batch);
        let legal: Vec<&[u32]> = (0..batch).map(|_| every.as_slice()).collect();
        for (what, (p, w)) in [
            ("infer", inf.infer(&xs, batch)),
            ("infer_legal", inf.infer_legal(&xs, batch, &legal)),
        ] {
            let (dp, dw) = (max_diff(&p, &rp), max_diff(&w, &rw));
            assert!(dp < 0.1, "{what} batch {batch}: policy diff {dp}");
            assert!(dw < 0.02, "{what} batch {batch}: wdl diff {dw}");
            largest = largest.max(dp);
        }
    }
    // Rounded, not f32 in disguise: bf16 keeps 8 bits of mantissa.
    assert!(largest > 1e-5, "bf16 answers equal f32's to {largest}");
}

#[test]
#[should_panic(expected = "inference input has")]
fn wrong_buffer_size_panics() {
    let cfg = cfg();
    let inf = Inference::new(
        Model::new(&cfg, Device::Cpu),
        Device::Cpu,
        &InferenceOptions::default(),
    );
    let _ = inf.infer(&[0.0; 10], 1);
}

/// Ignored, so a CPU run reports it as not run; `scripts/test.sh` runs it where
/// `nvidia-smi` sees a GPU, and run without one it fails rather than pass having checked
/// nothing.
#[test]
#[ignore = "needs a CUDA device: cargo test -p shogi-model -- --ignored cuda"]
fn cuda_inference_matches_cpu() {
    let dev = common::cuda_device();
    let cfg = cfg();
    for half in [false, true] {
        let (a, reference_model) = twin(&cfg, dev);
        let inf = Inference::new(
            a,
            dev,
            &InferenceOptions {
                half,
                max_batch: 4,
                num_threads: None,
            },
        );
        assert_eq!(inf.is_half(), half);
        for batch in [1usize, 3, 64] {
            let xs = inputs(&cfg, batch, 1 + batch as u32);
            let (p, w) = inf.infer(&xs, batch);
            let (rp, rw) = reference(&reference_model, &xs, batch);
            let (tp, tw) = if half { (0.05, 0.01) } else { (1e-3, 1e-4) };
            let dp = max_diff(&p, &rp);
            let dw = max_diff(&w, &rw);
            eprintln!("cuda half={half} batch={batch}: policy diff {dp:e}, wdl diff {dw:e}");
            assert!(dp < tp, "policy diff {dp}");
            assert!(dw < tw, "wdl diff {dw}");
            // The frozen net (folded batch norms, the policy at legal indices) on the
            // device: every index of every position.
            let every: Vec<u32> = (0..cfg.policy_size() as u32).collect();
            let legal: Vec<&[u32]> = (0..batch).map(|_| every.as_slice()).collect();
            let (lp, lw) = inf.infer_legal(&xs, batch, &legal);
            let (dp, dw) = (max_diff(&lp, &rp), max_diff(&lw, &rw));
            eprintln!("cuda half={half} batch={batch}: infer_legal diff {dp:e}, wdl {dw:e}");
            assert!(dp < tp, "legal policy diff {dp}");
            assert!(dw < tw, "legal wdl diff {dw}");
        }
        // Two batches in flight, as the self-play service runs them (the next prepared
        // while the last computes, then launched once the last is collected), and
        // batches launched back to back (a staging buffer still being read is waited
        // for before it is refilled): each batch's results stay its own.
        let every: Vec<u32> = (0..cfg.policy_size() as u32).collect();
        let batches: Vec<Vec<f32>> = (0..3).map(|k| inputs(&cfg, 5 + k, 40 + k as u32)).collect();
        let expected: Vec<(Vec<f32>, Vec<f32>)> = batches
            .iter()
            .map(|xs| {
                let n = xs.len() / cfg.input_size();
                let legal: Vec<&[u32]> = (0..n).map(|_| every.as_slice()).collect();
                inf.infer_legal(xs, n, &legal)
            })
            .collect();
        let prepare = |xs: &Vec<f32>| {
            let rows: Vec<PlanesRef<'_>> = xs
                .chunks_exact(cfg.input_size())
                .map(PlanesRef::Dense)
                .collect();
            let legal: Vec<&[u32]> = rows.iter().map(|_| every.as_slice()).collect();
            inf.prepare_legal_planes(&rows, &legal)
        };
        let a = prepare(&batches[0]).launch(&inf);
        let b = prepare(&batches[1]);
        let got_a = a.collect();
        let b = b.launch(&inf);
        let c = prepare(&batches[2]);
        let got_b = b.collect();
        let c = c.launch(&inf);
        let pipelined = vec![got_a, got_b, c.collect()];
        let launched: Vec<_> = batches.iter().map(|xs| prepare(xs).launch(&inf)).collect();
        let back_to_back: Vec<_> = launched.into_iter().map(|p| p.collect()).collect();
        for (how, got) in [("pipelined", pipelined), ("back to back", back_to_back)] {
            for (k, ((p, w), (ep, ew))) in got.iter().zip(&expected).enumerate() {
                assert_eq!(p, ep, "batch {k}'s logits, {how}");
                assert_eq!(w, ew, "batch {k}'s probabilities, {how}");
            }
        }
    }
}

/// The legal-move logits (computed by the frozen net, only at those indices) are the full
/// policy's entries at those indices to float rounding, in order, with `-inf` for an
/// index outside the policy; the values are the same.
#[test]
fn infer_legal_gathers_the_full_policy_at_the_legal_indices() {
    let cfg = cfg();
    let (a, _) = twin(&cfg, Device::Cpu);
    let inf = Inference::new(a, Device::Cpu, &InferenceOptions::default());
    let ps = cfg.policy_size() as u32;
    let legal: Vec<Vec<u32>> = vec![
        vec![0, 7, ps - 1, 3],
        vec![],
        vec![5, u32::MAX, 5, ps],
        (0..ps).rev().collect(),
    ];
    let views: Vec<&[u32]> = legal.iter().map(Vec::as_slice).collect();
    let xs = inputs(&cfg, legal.len(), 4);
    let (full, wdl) = inf.infer(&xs, legal.len());
    let (picked, wdl_legal) = inf.infer_legal(&xs, legal.len(), &views);
    assert!(max_diff(&wdl, &wdl_legal) < 1e-5);
    let expected: Vec<f32> = legal
        .iter()
        .enumerate()
        .flat_map(|(row, indices)| {
            let full = &full;
            indices.iter().map(move |&i| {
                if i < ps {
                    full[row * ps as usize + i as usize]
                } else {
                    f32::NEG_INFINITY
                }
            })
        })
        .collect();
    assert_eq!(picked.len(), expected.len());
    for (k, (got, want)) in picked.iter().zip(&expected).enumerate() {
        assert!(
            got == want || (got - want).abs() < 1e-4,
            "legal logit {k}: {got} vs {want}"
        );
    }
    let (p0, w0) = inf.infer_legal(&[], 0, &[]);
    assert!(p0.is_empty() && w0.is_empty());
}

/// Test binaries link libtorch's CUDA backend too (the build script of every tch-linking
/// crate keeps it): the process has it mapped, or the libtorch is a CPU-only build.
#[test]
fn this_test_binary_has_the_cuda_backend_mapped() {
    use shogi_model::CudaBackend;
    let backend = CudaBackend::of_this_process();
    assert!(
        matches!(
            backend,
            CudaBackend::Loaded(_) | CudaBackend::CpuOnlyBuild { .. }
        ),
        "{backend}"
    );
}
