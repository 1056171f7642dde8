//! libtorch wiring test + Python cross-check: the weights file read back by the venv's
//! `safetensors`/numpy has the same names, shapes and bits, and a PyTorch re-implementation
//! of the architecture (tests/py/crosscheck.py) loaded with those weights (strict names)
//! reproduces Rust's forward pass. The other way round, a checkpoint written by PyTorch
//! (`crosscheck.py write`) loads into the Rust net, which reproduces PyTorch's outputs.

use shogi_testkit::{python, run_ok};
use std::path::Path;

use serde_json::Value;
use shogi_model::tch::{self, Device, Kind, Tensor};
use shogi_model::{Model, ModelConfig, save_weights};

/// Runs `tests/py/crosscheck.py` with `args` and returns its output; fails the test
/// with the script's stderr when it fails.
fn crosscheck_py(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/crosscheck.py");
    let all: Vec<&std::ffi::OsStr> = std::iter::once(script.as_os_str())
        .chain(args.iter().copied())
        .collect();
    run_ok(python(), &all)
}

/// The JSON array `v`, each element read by `read` (the test fails on anything else).
fn json_list<T>(v: &Value, read: impl Fn(&Value) -> Option<T>) -> Vec<T> {
    let items = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    items
        .iter()
        .map(|x| read(x).unwrap_or_else(|| panic!("unexpected element {x}")))
        .collect()
}

fn crosscheck(cfg: &ModelConfig, seed: i64) {
    tch::manual_seed(seed);
    let model = Model::new(cfg, Device::Cpu);
    // Randomise every parameter and buffer (BN affine and running stats included) so a
    // misplaced tensor cannot go unnoticed.
    tch::no_grad(|| {
        for (name, mut t) in model.vs.variables() {
            let r = Tensor::rand(t.size(), (Kind::Float, Device::Cpu));
            if name.ends_with("running_var") {
                t.copy_(&(r + 0.5));
            } else if name.ends_with("bn.weight")
                || name.ends_with("bn1.weight")
                || name.ends_with("bn2.weight")
            {
                t.copy_(&(r * 0.5 + 0.75));
            } else if name.ends_with("running_mean") || name.ends_with("bias") {
                t.copy_(&((r - 0.5) * 0.2));
            }
        }
    });
    let batch = 3;
    let xs = Tensor::randn(
        [
            batch,
            cfg.input_planes as i64,
            cfg.board_h as i64,
            cfg.board_w as i64,
        ],
        (Kind::Float, Device::Cpu),
    );
    let (policy, value) = tch::no_grad(|| model.forward_t(&xs, false));
    assert_eq!(policy.size(), vec![batch, cfg.policy_size() as i64]);
    assert_eq!(value.size(), vec![batch, 3]);

    let dir = tempfile::tempdir().unwrap();
    save_weights(dir.path().join("weights.safetensors"), &model.vs).unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        serde_json::to_vec(cfg).unwrap(),
    )
    .unwrap();
    Tensor::write_safetensors(
        &[("input", &xs), ("policy", &policy), ("value", &value)],
        dir.path().join("io.safetensors"),
    )
    .unwrap();

    let out = crosscheck_py(&[dir.path().as_os_str()]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("crosscheck.py JSON");

    // Names, shapes and exact values of every tensor.
    let vars = model.vs.variables();
    let tensors = json["tensors"].as_object().unwrap();
    let mut ours: Vec<&String> = vars.keys().collect();
    ours.sort();
    let mut theirs: Vec<&String> = tensors.keys().collect();
    theirs.sort();
    assert_eq!(ours, theirs, "tensor names differ");
    for (name, t) in &vars {
        let e = &tensors[name.as_str()];
        assert_eq!(e["dtype"], "float32", "{name}");
        let shape: Vec<i64> = json_list(&e["shape"], Value::as_i64);
        assert_eq!(shape, t.size(), "{name} shape");
        let bits: Vec<u32> = json_list(&e["bits"], |b| b.as_u64().map(|b| b as u32));
        let ours: Vec<u32> = Vec::<f32>::try_from(&t.view([-1]))
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(ours, bits, "{name} values");
    }

    // The PyTorch mirror loaded every tensor under the same names and agrees.
    assert_eq!(json["missing"], Value::Array(Vec::new()), "missing tensors");
    assert_eq!(
        json["unexpected"],
        Value::Array(Vec::new()),
        "unexpected tensors"
    );
    let py_policy: Vec<f64> = json_list(&json["policy"], Value::as_f64);
    let py_value: Vec<f64> = json_list(&json["value"], Value::as_f64);
    let rs_policy = Vec::<f32>::try_from(&policy.view([-1])).unwrap();
    let rs_value = Vec::<f32>::try_from(&value.view([-1])).unwrap();
    assert_eq!(py_policy.len(), rs_policy.len());
    assert_eq!(py_value.len(), rs_value.len());
    let max_diff = |a: &[f32], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (f64::from(*x) - y).abs())
            .fold(0.0f64, f64::max)
    };
    let dp = max_diff(&rs_policy, &py_policy);
    let dv = max_diff(&rs_value, &py_value);
    eprintln!(
        "crosscheck {cfg:?}: torch {} policy max diff {dp:e}, value max diff {dv:e}",
        json["torch_version"]
    );
    assert!(dp <= 1e-5, "policy differs from PyTorch by {dp}");
    assert!(dv <= 1e-5, "value differs from PyTorch by {dv}");
    // Outputs must not be trivially zero.
    assert!(rs_policy.iter().any(|x| x.abs() > 1e-3));
}

/// A two-block net with squeeze-and-excitation on a 5x4 board.
fn se_config() -> ModelConfig {
    ModelConfig {
        value_hidden: 16,
        ..ModelConfig::small(2, 8, 5, (5, 4), 7)
    }
}

/// A one-block net with a pooled value head and a 1x1 stem on a 9x9 board.
fn pooled_config() -> ModelConfig {
    ModelConfig {
        value_channels: 1,
        se: false,
        value_pool: true,
        stem_kernel: 1,
        ..ModelConfig::small(1, 6, 3, (9, 9), 4)
    }
}

#[test]
fn python_crosscheck_with_se() {
    crosscheck(&se_config(), 11);
}

#[test]
fn python_crosscheck_without_se_with_a_pooled_value_head() {
    crosscheck(&pooled_config(), 12);
}

/// Python -> Rust: PyTorch writes random weights (every parameter and BN buffer) with
/// `safetensors.torch.save_file`; `load_weights` takes them (strict names and shapes) and
/// the Rust forward pass reproduces PyTorch's outputs on PyTorch's input.
fn python_to_rust(cfg: &ModelConfig, seed: u32) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        serde_json::to_vec(cfg).unwrap(),
    )
    .unwrap();
    let seed_arg = seed.to_string();
    crosscheck_py(&["write".as_ref(), dir.path().as_os_str(), seed_arg.as_ref()]);
    tch::manual_seed(i64::from(seed) + 1);
    let model = Model::new(cfg, Device::Cpu);
    shogi_model::load_weights(dir.path().join("py_weights.safetensors"), &model.vs, None).unwrap();
    let io: std::collections::HashMap<String, Tensor> =
        Tensor::read_safetensors(dir.path().join("py_io.safetensors"))
            .unwrap()
            .into_iter()
            .collect();
    let (policy, value) = tch::no_grad(|| model.forward_t(&io["input"], false));
    let dp = f64::try_from((&policy - &io["policy"]).abs().max()).unwrap();
    let dv = f64::try_from((&value - &io["value"]).abs().max()).unwrap();
    eprintln!("python -> rust {cfg:?}: policy max diff {dp:e}, value max diff {dv:e}");
    assert!(dp <= 1e-5, "policy differs from PyTorch by {dp}");
    assert!(dv <= 1e-5, "value differs from PyTorch by {dv}");
    assert!(f64::try_from(io["policy"].abs().max()).unwrap() > 1e-3);
    // A fresh (unloaded) Rust net does not reproduce them: the comparison means something.
    let fresh = Model::new(cfg, Device::Cpu);
    let (p2, _) = tch::no_grad(|| fresh.forward_t(&io["input"], false));
    assert!(f64::try_from((&p2 - &io["policy"]).abs().max()).unwrap() > 1e-3);
}

#[test]
fn python_checkpoint_loads_in_rust() {
    for (cfg, seed) in [(se_config(), 3), (pooled_config(), 4)] {
        python_to_rust(&cfg, seed);
    }
}
